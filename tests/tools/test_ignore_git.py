"""The workspace walker skips exactly what git's own ``git check-ignore`` says is ignored.

Each case is a directory of a real git repository with its own ``.gitignore`` (and sometimes
a nested one) and real files; git is the oracle, the walker (``desktop.host.tools.ignore``,
used by the grep and find tools) is the code under test. ``git check-ignore`` reports a path
under an ignored directory as ignored, and the walker prunes that directory: both agree that
such a path is not searched.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from desktop.host.tools.ignore import walk

#: (lines of the case's .gitignore, paths created under the case directory; "d/" = empty dir,
#: "sub/.gitignore=LINES" = a nested ignore file with ``;``-separated lines).
CASES: list[tuple[list[str], list[str]]] = [
    (["*.log"], ["a.log", "sub/b.log", "a.txt"]),
    (["*.log", "!keep.log"], ["x.log", "keep.log", "sub/keep.log"]),
    (["build/"], ["build/out.o", "src/build", "other/build/x"]),
    (["/build"], ["build/out.o", "sub/build/x"]),
    (["doc/*.txt"], ["doc/a.txt", "doc/sub/b.txt", "x/doc/a.txt"]),
    (["doc/**/*.txt"], ["doc/a.txt", "doc/sub/b.txt", "doc/sub/deep/c.txt", "doc/a.md"]),
    (["**/logs"], ["logs/a", "x/logs/b", "x/y/logs", "logsx/c"]),
    (["**/logs/debug.log"], ["logs/debug.log", "x/logs/debug.log", "logs/other.log"]),
    (["abc/**"], ["abc/x", "abc/y/z", "abcd/x"]),
    (["a/**/b"], ["a/b", "a/x/b", "a/x/y/b", "a/x/bb"]),
    (["{a,b}.txt"], ["{a,b}.txt", "a.txt", "b.txt"]),
    (["\\*.txt"], ["*.txt", "a.txt"]),
    (["\\#notes"], ["#notes", "notes"]),
    (["#comment"], ["#comment", "comment"]),
    (["\\!bang"], ["!bang", "bang"]),
    (["trail\\ "], ["trail ", "trail"]),
    (["plain   "], ["plain", "plain   "]),
    (["sp ace"], ["sp ace", "space"]),
    (["file?.txt"], ["file1.txt", "file12.txt", "file.txt"]),
    (["file[0-9].txt"], ["file1.txt", "filea.txt"]),
    (["file[!0-9].txt"], ["file1.txt", "filea.txt"]),
    (["file[ab].txt"], ["filea.txt", "filec.txt"]),
    (["*"], ["a", "b/c", ".hidden"]),
    (["*", "!*/", "!*.py"], ["a.py", "b.txt", "sub/c.py", "sub/d.txt"]),
    (["/*", "!/keep/"], ["drop.txt", "keep/a.txt", "other/b.txt"]),
    (["*.o", "!important.o", "important.o"], ["important.o", "other.o"]),
    (["dir/", "!dir/keep"], ["dir/keep", "dir/other"]),
    (["dir/*", "!dir/keep"], ["dir/keep", "dir/other"]),
    (["name"], ["name", "sub/name", "name2", "deep/name/x"]),
    (["name/"], ["name", "sub/name/x"]),
    (["sub/name"], ["sub/name", "x/sub/name"]),
    (["/sub/name"], ["sub/name", "x/sub/name"]),
    (["*.tmp", "sub/.gitignore=!keep.tmp"], ["a.tmp", "sub/keep.tmp", "sub/drop.tmp"]),
    (["", "   ", "*.bak"], ["a.bak", "b"]),
    (["**"], ["a", "b/c"]),
    (["a/**/"], ["a/x/y", "a/z"]),
    (["*.[oa]"], ["x.o", "x.a", "x.c"]),
    (["\\[x\\]"], ["[x]", "x"]),
    (["a\\b"], ["ab", "a\\b"]),
    (["*/foo"], ["foo", "x/foo", "x/y/foo"]),
    (["foo/*/bar"], ["foo/x/bar", "foo/x/y/bar", "foo/bar"]),
    (["**/", "!**/"], ["a/b", "c"]),
    (["sub/.gitignore=*.md"], ["top.md", "sub/inner.md", "sub/deep/x.md"]),
    (["*.md", "sub/.gitignore=!*.md"], ["top.md", "sub/inner.md"]),
    (["deep/"], ["a/deep/b/c.txt", "deep.txt"]),
    (["!notignored"], ["notignored", "other"]),
    (["odd /"], ["odd /x", "odd/x"]),
    (["*.txt", "!/a.txt"], ["a.txt", "sub/a.txt", "b.txt"]),
    # Where pathspec's regexes and git differ (the matcher follows git):
    (["[[:digit:]]x"], ["1x", "ax"]),
    (["[\\]]x"], ["]x", "bx"]),
    (["[z-a]x", "[!z-a]y"], ["bx", "zx", "by"]),
    (["a\\"], ["a", "b"]),
    (["!"], ["x"]),
    (["*a*a*a*b"], ["aaab", "aab", "xaxaxaxb", "ab"]),
    (["x/***/y", "//z"], ["x/a/b/y", "x/y", "z", "a/z"]),
    (["a[b"], ["a[b", "ab"]),
]


def _git() -> str:
    path = shutil.which("git")
    if path is None:
        pytest.skip("git is not installed")
    return path


def _build(root: Path) -> list[str]:
    """Create every case under ``root``; return every created path, relative, POSIX."""
    created: list[str] = []
    for index, (lines, paths) in enumerate(CASES):
        case = root / f"c{index:02d}"
        case.mkdir()
        nested = [line for line in lines if line.startswith("sub/.gitignore=")]
        patterns = [line for line in lines if line not in nested]
        (case / ".gitignore").write_text("".join(f"{line}\n" for line in patterns), encoding="utf-8")
        created.append(f"c{index:02d}/.gitignore")
        for spec in nested:
            (case / "sub").mkdir(exist_ok=True)
            body = spec.split("=", 1)[1].replace(";", "\n") + "\n"
            (case / "sub" / ".gitignore").write_text(body, encoding="utf-8")
            created.append(f"c{index:02d}/sub/.gitignore")
        for rel in paths:
            target = case / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if rel.endswith("/"):
                target.mkdir(exist_ok=True)
            else:
                target.write_text(rel, encoding="utf-8")
            created.append(f"c{index:02d}/{rel.rstrip('/')}")
    # Every directory on the way counts too (a directory-only pattern needs a directory).
    dirs = {str(Path(p).parent.as_posix()) for p in created} - {"."}
    for d in list(dirs):
        parts = d.split("/")
        dirs.update("/".join(parts[: i + 1]) for i in range(len(parts)))
    return sorted(set(created) | dirs)


def _git_ignored(root: Path, paths: list[str]) -> set[str]:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(root.parent),
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    subprocess.run([_git(), "init", "-q", str(root)], check=True, env=env, timeout=60)
    done = subprocess.run(
        [_git(), "-C", str(root), "check-ignore", "--no-index", "-z", "--stdin"],
        input=b"".join(p.encode() + b"\0" for p in paths),
        capture_output=True,
        env=env,
        timeout=120,
    )
    assert done.returncode in (0, 1), done.stderr.decode()
    return {p for p in done.stdout.decode().split("\0") if p}


def test_walker_agrees_with_git_check_ignore(tmp_path: Path) -> None:
    assert len(CASES) >= 40
    root = tmp_path / "repo"
    root.mkdir()
    paths = _build(root)
    ignored_by_git = _git_ignored(root, paths)
    walked = {rel for rel, _path, _is_dir in walk(root, include_dirs=True)}
    # The oracle is not trivial: both verdicts occur, in nearly every case.
    assert ignored_by_git and walked
    disagreements = sorted(
        (p, "git ignores" if p in ignored_by_git else "git keeps")
        for p in paths
        if (p in ignored_by_git) == (p in walked)
    )
    assert disagreements == [], "\n".join(map(str, disagreements))


#: Pieces of generated patterns and path components for the randomized comparison with git.
PATTERN_PIECES = [
    "a",
    "b",
    "x",
    ".",
    " ",
    "*",
    "**",
    "***",
    "?",
    "/",
    "**/",
    "/**",
    "[ab]",
    "[!a]",
    "[^b]",
    "[a-b]",
    "[b-a]",
    "[a-]",
    "[]a]",
    "[[:alpha:]]",
    "\\*",
    "\\a",
    "\\ ",
    "#",
    "\\#",
    "!",
]
NAMES = ["a", "b", "ab", "ba", "aab", "x", "xa", "bb", "]a", "a ", "#a", "!a", "*"]


def test_generated_patterns_agree_with_git_check_ignore(tmp_path: Path) -> None:
    """Three hundred generated lines (a fixed seed), each in its own directory with real files."""
    import random

    chance = random.Random(11)
    root = tmp_path / "repo"
    root.mkdir()
    patterns: list[str] = []
    for index in range(300):
        pattern = "".join(chance.choice(PATTERN_PIECES) for _ in range(chance.randint(1, 6)))
        negated = chance.random() < 0.2
        case = root / f"g{index:03d}"
        case.mkdir()
        (case / ".gitignore").write_text(("*\n!" if negated else "") + pattern + "\n", encoding="utf-8")
        patterns.append(pattern)
        for _ in range(6):
            target = case.joinpath(*(chance.choice(NAMES) for _ in range(chance.randint(1, 3))))
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                if not target.exists():
                    target.write_text("x", encoding="utf-8")
            except OSError:
                continue  # a name already taken by a file or a folder
    paths = sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))
    ignored_by_git = _git_ignored(root, paths)
    walked = {rel for rel, _path, _is_dir in walk(root, include_dirs=True)}
    assert len(ignored_by_git) > 500 and len(walked) > 500
    disagreements = [
        (patterns[int(p.split("/")[0][1:])], p, "git ignores" if p in ignored_by_git else "git keeps")
        for p in paths
        if not p.startswith(".git") and (p in ignored_by_git) == (p in walked)
    ]
    assert disagreements == [], "\n".join(map(str, disagreements[:20]))
