"""Where sessions live and how to find them (design T1).

Sessions sit under ``paths.sessions_dir()`` (platformdirs, redirected by ``--data-dir`` or
``PI_DESKTOP_DATA_DIR``), one folder per working directory as pi-coding-agent does, so listing the
sessions of a project reads one folder. Listing reads only the first line of each file.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

import orjson

from desktop.host import paths
from desktop.host.journal.envelope import SCHEMA_VERSION, new_row_id
from desktop.host.journal.writer import JournalWriter

SESSION_SUFFIX = ".jsonl"
_HEADER_LIMIT = 1 << 20


@dataclass(frozen=True, slots=True)
class SessionInfo:
    path: Path
    id: str | None
    cwd: str | None
    app_version: str | None
    problem: str | None
    """Why the file cannot be opened as a session (names the file and line), else ``None``."""


def folder_name_for(cwd: str | os.PathLike[str]) -> str:
    """A readable, collision-resistant folder name for a working directory."""
    text = str(cwd).strip("/\\")
    return "--" + re.sub(r"[/\\:]", "-", text) + "--"


class SessionStore:
    def __init__(self, root: str | os.PathLike[str] | None = None, *, data_dir: str | None = None) -> None:
        self.root = Path(root) if root is not None else paths.sessions_dir(data_dir)

    def folder_for(self, cwd: str | os.PathLike[str]) -> Path:
        return self.root / folder_name_for(cwd)

    def create(
        self, cwd: str | os.PathLike[str], *, app_version: str, session_id: str | None = None
    ) -> JournalWriter:
        session_id = session_id or new_row_id()
        stamp = time.strftime("%Y-%m-%dT%H-%M-%S", time.gmtime())
        path = self.folder_for(cwd) / f"{stamp}_{session_id}{SESSION_SUFFIX}"
        return JournalWriter.create(path, cwd=cwd, app_version=app_version, session_id=session_id)

    def session_files(self, cwd: str | os.PathLike[str] | None = None) -> list[Path]:
        """The session files of ``cwd`` (of every folder when None), newest first."""
        folders = [self.folder_for(cwd)] if cwd is not None else _subfolders(self.root)
        found = [
            entry
            for folder in folders
            if folder.is_dir()
            for entry in folder.iterdir()
            if entry.name.endswith(SESSION_SUFFIX) and not entry.name.startswith(".")
        ]
        return sorted(found, key=lambda p: p.name, reverse=True)


def _subfolders(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []


def describe(path: Path) -> SessionInfo:
    """Read just the header line of a session file."""
    try:
        with open(path, "rb") as handle:
            first = handle.readline(_HEADER_LIMIT)
    except OSError as exc:
        return SessionInfo(path, None, None, None, f"{path}: cannot be read ({exc.strerror or exc})")
    problem = None
    header: object = None
    if not first:
        problem = f"{path}: line 1: the file is empty; a session file starts with a header line"
    elif not first.endswith(b"\n"):
        problem = f"{path}: line 1: the header line is incomplete or longer than {_HEADER_LIMIT:,} bytes"
    else:
        try:
            header = orjson.loads(first)
        except orjson.JSONDecodeError as exc:
            problem = f"{path}: line 1: not valid JSON ({exc.msg}); this is not a session file"
    if problem is None and not (isinstance(header, dict) and header.get("type") == "session"):
        problem = f"{path}: line 1: not a session header"
    if problem is not None or not isinstance(header, dict):
        return SessionInfo(path, None, None, None, problem)
    version = header.get("v")
    if isinstance(version, int) and version > SCHEMA_VERSION:
        problem = f"{path}: written by a newer Pi Desktop (format v{version}); it opens read-only"

    def text(key: str) -> str | None:
        value = header.get(key)
        return value if isinstance(value, str) else None

    return SessionInfo(path, text("id"), text("cwd"), text("appVersion"), problem)
