"""Open any foreign session file by its content (design X1).

``open_foreign`` reads the file once, read-only, and hands it to the reader of the format its
first lines show. A file that is not a foreign session raises ``ForeignOpenError`` whose
message is the one line to show (what the file looks like, which formats are supported);
a malformed line inside a session is a diagnostic naming its line, and the rest opens.
"""

from __future__ import annotations

import os
from pathlib import Path

import orjson

from desktop.host.foreign.detect import Detected, detect_format
from desktop.host.foreign.lines import JsonLines, read_json_lines
from desktop.pi.projection import paused_gc
from desktop.session.foreign.base import ForeignSession
from desktop.session.foreign.claude import ClaudeSession
from desktop.session.foreign.codex import CodexSession
from desktop.session.foreign.pi import PiSession


class ForeignOpenError(ValueError):
    """The file is not a pi or Claude Code session; ``str()`` is the line to show."""

    def __init__(self, message: str, detected: Detected | None = None) -> None:
        super().__init__(message)
        self.detected = detected


def open_foreign(path: str | os.PathLike[str]) -> ForeignSession:
    """Read ``path`` (never writing it) as the pi, Claude Code or Codex session its content shows."""
    where = Path(path)
    detected = detect_format(where)
    if detected.format == "desktop":
        raise ForeignOpenError(
            f"{where}: a Pi Desktop session; open it as a session, not as a foreign one", detected
        )
    if detected.format == "unknown":
        raise ForeignOpenError(detected.description, detected)
    with paused_gc():
        try:
            read = read_json_lines(where)
        except OSError as exc:
            raise ForeignOpenError(f"{where}: cannot be read ({exc.strerror or exc})", detected) from exc
        if detected.format == "pi":
            return PiSession.from_lines(read)
        if detected.format == "codex":
            return CodexSession.from_lines(read)
        agents = []
        for agent in sub_agent_files(where, read):
            try:
                agents.append(read_json_lines(agent))
            except OSError:
                continue  # gone or unreadable: the main file still opens
        return ClaudeSession.from_lines(read, agents)


def sub_agent_files(path: Path, read: JsonLines) -> list[Path]:
    """Claude Code 2.x sub-agent transcripts of the session at ``path``: ``<session>/subagents/
    agent-<id>.jsonl``, or ``agent-<id>.jsonl`` beside it naming its ``sessionId`` (earlier 2.x)."""
    if path.stem.startswith("agent-"):
        return []  # a sub-agent file opened on its own
    folder = path.parent / path.stem / "subagents"
    found = sorted(folder.glob("agent-*.jsonl")) if folder.is_dir() else []
    session_id = next((o["sessionId"] for o in read.objects if isinstance(o.get("sessionId"), str)), None)
    if session_id is not None:
        for sibling in sorted(path.parent.glob("agent-*.jsonl")):
            if _first_session_id(sibling) == session_id:
                found.append(sibling)
    return [p for p in found if p.is_file()]


def _first_session_id(path: Path) -> str | None:
    """The ``sessionId`` on the first line of ``path`` (read-only; only the first line)."""
    try:
        with open(path, "rb") as handle:
            first = handle.readline(1 << 20)
        value = orjson.loads(first)
    except (OSError, orjson.JSONDecodeError):
        return None
    found = value.get("sessionId") if isinstance(value, dict) else None
    return found if isinstance(found, str) else None
