"""Ignore matching is bounded (design X20) and still git's.

The matcher is compared with ``pathspec`` (the library the walker used before, whose regexes
backtrack) on generated ordinary patterns and paths; ``test_ignore_git.py`` compares the
walker with ``git check-ignore`` itself. The hostile line from a repository's ``.gitignore``
must not keep a search busy, and a search must stop when asked or when its budget is spent.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

from desktop.host.tools import ignore
from desktop.host.tools.executor import HostExecutor, ToolCallRequest
from desktop.host.tools.find import TOOL_SPEC as FIND
from desktop.host.tools.globs import SearchGlob, expand_braces
from desktop.host.tools.grep import TOOL_SPEC as GREP
from desktop.host.tools.ignore import IgnoreRules
from desktop.host.tools.types import ToolFailure
from tests.tools.conftest import text_of, tool_in_child

TOKENS = ["a", "b", ".", "*", "**", "?", "/", "[ab]", "[!a]", "[a-b]", "\\*", "x"]
COMPONENTS = ["a", "b", "ab", "ba", "aab", ".a", "x", "*", "bab"]


def _pathspec_verdict(pattern: str, rel: str) -> bool | None:
    """The walker's verdict as it was with pathspec's regexes (a match of the path itself),
    with pathspec's one difference from git mended: a negated bracket never matches ``/``."""
    compiled = GitIgnoreSpecPattern(pattern)
    if compiled.include is None or compiled.regex is None:
        return None
    found = re.search(compiled.regex.pattern.replace("[^", "[^/"), rel)
    if found is None or found.groupdict().get("ps_d") is not None:
        return None
    return bool(compiled.include)


@st.composite
def ordinary_patterns(draw: st.DrawFn) -> str:
    text = "".join(draw(st.lists(st.sampled_from(TOKENS), min_size=1, max_size=7)))
    if draw(st.booleans()):
        text = "!" + text
    return text


def _ordinary(pattern: str) -> bool:
    body = pattern.lstrip("!")
    return bool(body.strip("/")) and "//" not in body and not body.endswith("/")


@settings(max_examples=1500, deadline=None)
@given(
    pattern=ordinary_patterns(),
    path=st.lists(st.sampled_from(COMPONENTS), min_size=1, max_size=4).map("/".join),
)
def test_the_matcher_agrees_with_pathspec_on_ordinary_patterns(pattern: str, path: str) -> None:
    if not _ordinary(pattern):
        return
    # pathspec reads a segment of three or more stars as single stars; git as ``**``.
    assume(all(len(part) < 3 or part.strip("*") for part in pattern.lstrip("!").split("/")))
    expected = _pathspec_verdict(pattern, path)
    assert IgnoreRules("", [pattern]).verdict(path, is_dir=False) is expected, (pattern, path)


HOSTILE = "*a*a*a*a*a*a*a*a*a*a*a*b"


def test_a_hostile_gitignore_line_does_not_hang_find(tmp_path: Path) -> None:
    """Before: pathspec's regex backtracks for hours on this name (the test's process is killed
    after five minutes, far beyond the milliseconds the search takes)."""
    (tmp_path / ".gitignore").write_text(HOSTILE + "\n")
    (tmp_path / ("a" * 200)).write_text("x")
    (tmp_path / "kept.txt").write_text("x")
    listed = tool_in_child("find", tmp_path, "*", timeout=300)
    assert listed.splitlines() == sorted([".gitignore", "a" * 200, "kept.txt"])


def test_the_hostile_line_still_ignores_what_it_names() -> None:
    rules = IgnoreRules("", [HOSTILE])
    assert rules.verdict("a" * 11 + "b", is_dir=False) is True
    assert rules.verdict("a" * 5000, is_dir=False) is None
    assert rules.verdict("a" * 10 + "b", is_dir=False) is None


