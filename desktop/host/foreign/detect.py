"""Recognize a session file by its content, never by its name (design X1).

Only the first few lines are read (at most ``HEAD_LINES`` lines and ``HEAD_BYTES`` bytes), so
File → Open and the session browser can classify any file cheaply. The answer is plain data:
one of the three supported formats, or ``unknown`` with a sentence saying what the file looks
like and which formats are supported, ready to show as the one line a user reads (D6).

* Pi Desktop: a ``{"type": "session", "v": 1, "app": "pi-desktop", ...}`` header.
* pi-coding-agent: a ``{"type": "session", "id": ..., "version": 1|2|3}`` header (v1 has no
  version); pi skips unparseable lines before its header, and so does this check.
* Codex CLI: ``{"timestamp", "type": "session_meta" | "response_item" | ..., "payload"}``
  lines, or an older rollout's bare ``{"id", "timestamp", "instructions"}`` first line.
* Claude Code: entries carrying ``sessionId`` with ``uuid``/``parentUuid`` links, or the
  metadata lines it writes first (``summary`` with ``leafUuid``, ``file-history-snapshot``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import orjson

from desktop.host.regular_files import open_regular

Format = Literal["desktop", "pi", "claude-code", "codex", "unknown"]

HEAD_LINES = 5
HEAD_BYTES = 8 << 20
PI_VERSIONS = (1, 2, 3)
SUPPORTED = (
    "supported formats: Pi Desktop sessions, pi-coding-agent sessions (format v1 to v3), "
    "Claude Code transcripts (~/.claude/projects/<project>/<session>.jsonl) and Codex CLI sessions "
    "(~/.codex/sessions/**/rollout-*.jsonl)"
)
_CLAUDE_TYPES = frozenset({"user", "assistant", "system", "attachment", "progress"})
_CODEX_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
_CLAUDE_META = frozenset({"summary", "file-history-snapshot", "queue-operation", "ai-title", "custom-title"})


@dataclass(frozen=True, slots=True)
class Detected:
    format: Format
    #: One sentence: what the file is ("a pi-coding-agent session, format v3") or, for
    #: ``unknown``, what it looks like followed by the supported formats.
    description: str
    #: The format's own version when it has one (pi: 1 to 3; Pi Desktop: the header's ``v``).
    version: int | None = None

    @property
    def known(self) -> bool:
        return self.format != "unknown"

    def __str__(self) -> str:
        return self.description


def _unknown(path: Path, looks_like: str) -> Detected:
    return Detected("unknown", f"{path}: {looks_like}; it is not a session this app can open ({SUPPORTED})")


def read_head(path: Path) -> tuple[list[bytes], bool]:
    """The first ``HEAD_LINES`` non-blank lines (read-only); True if the byte limit cut a line."""
    lines: list[bytes] = []
    pending = b""
    read = 0
    with open_regular(path) as handle:  # a FIFO or a device is refused, never read (design X24)
        while len(lines) < HEAD_LINES and read < HEAD_BYTES:
            chunk = handle.read(min(1 << 16, HEAD_BYTES - read))
            if not chunk:
                if pending.strip():
                    lines.append(pending)
                return lines, False
            read += len(chunk)
            pending += chunk
            *complete, pending = pending.split(b"\n")
            lines.extend(line for line in complete if line.strip())
    return lines[:HEAD_LINES], len(lines) < HEAD_LINES and bool(pending)


def _preview(raw: bytes, limit: int = 60) -> str:
    text = raw[:limit].decode("utf-8", errors="replace")
    return repr(text) + ("…" if len(raw) > limit else "")


def classify(path: Path, head: Sequence[bytes], cut: bool = False) -> Detected:
    """Classify the first lines of ``path`` (pure; ``detect_format`` reads them)."""
    if not head:
        return _unknown(path, "the file is empty" if not cut else "the first line is longer than 8 MiB")
    parsed: list[tuple[int, dict[str, Any]]] = []
    first_problem: str | None = None
    for number, raw in enumerate(head, 1):
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError:
            if b"\x00" in raw[:4096]:
                return _unknown(path, "it looks like a binary file")
            first_problem = first_problem or f"line {number} is not JSON (starts with {_preview(raw)})"
            continue
        if isinstance(obj, dict):
            parsed.append((number, obj))
        else:
            first_problem = first_problem or f"line {number} is JSON but not an object ({_preview(raw)})"
    if not parsed:
        if head[0].strip() in (b"{", b"[") or (len(head) == 1 and head[0].lstrip().startswith((b"{", b"["))):
            return _unknown(path, "it looks like a JSON document, not JSON Lines (one object per line)")
        return _unknown(path, f"it looks like text, not JSON Lines: {first_problem}")
    for _number, obj in parsed:
        found = _classify_object(path, obj)
        if found is not None:
            return found
    number, obj = parsed[0]
    keys = ", ".join(sorted(str(k) for k in obj)[:8])
    kind = obj.get("type")
    what = f"type {kind!r}" if isinstance(kind, str) else "no 'type' field"
    return _unknown(path, f"it is JSON Lines whose line {number} is an object with {what} (keys: {keys})")


def _classify_object(path: Path, obj: dict[str, Any]) -> Detected | None:
    raw_kind = obj.get("type")
    kind = raw_kind if isinstance(raw_kind, str) else None  # any JSON value may stand here
    if kind == "session":
        if obj.get("app") == "pi-desktop" or ("v" in obj and "version" not in obj):
            version = obj.get("v")
            return Detected(
                "desktop",
                f"{path}: a Pi Desktop session",
                version if isinstance(version, int) else None,
            )
        if isinstance(obj.get("id"), str):
            version = obj.get("version", 1)
            if not isinstance(version, int) or isinstance(version, bool):
                return _unknown(path, f"it has a pi session header with a non-numeric version {version!r}")
            if version not in PI_VERSIONS:
                newest = PI_VERSIONS[-1]
                return Detected(
                    "pi",
                    f"{path}: a pi-coding-agent session in format v{version}, newer than this app reads "
                    f"(v1 to v{newest}); it opens with entries it does not know shown as such",
                    version,
                )
            return Detected("pi", f"{path}: a pi-coding-agent session, format v{version}", version)
        return None
    if isinstance(obj.get("sessionId"), str) and (kind in _CLAUDE_TYPES or "uuid" in obj):
        return Detected("claude-code", f"{path}: a Claude Code transcript")
    if kind in _CODEX_TYPES and isinstance(obj.get("payload"), dict) and "timestamp" in obj:
        return Detected("codex", f"{path}: a Codex CLI session")
    if raw_kind is None and isinstance(obj.get("id"), str) and "timestamp" in obj and "instructions" in obj:
        return Detected("codex", f"{path}: a Codex CLI session (an older rollout)")
    if (kind == "summary" and isinstance(obj.get("leafUuid"), str)) or (
        kind in _CLAUDE_META and ("messageId" in obj or "snapshot" in obj or "sessionId" in obj)
    ):
        return Detected("claude-code", f"{path}: a Claude Code transcript")
    return None


def detect_format(path: str | os.PathLike[str]) -> Detected:
    """What ``path`` holds, from its first few lines; never raises, never writes."""
    where = Path(path)
    try:
        if where.is_dir():
            return _unknown(where, "it is a folder")
        head, cut = read_head(where)
    except OSError as exc:
        return Detected("unknown", f"{where}: cannot be read ({exc.strerror or exc})")
    return classify(where, head, cut)
