"""List the pi, Claude Code and Codex CLI sessions on this machine, by workspace (design X1).

pi keeps ``~/.pi/agent/sessions/--<cwd with / as ->--/<timestamp>_<id>.jsonl`` (the agent dir
moves with ``PI_CODING_AGENT_DIR``); Claude Code keeps ``~/.claude/projects/<cwd with / as
->/<session-id>.jsonl`` (the config dir moves with ``CLAUDE_CONFIG_DIR``). A folder name loses
information (``-`` in a path looks like ``/``), so the workspace shown is the ``cwd`` recorded
inside the file when the first lines have one, else the folder name. Codex CLI keeps
``~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`` (``CODEX_HOME`` moves it): folders by
date, so its sessions are grouped by the ``cwd`` their first line records.

Listing reads only the head of each file (``HEAD_BYTES``) and writes nothing: no cache, no
index file, no lock. The home folder and the environment are parameters so tests never read
the real ones. Every file is listed; one that cannot be read carries its problem.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import orjson

from desktop.host.foreign.detect import detect_format
from desktop.host.regular_files import open_regular

HEAD_BYTES = 64 << 10
TITLE_LIMIT = 120
SourceFormat = Literal["pi", "claude-code", "codex"]


@dataclass(frozen=True, slots=True)
class SessionEntry:
    path: Path
    format: SourceFormat
    session_id: str | None
    cwd: str | None
    #: The session's name (pi ``session_info``, Claude Code ``summary``) or its first user text.
    title: str
    modified: float
    size: int
    problem: str | None = None


@dataclass(frozen=True, slots=True)
class Workspace:
    format: SourceFormat
    #: The recorded working directory (or the folder name when no file records one).
    workspace: str
    folder: Path
    sessions: list[SessionEntry] = field(default_factory=list)

    @property
    def modified(self) -> float:
        return max((s.modified for s in self.sessions), default=0.0)


def _root(home: Path | None, env: Mapping[str, str] | None, variable: str, default: str, sub: str) -> Path:
    """``$variable/sub`` when the tool's folder is moved by ``variable``, else ``~/default/sub``."""
    moved = (os.environ if env is None else env).get(variable)
    return Path(moved).expanduser() / sub if moved else (home or Path.home()) / default / sub


def pi_sessions_root(home: Path | None = None, env: Mapping[str, str] | None = None) -> Path:
    return _root(home, env, "PI_CODING_AGENT_DIR", ".pi/agent", "sessions")


def claude_projects_root(home: Path | None = None, env: Mapping[str, str] | None = None) -> Path:
    return _root(home, env, "CLAUDE_CONFIG_DIR", ".claude", "projects")


def codex_sessions_root(home: Path | None = None, env: Mapping[str, str] | None = None) -> Path:
    return _root(home, env, "CODEX_HOME", ".codex", "sessions")


def _head_objects(path: Path) -> Iterator[dict[str, Any]]:
    with open_regular(path) as handle:  # design X24
        data = handle.read(HEAD_BYTES)
    lines = data.split(b"\n")
    if len(data) == HEAD_BYTES:
        lines.pop()  # cut mid-line
    for raw in lines:
        if not raw.strip():
            continue
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            yield obj


