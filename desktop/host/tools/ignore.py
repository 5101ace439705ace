"""Ignore files with git's semantics and a workspace walker for ``grep`` and ``find``.

pi shells out to ripgrep and fd; Desktop walks in Python so the tools work on every platform
without extra binaries. Matching is git's ignore rules (escapes such as ``\\*``, ``\\#``,
``\\!`` and an escaped trailing space, ``**``, negation, directory-only and anchored patterns;
no ``{a,b}`` alternatives, which git does not have), so a file the user's git ignores is the
file the tools skip; ``tests/tools/test_ignore_git.py`` checks it against ``git check-ignore``.
Patterns are matched by ``wildmatch.Wildmatch``, never by a backtracking regex, because the
ignore files come from the repository (design X20). Nested ``.gitignore``, ``.ignore`` and ``.fdignore``
files apply below their directory, deeper and later files winning as in ripgrep. The walker
always skips ``.git``, prunes ignored directories (so, as in git, nothing under an ignored
directory is re-included), and never follows a symlink out of the workspace.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from desktop.host.regular_files import open_regular
from desktop.host.tools.types import ToolFailure
from desktop.host.tools.wildmatch import Wildmatch

IGNORE_FILES = (".gitignore", ".ignore", ".fdignore")
ALWAYS_SKIPPED = frozenset({".git"})
#: How many directory entries one search may look at before it stops and says so: a search
#: of a whole disk or a generated tree ends with a clear line, not after hours (design X20).
MAX_ENTRIES = 1_000_000
#: How much of one ignore file is read (real ones are a few kilobytes; each rule is tried on
#: every path below it, so a repository's megabytes of rules would slow every search).
MAX_IGNORE_BYTES = 1 << 20


@dataclass(frozen=True)
class _Rule:
    matcher: Wildmatch
    ignores: bool
    """True for an ordinary pattern, False for a ``!`` negation."""
    dir_only: bool


def _escaped(text: str, index: int) -> bool:
    """Whether ``text[index]`` is preceded by an odd number of backslashes."""
    before = text[:index]
    return (len(before) - len(before.rstrip("\\"))) % 2 == 1


def _compile(line: str) -> _Rule | None:
    """One ignore-file line as a rule, or None for blanks, comments and lone ``!``.

    A match counts only when it is the path itself (the walker prunes an ignored directory),
    and a directory-only pattern (``name/``) is the same pattern without the slash, applied
    to directories only, as git does.
    """
    if not line or line.startswith("#"):
        return None
    ignores = not line.startswith("!")
    text = line if ignores else line[1:]
    while text.endswith(" ") and not _escaped(text, len(text) - 1):
        text = text[:-1]
    dir_only = text.endswith("/")
    if dir_only:
        text = text[:-1]
        if text.endswith(" ") and not _escaped(text, len(text) - 1):
            text = text[:-1] + "\\ "  # the space before the slash is part of the name
    if not text.strip("/"):
        return None
    return _Rule(Wildmatch(text), ignores, dir_only)


class IgnoreRules:
    """The rules of one ignore file, relative to the directory (``base``) that holds it."""

    def __init__(self, base: str, lines: list[str]) -> None:
        self.base = base
        self.rules = [rule for rule in map(_compile, lines) if rule is not None]

    def verdict(self, rel: str, is_dir: bool) -> bool | None:
        """True = ignored, False = re-included, None = no rule applies (last match wins)."""
        if self.base:
            if not rel.startswith(self.base + "/"):
                return None
            rel = rel[len(self.base) + 1 :]
        result: bool | None = None
        for rule in self.rules:
            if (is_dir or not rule.dir_only) and rule.matcher.matches(rel):
                result = rule.ignores
        return result


def _load_rules(directory: Path, base: str) -> list[IgnoreRules]:
    """The ignore files of ``directory``: regular files only (a FIFO or a device named
    ``.gitignore`` is skipped, never read), their first ``MAX_IGNORE_BYTES`` at most."""
    found: list[IgnoreRules] = []
    for name in IGNORE_FILES:
        path = directory / name
        if os.path.lexists(path):
            try:
                with open_regular(path) as handle:
                    data = handle.read(MAX_IGNORE_BYTES)
            except OSError:
                continue
            found.append(IgnoreRules(base, data.decode("utf-8", errors="replace").splitlines()))
    return found


def walk(
    root: Path, *, include_dirs: bool = False, cancel: threading.Event | None = None
) -> Iterator[tuple[str, Path, bool]]:
    """Yield (relative POSIX path, absolute path, is_dir) under ``root``, ignores applied, sorted.

    Every entry looked at, ignored or not, checks ``cancel`` and counts against
    ``MAX_ENTRIES``, so Stop ends a search of a tree whose files are all ignored too; either
    ends the walk with a ``ToolFailure`` (design X20)."""
    stack: list[tuple[Path, str, list[IgnoreRules]]] = [(root, "", _load_rules(root, ""))]
    seen = 0
    while stack:
        directory, rel_dir, rules = stack.pop()
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            continue
        children: list[tuple[Path, str, list[IgnoreRules]]] = []
        for entry in entries:
            if cancel is not None and cancel.is_set():
                raise ToolFailure("Operation aborted")
            seen += 1
            if seen > MAX_ENTRIES:
                raise ToolFailure(
                    f"Search stopped after {MAX_ENTRIES} entries under {root}; search a narrower path"
                )
            if entry.name in ALWAYS_SKIPPED:
                continue
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_ignored(rules, rel, is_dir):
                continue
            if is_dir:
                if include_dirs:
                    yield rel, Path(entry.path), True
                children.append((Path(entry.path), rel, rules + _load_rules(Path(entry.path), rel)))
            elif not entry.is_symlink() or _link_inside(Path(entry.path), root):
                yield rel, Path(entry.path), False
        stack.extend(reversed(children))


def is_ignored(rules: list[IgnoreRules], rel: str, is_dir: bool) -> bool:
    """The verdict of the last rule set (deepest, then latest file) that has one."""
    verdicts = (rule_set.verdict(rel, is_dir) for rule_set in reversed(rules))
    return next((verdict for verdict in verdicts if verdict is not None), False)


def _link_inside(path: Path, root: Path) -> bool:
    return Path(os.path.realpath(path)).is_relative_to(os.path.realpath(root))
