"""Pi Desktop's own sessions for the session browser: title, workspace, route, last activity, cost.

Each ``*.jsonl`` file in the sessions folder is read once, read-only (a FIFO or a device is
skipped before it is opened, and opening never blocks), on the worker. The header gives the
workspace; the first user text the title; the last assistant row the route; every reported
usage adds to the cost; the newest row's time is the last activity. The conversation's text
(user and assistant words, bounded) comes along so the browser's search can look inside every
session without reading the files again.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import orjson

from desktop.host.foreign.browser import text_of
from desktop.host.regular_files import open_regular

#: Text kept per session for the browser's search (characters).
SEARCH_TEXT_LIMIT = 200_000


@dataclass(frozen=True, slots=True)
class DesktopSession:
    path: Path
    title: str
    workspace: str
    route: str
    last_activity: float
    cost: float
    size: int
    text: str
    problem: str | None = None


def _read(path: Path) -> bytes | None:
    try:
        with open_regular(path) as handle:  # a FIFO or a device is skipped, never read (design X24)
            return handle.read()
    except OSError:
        return None


def read_session(path: Path, data: bytes) -> DesktopSession | None:
    """The browser's entry for one file's bytes, or None when it is not a Pi Desktop session."""
    lines = data.split(b"\n")
    try:
        header = orjson.loads(lines[0]) if lines and lines[0].strip() else None
    except orjson.JSONDecodeError:
        return None
    if not isinstance(header, dict) or header.get("type") != "session":
        return None
    title = route = ""
    cost = 0.0
    last = 0
    text: list[str] = []
    size = 0
    for line in lines[1:]:
        if not line.strip():
            continue
        try:
            row = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if not isinstance(row, dict):
            continue
        ts = row.get("ts")
        if type(ts) is int and ts > last:
            last = ts
        kind = row.get("type")
        message = row.get("message")
        if kind in ("user", "assistant") and isinstance(message, dict):
            words = text_of(message.get("content"))
            if kind == "user" and not title and words.strip():
                title = words.strip().splitlines()[0][:120]
            if size < SEARCH_TEXT_LIMIT:
                text.append(words)
                size += len(words)
        if kind == "assistant" and isinstance(message, dict):
            where = row.get("route")
            if isinstance(where, dict) and where.get("provider") and where.get("model"):
                route = f"{where['provider']}/{where['model']}"
        usage = (
            message.get("usage") if kind == "assistant" and isinstance(message, dict) else row.get("usage")
        )
        price = usage.get("cost") if isinstance(usage, dict) else None
        total = price.get("total") if isinstance(price, dict) else None
        if type(total) is int or type(total) is float:
            cost += float(total)
    return DesktopSession(
        path=path,
        title=title or "(no messages yet)",
        workspace=str(header.get("cwd") or ""),
        route=route,
        last_activity=last / 1000 if last else 0.0,
        cost=cost,
        size=len(data),
        text="\n".join(text)[:SEARCH_TEXT_LIMIT].lower(),
    )


def _session_files(folder: Path) -> list[Path]:
    """``*.jsonl`` in ``folder`` and in its workspace folders (one level, links not followed)."""
    found: list[Path] = []
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return []
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            try:
                found.extend(
                    Path(inner.path)
                    for inner in sorted(os.scandir(entry.path), key=lambda e: e.name)
                    if inner.name.endswith(".jsonl")
                )
            except OSError:
                continue
        elif entry.name.endswith(".jsonl"):
            found.append(Path(entry.path))
    return found


def list_sessions(folder: Path) -> list[DesktopSession]:
    """Every Pi Desktop session under ``folder``, newest activity first."""
    found: list[DesktopSession] = []
    for path in _session_files(folder):
        data = _read(path)
        if data is None:
            continue
        entry = read_session(path, data)
        if entry is not None:
            found.append(entry)
    found.sort(key=lambda s: -s.last_activity)
    return found