def _tree_of_ignored_files(root: Path, count: int) -> None:
    (root / ".gitignore").write_text("*.tmp\n.gitignore\n")
    for index in range(count):
        (root / f"{index}.tmp").write_text("NEEDLE\n")


def test_stop_ends_a_search_whose_files_are_all_ignored(host: HostExecutor, workspace: Path) -> None:
    """Before: the walk checked the cancel flag only when it yielded a file, so a tree of
    ignored files ran to its end and answered "No files found"."""
    _tree_of_ignored_files(workspace, 50)
    (workspace / "hello.txt").unlink()
    cancel = threading.Event()
    cancel.set()
    for spec, args in ((FIND, {"pattern": "*.py"}), (GREP, {"pattern": "NEEDLE"})):
        outcome = host.run(spec, ToolCallRequest("c1", spec.name, args), cancel=cancel)
        assert outcome.is_error and text_of(outcome) == "Operation aborted", spec.name


def test_a_search_past_its_budget_stops_with_a_clear_line(
    host: HostExecutor, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree_of_ignored_files(workspace, 30)
    monkeypatch.setattr(ignore, "MAX_ENTRIES", 10)
    outcome = host.run(FIND, ToolCallRequest("c1", "find", {"pattern": "*.py"}))
    assert outcome.is_error
    assert text_of(outcome).startswith("Search stopped after 10 entries under ")


# -- search globs (find's pattern, grep's glob) ---------------------------------------------


def _regex_glob(pattern: str) -> str:
    """The translation the search tools used before (backtracking), kept as the oracle."""
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
                    body = "^/" + body[1:]
                out.append(f"[{body}]")
                i = j
        elif c == "{":
            j = pattern.find("}", i + 1)
            if j < 0:
                out.append(re.escape(c))
            else:
                options = pattern[i + 1 : j].split(",")
                out.append("(?:" + "|".join(_regex_glob(opt) for opt in options) + ")")
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _regex_matches(glob: str, rel: str) -> bool:
    body = _regex_glob(glob.lstrip("/"))
    return re.match(f"^{body}$" if "/" in glob else f"^(?:.*/)?{body}$", rel) is not None


GLOB_TOKENS = ["a", "b", ".", "*", "?", "/", "**/", "[ab]", "[!a]", "{a,b}", "{x,*b}", "x"]


@st.composite
def ordinary_globs(draw: st.DrawFn) -> str:
    text = "".join(draw(st.lists(st.sampled_from(GLOB_TOKENS), min_size=1, max_size=6)))
    if text.endswith("/") or "//" in text:
        text = text.rstrip("/") + "a"
    return text.replace("//", "/a/")


@settings(max_examples=1500, deadline=None)
@given(
    glob=ordinary_globs(),
    path=st.lists(st.sampled_from(COMPONENTS), min_size=1, max_size=4).map("/".join),
)
def test_search_globs_agree_with_the_regex_translation(glob: str, path: str) -> None:
    """Ordinary globs: ``**`` only as a whole segment (inside one, ripgrep reads it as ``*``)."""
    segments = [part for alternative in expand_braces(glob) for part in alternative.split("/")]
    assume(all(part == "**" or "**" not in part for part in segments))
    assert SearchGlob(glob).matches(path) is _regex_matches(glob, path), (glob, path)


def test_brace_alternatives_nest_and_are_capped() -> None:
    assert expand_braces("a{b,c{d,e}}f") == ["abf", "acdf", "acef"]
    assert expand_braces("{a") == ["{a"]
    with pytest.raises(ToolFailure, match="more than 256"):
        expand_braces("{a,b}" * 9)


def test_a_hostile_find_pattern_does_not_hang(tmp_path: Path) -> None:
    """Before: the pattern became ``[^/]*a[^/]*a...b`` and backtracked for hours on the name."""
    (tmp_path / ("a" * 200)).write_text("x")
    assert tool_in_child("find", tmp_path, HOSTILE, timeout=300) == "No files found matching pattern"
