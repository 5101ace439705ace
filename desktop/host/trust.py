"""What the user has confirmed, kept in the data folder: workspaces and repository commands.

Two grants live here, both given only by the user (a dialog answered, or a command-line flag),
never by a file the app reads:

* the workspaces the user confirmed for a session whose recorded folder was new (design A10);
* the repository-defined commands (MCP servers, hooks, extensions from a project's settings)
  the user allowed to run, per repository and per exact command: the SHA-256 of the definition,
  so a changed command asks again (design A11).

The file (``<data dir>/trust.json``) is read tolerantly: a missing or unreadable file grants
nothing and is never repaired by reading. It is written only when the user grants something,
atomically and private to the user.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson

from desktop.host.paths import data_dir
from desktop.host.private_files import make_private_dirs, replace_file

TRUST_FILE = "trust.json"
#: At most this many confirmed workspaces are kept, the most recent last.
MAX_WORKSPACES = 200


class TrustStore:
    """The user's confirmations; each method reads the file afresh (another window may add)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def at(cls, override: str | os.PathLike[str] | None = None) -> TrustStore:
        return cls(data_dir(override) / TRUST_FILE)

    def _read(self) -> dict[str, Any]:
        try:
            raw = orjson.loads(self.path.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            return {}
        return raw if isinstance(raw, dict) else {}

    def _write(self, raw: dict[str, Any]) -> None:
        make_private_dirs(self.path.parent)  # design X22
        replace_file(self.path, orjson.dumps(raw, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n")

    # -- workspaces (design A10) ------------------------------------------------------------

    @staticmethod
    def _workspaces(raw: dict[str, Any]) -> list[str]:
        listed = raw.get("workspaces")
        if not isinstance(listed, list):
            return []
        return [item for item in listed if isinstance(item, str) and os.path.isabs(item)]

    def confirmed_workspaces(self) -> frozenset[Path]:
        return frozenset(Path(item) for item in self._workspaces(self._read()))

    def confirm_workspace(self, folder: Path) -> None:
        """Remember ``folder`` (written only when it is new; the oldest go past the limit)."""
        raw = self._read()
        listed = self._workspaces(raw)
        if str(folder) in listed:
            return
        raw["workspaces"] = [*listed, str(folder)][-MAX_WORKSPACES:]
        self._write(raw)

    # -- repository commands (design A11) ---------------------------------------------------

    def _projects(self, raw: dict[str, Any]) -> dict[str, list[str]]:
        projects = raw.get("projectCommands")
        if not isinstance(projects, dict):
            return {}
        return {
            str(root): [d for d in digests if isinstance(d, str)]
            for root, digests in projects.items()
            if isinstance(digests, list)
        }

    def consented(self, root: Path, digest: str) -> bool:
        return digest in self._projects(self._read()).get(str(root), [])

    def consent(self, root: Path, digests: list[str]) -> None:
        raw = self._read()
        projects = self._projects(raw)
        projects[str(root)] = sorted({*projects.get(str(root), []), *digests})
        raw["projectCommands"] = projects
        self._write(raw)
