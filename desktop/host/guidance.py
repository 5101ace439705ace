"""Contextual guidance: workspace instruction files and environment facts.

Only facts that change rarely go into the prompt (no clock, no per-request counters):
anything that changed on every request would append a section update every turn and
defeat the prompt cache this design protects.

Instruction files (``AGENTS.md``, ``CLAUDE.md``) come from a repository, so they are untrusted
input that goes into the system prompt, the session file and every request with no tool call and
no approval (design S7). They are therefore read only as what they claim to be: regular files
inside the workspace root, reached without a link that leads out of it, never from a folder above
that root (nor from the home folder or above it, nor from a system folder), each cut at a size
bound (the cut said in the text), and what was read or skipped, with the reason, is listed
(``GuidanceScan``) for ``status --json`` and the window. A link to ``/proc/self/environ`` or to
``~/.aws/credentials`` is skipped with its reason instead of putting a key into the prompt.
"""

from __future__ import annotations

import os
import platform
import stat
from pathlib import Path
from typing import NamedTuple

from desktop.host.workspace_choice import home_folder, refused_workspace

GUIDANCE_FILES = ("AGENTS.md", "CLAUDE.md")
#: At most this many bytes of one instruction file go into the prompt (the cut is said there).
MAX_GUIDANCE_BYTES = 64_000
#: At most this many bytes of instruction files in all; a file past it is skipped and listed.
MAX_GUIDANCE_TOTAL = 192_000


class GuidanceFile(NamedTuple):
    path: str
    text: str
    size: int
    """The file's size in bytes; larger than ``MAX_GUIDANCE_BYTES`` when it was cut."""

    @property
    def cut(self) -> bool:
        return self.size > MAX_GUIDANCE_BYTES


class GuidanceSkip(NamedTuple):
    path: str
    reason: str


class GuidanceScan(NamedTuple):
    """Which instruction files a workspace's prompt holds, and which were refused and why."""

    root: str
    read: tuple[GuidanceFile, ...] = ()
    skipped: tuple[GuidanceSkip, ...] = ()

    def files(self) -> list[tuple[str, str]]:
        return [(f.path, f.text) for f in self.read]

    def to_json(self) -> dict[str, object]:
        return {
            "root": self.root,
            "read": [{"path": f.path, "bytes": f.size, "cut": f.cut} for f in self.read],
            "skipped": [{"path": s.path, "reason": s.reason} for s in self.skipped],
        }


def _owned_git(folder: Path) -> bool:
    """``folder`` holds a ``.git`` the user owns (a ``.git`` someone else put in a shared
    folder such as ``/tmp`` does not make it the user's repository)."""
    try:
        info = os.stat(folder / ".git")
    except OSError:
        return False
    getuid = getattr(os, "getuid", None)
    return getuid is None or info.st_uid == getuid()


def workspace_root(workspace: Path, home: Path | None = None) -> Path:
    """The folder guidance is read from and below (design S7): the nearest enclosing git
    repository the user owns, else the workspace itself. It is never the home folder, a folder
    above it, a file system's root or a system folder, so the walk never leaves the project."""
    folder = Path(os.path.realpath(workspace))
    home = home if home is not None else home_folder()
    for candidate in (folder, *folder.parents):
        if candidate == home or candidate in home.parents or candidate.parent == candidate:
            break
        if _owned_git(candidate) and refused_workspace(candidate, home) is None:
            return candidate
    return folder


def _read_bounded(path: Path, root: Path) -> tuple[str, int] | str:
    """The file's text (cut at ``MAX_GUIDANCE_BYTES``) and size, or why it is not read."""
    real = Path(os.path.realpath(path))
    if not real.is_relative_to(root):
        return f"not read: it links to {real}, outside the workspace root {root}"
    try:
        before = os.stat(real)
    except OSError as exc:
        return f"not read: {exc.strerror or exc}"
    if not stat.S_ISREG(before.st_mode):
        return "not read: not a regular file (a folder, FIFO, device or socket)"
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(real, flags)
    except OSError as exc:
        return f"not read: {exc.strerror or exc}"
    try:
        now = os.fstat(fd)
        if not stat.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino) != (before.st_dev, before.st_ino):
            return "not read: the file changed while it was opened"
        with open(fd, "rb", closefd=False) as handle:  # reads until the limit or the end
            data = handle.read(MAX_GUIDANCE_BYTES)
    except OSError as exc:
        return f"not read: {exc.strerror or exc}"
    finally:
        os.close(fd)
    size = max(now.st_size, len(data))
    text = data.decode("utf-8", errors="replace")
    if size > MAX_GUIDANCE_BYTES:
        text += f"\n[cut: only the first {MAX_GUIDANCE_BYTES} of {size} bytes of this file are included]"
    return text, size


def scan_guidance(workspace: Path, home: Path | None = None) -> GuidanceScan:
    """Instruction files from the workspace root down to the workspace (nearest last)."""
    folder = Path(os.path.realpath(workspace))
    root = workspace_root(folder, home)  # ``folder`` or one of its parents
    chain = [folder, *folder.parents]
    chain = chain[: chain.index(root) + 1]
    read: list[GuidanceFile] = []
    skipped: list[GuidanceSkip] = []
    total = 0
    for directory in reversed(chain):
        for name in GUIDANCE_FILES:
            path = directory / name
            if not os.path.lexists(path):
                continue
            if total >= MAX_GUIDANCE_TOTAL:
                skipped.append(
                    GuidanceSkip(str(path), f"not read: {MAX_GUIDANCE_TOTAL} bytes of guidance already")
                )
                continue
            outcome = _read_bounded(path, root)
            if isinstance(outcome, str):
                skipped.append(GuidanceSkip(str(path), outcome))
                continue
            text, size = outcome
            total += min(size, MAX_GUIDANCE_BYTES)
            read.append(GuidanceFile(str(path), text, size))
    return GuidanceScan(str(root), tuple(read), tuple(skipped))


def environment_facts(workspace: Path) -> dict[str, str]:
    return {
        "Working directory": str(workspace.resolve()),
        "Platform": f"{platform.system()} {platform.release()}".strip(),
        "Shell": os.environ.get("SHELL", "/bin/sh")
        if os.name != "nt"
        else os.environ.get("COMSPEC", "cmd.exe"),
        "Git repository": "yes" if (workspace / ".git").exists() else "no",
    }
