"""A small .gitignore matcher and a workspace walker for ``grep`` and ``find``.

pi shells out to ripgrep and fd; Desktop walks in Python so the tools work on every
platform without extra binaries. The walker honours nested ``.gitignore``/``.ignore``
files (the common subset: globs, ``**``, ``!`` negation, trailing ``/`` for directories,
leading or inner ``/`` anchoring), always skips ``.git``, and never follows a symlink, so
a link inside the workspace cannot lead the search outside it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

IGNORE_FILES = (".gitignore", ".ignore", ".fdignore")
ALWAYS_SKIPPED = frozenset({".git"})


def glob_to_regex(pattern: str) -> str:
    """Translate a glob (``*``, ``?``, ``**``, ``[...]``, ``{a,b}``) to a regex over POSIX paths."""
    out: list[str] = []
    i = 0
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                i += 2
                if i < n and pattern[i] == "/":
                    i += 1
                    out.append("(?:.*/)?")
                else:
                    out.append(".*")
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = pattern.find("]", i + 1)
            if j < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : j].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = j
        elif c == "{":
            j = pattern.find("}", i + 1)
            if j < 0:
                out.append(re.escape(c))
            else:
                options = pattern[i + 1 : j].split(",")
                out.append("(?:" + "|".join(glob_to_regex(opt) for opt in options) + ")")
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


@dataclass(frozen=True)
class _Rule:
    regex: re.Pattern[str]
    negated: bool
    dir_only: bool


class IgnoreRules:
    """The rules of one ignore file, relative to the directory that holds it."""

    def __init__(self, base: str, lines: list[str]) -> None:
        self.base = base
        self.rules: list[_Rule] = []
        for raw in lines:
            line = raw.rstrip("\n").rstrip("\r")
            if not line.strip() or line.startswith("#"):
                continue
            negated = line.startswith("!")
            if negated or line.startswith("\\!") or line.startswith("\\#"):
                line = line[1:]
            line = line.rstrip(" ")
            dir_only = line.endswith("/")
            line = line.rstrip("/")
            if not line:
                continue
            anchored = "/" in line
            line = line.lstrip("/")
            body = glob_to_regex(line)
            regex = f"^{body}(?:/.*)?$" if anchored else f"^(?:.*/)?{body}(?:/.*)?$"
            self.rules.append(_Rule(re.compile(regex), negated, dir_only))

    def verdict(self, rel: str, is_dir: bool) -> bool | None:
        """True = ignored, False = re-included, None = no rule applies (last match wins)."""
        if self.base:
            if not rel.startswith(self.base + "/"):
                return None
            rel = rel[len(self.base) + 1 :]
        result: bool | None = None
        for rule in self.rules:
            # Ignored directories are pruned by the walker, so a directory-only rule
            # only ever needs to match the directory entry itself.
            if (rule.dir_only and not is_dir) or not rule.regex.match(rel):
                continue
            result = not rule.negated
        return result


def _load_rules(directory: Path, base: str) -> list[IgnoreRules]:
    found: list[IgnoreRules] = []
    for name in IGNORE_FILES:
        path = directory / name
        if path.is_file():
            try:
                found.append(
                    IgnoreRules(base, path.read_text(encoding="utf-8", errors="replace").splitlines())
                )
            except OSError:
                continue
    return found


def walk(
    root: Path, *, include_dirs: bool = False, cancel: object | None = None
) -> Iterator[tuple[str, Path, bool]]:
    """Yield (relative POSIX path, absolute path, is_dir) under ``root``, ignores applied, sorted."""
    stack: list[tuple[Path, str, list[IgnoreRules]]] = [(root, "", _load_rules(root, ""))]
    while stack:
        directory, rel_dir, rules = stack.pop()
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            continue
        children: list[tuple[Path, str, list[IgnoreRules]]] = []
        for entry in entries:
            if entry.name in ALWAYS_SKIPPED:
                continue
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            ignored: bool | None = None
            for rule_set in rules:
                verdict = rule_set.verdict(rel, is_dir)
                if verdict is not None:
                    ignored = verdict
            if ignored:
                continue
            if is_dir:
                if include_dirs:
                    yield rel, Path(entry.path), True
                children.append((Path(entry.path), rel, rules + _load_rules(Path(entry.path), rel)))
            elif not entry.is_symlink() or _link_inside(Path(entry.path), root):
                yield rel, Path(entry.path), False
        stack.extend(reversed(children))


def _link_inside(path: Path, root: Path) -> bool:
    real = Path(os.path.realpath(path))
    real_root = Path(os.path.realpath(root))
    return real == real_root or real_root in real.parents