def _one_line(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= TITLE_LIMIT else flat[: TITLE_LIMIT - 1] + "…"


def text_of(content: object) -> str:
    """The text blocks of a message's content (or the content, when it is a string)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def _describe_pi(path: Path, stat: os.stat_result) -> SessionEntry:
    session_id = cwd = name = first = None
    for obj in _head_objects(path):
        kind = obj.get("type")
        if kind == "session" and session_id is None:
            session_id = obj.get("id") if isinstance(obj.get("id"), str) else None
            cwd = obj.get("cwd") if isinstance(obj.get("cwd"), str) else None
        elif kind == "session_info" and isinstance(obj.get("name"), str):
            name = obj["name"].strip() or None
        elif kind == "message" and first is None:
            message = obj.get("message")
            if isinstance(message, dict) and message.get("role") == "user":
                first = text_of(message.get("content")).strip() or None
    title = _one_line(name or first or "(no messages)")
    return SessionEntry(path, "pi", session_id, cwd, title, stat.st_mtime, stat.st_size)


def _is_reminder_only(text: str) -> bool:
    stripped = text.strip()
    return stripped.startswith(("<system-reminder>", "<command-", "<local-command", "Caveat:"))


def _describe_claude(path: Path, stat: os.stat_result) -> SessionEntry:
    session_id = cwd = summary = first = None
    for obj in _head_objects(path):
        kind = obj.get("type")
        if session_id is None and isinstance(obj.get("sessionId"), str):
            session_id = obj["sessionId"]
        if cwd is None and isinstance(obj.get("cwd"), str):
            cwd = obj["cwd"]
        if kind == "summary" and isinstance(obj.get("summary"), str):
            summary = summary or obj["summary"]
        elif kind in ("ai-title", "custom-title"):
            title = obj.get("aiTitle") or obj.get("customTitle") or obj.get("title")
            summary = title if isinstance(title, str) else summary
        elif kind == "user" and first is None and not obj.get("isMeta") and not obj.get("isSidechain"):
            message = obj.get("message")
            text = text_of(message.get("content")) if isinstance(message, dict) else ""
            if text.strip() and not _is_reminder_only(text):
                first = text.strip()
    title = _one_line(summary or first or "(no messages)")
    return SessionEntry(path, "claude-code", session_id or path.stem, cwd, title, stat.st_mtime, stat.st_size)


def _describe_codex(path: Path, stat: os.stat_result) -> SessionEntry:
    session_id = cwd = first = None
    for obj in _head_objects(path):
        payload = obj.get("payload")
        if obj.get("type") == "session_meta" and isinstance(payload, dict) and session_id is None:
            session_id = payload.get("id") if isinstance(payload.get("id"), str) else None
            cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else None
        elif "type" not in obj and session_id is None and isinstance(obj.get("id"), str):
            session_id = obj["id"]  # an older rollout's first line
        item = payload if obj.get("type") == "response_item" and isinstance(payload, dict) else obj
        if first is None and item.get("type") == "message" and item.get("role") == "user":
            parts = item.get("content")
            text = (
                " ".join(str(p.get("text", "")) for p in parts if isinstance(p, dict))
                if isinstance(parts, list)
                else ""
            )
            if text.strip() and not text.lstrip().startswith(
                ("<environment_context>", "<user_instructions>")
            ):
                first = text.strip()
    return SessionEntry(
        path, "codex", session_id, cwd, _one_line(first or "(no messages)"), stat.st_mtime, stat.st_size
    )


_DESCRIBE = {"pi": _describe_pi, "claude-code": _describe_claude, "codex": _describe_codex}


def _entry(path: Path, fmt: SourceFormat) -> SessionEntry:
    try:
        stat = path.stat()
    except OSError as exc:
        return SessionEntry(
            path, fmt, None, None, path.name, 0.0, 0, f"{path}: cannot be read ({exc.strerror})"
        )
    detected = detect_format(path)
    try:
        entry = _DESCRIBE[fmt](path, stat)
    except OSError as exc:
        unread = f"{path}: cannot be read ({exc.strerror})"
        return SessionEntry(path, fmt, None, None, path.name, stat.st_mtime, stat.st_size, unread)
    if detected.format != fmt:
        return replace(entry, title=path.name, problem=detected.description)
    return entry


def _group(root: Path, fmt: SourceFormat) -> list[Workspace]:
    if not root.is_dir():
        return []
    groups: list[Workspace] = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        # Claude Code 2.x sub-agent files open with their session, not as sessions of their own.
        files = [
            p
            for p in folder.iterdir()
            if p.suffix == ".jsonl"
            and p.is_file()
            and not (fmt == "claude-code" and p.name.startswith("agent-"))
        ]
        if not files:
            continue
        sessions = sorted(
            (_entry(p, fmt) for p in files), key=lambda s: (s.modified, s.path.name), reverse=True
        )
        recorded = next((s.cwd for s in sessions if s.cwd), None)
        groups.append(Workspace(fmt, recorded or folder.name, folder, sessions))
    groups.sort(key=lambda g: g.modified, reverse=True)
    return groups


def list_pi_sessions(home: Path | None = None, env: Mapping[str, str] | None = None) -> list[Workspace]:
    """pi's sessions by workspace, most recently used workspace first."""
    return _group(pi_sessions_root(home, env), "pi")


def list_claude_sessions(home: Path | None = None, env: Mapping[str, str] | None = None) -> list[Workspace]:
    """Claude Code's transcripts by project, most recently used first (sub-agent files excluded)."""
    return _group(claude_projects_root(home, env), "claude-code")


def list_codex_sessions(home: Path | None = None, env: Mapping[str, str] | None = None) -> list[Workspace]:
    """Codex CLI's rollouts grouped by their recorded folder, most recently used first."""
    root = codex_sessions_root(home, env)
    if not root.is_dir():
        return []
    sessions = [_entry(p, "codex") for p in root.rglob("rollout-*.jsonl") if p.is_file()]
    by_cwd: dict[str, list[SessionEntry]] = {}
    for entry in sessions:
        by_cwd.setdefault(entry.cwd or "(no folder recorded)", []).append(entry)
    groups = [
        Workspace("codex", cwd, root, sorted(found, key=lambda s: (s.modified, s.path.name), reverse=True))
        for cwd, found in by_cwd.items()
    ]
    groups.sort(key=lambda g: g.modified, reverse=True)
    return groups


def browse(home: Path | None = None, env: Mapping[str, str] | None = None) -> list[Workspace]:
    """The three lists, pi first: the browser's data."""
    return [*list_pi_sessions(home, env), *list_claude_sessions(home, env), *list_codex_sessions(home, env)]
