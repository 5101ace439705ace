"""What a journal row looks like in the timeline: its kind and a one-line summary.

Pure functions over raw row dicts (no Qt), so the timeline model can call them lazily from
``data()`` for the few rows on screen, and tests can check them without a display. The kind
decides the colour and badge; notes split by level so an error stands out from an info note.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, Final

from desktop.pi.text import content_preview, content_text, one_line

#: Kind codes, small ints so the timeline can keep one byte per row for filtering.
USER: Final = 0
ASSISTANT: Final = 1
TOOL: Final = 2
SYSTEM: Final = 3
COMPACTION: Final = 4
NOTE: Final = 5
ERROR: Final = 6
OTHER: Final = 7
STREAMING: Final = 8

KIND_NAMES: Final[dict[int, str]] = {
    USER: "user",
    ASSISTANT: "assistant",
    TOOL: "tool",
    SYSTEM: "system",
    COMPACTION: "compaction",
    NOTE: "note",
    ERROR: "error",
    OTHER: "other",
    STREAMING: "streaming",
}
#: The kinds a user can filter on, in toolbar order (errors travel with notes).
FILTER_KINDS: Final[tuple[int, ...]] = (USER, ASSISTANT, TOOL, SYSTEM, COMPACTION, NOTE, OTHER)

#: pi and Claude Code row kinds with no Desktop row type (design X1): each keeps its own code
#: and badge, and filters with the family it belongs to (what the model is told outside the
#: conversation hides with the system rows; summaries go with compactions; bookkeeping with notes).
FOREIGN_KINDS: Final[dict[str, tuple[int, str, int]]] = {
    "compaction_summary": (9, "summary", COMPACTION),
    "branch_summary": (10, "branch sum.", COMPACTION),
    "label": (11, "label", NOTE),
    "model_change": (12, "model", NOTE),
    "thinking_level": (13, "thinking", NOTE),
    "custom_message": (14, "ext. msg", OTHER),
    "custom": (15, "ext. state", SYSTEM),
    "session_info": (16, "info", NOTE),
    "usage": (17, "usage", SYSTEM),
    "context_edit": (18, "edit", NOTE),
    "bash": (19, "bash", TOOL),
    "reminder": (20, "reminder", SYSTEM),
    "meta": (21, "meta", SYSTEM),
    "attachment": (22, "attach", SYSTEM),
    "other": (23, "unknown", SYSTEM),
    "note": (NOTE, "note", NOTE),
    "error": (ERROR, "error", NOTE),
}
for _code, _name, _bucket in FOREIGN_KINDS.values():
    KIND_NAMES.setdefault(_code, _name)
_FOREIGN_BUCKETS: Final[dict[int, int]] = {code: bucket for code, _n, bucket in FOREIGN_KINDS.values()}
#: Kind codes hidden with the system rows (the "show hidden rows" toggle brings them back).
HIDDEN_CODES: Final[tuple[int, ...]] = (
    SYSTEM,
    *sorted({c for c, b in _FOREIGN_BUCKETS.items() if b == SYSTEM}),
)


def row_kind(row: Mapping[str, Any]) -> int:
    kind = row.get("type")
    if kind == "foreign":
        return FOREIGN_KINDS.get(str(row.get("foreign")), FOREIGN_KINDS["other"])[0]
    if kind == "user":
        return USER
    if kind == "assistant":
        message = row.get("message")
        if isinstance(message, Mapping) and message.get("stopReason") in ("error", "aborted"):
            return ERROR
        return ASSISTANT
    if kind == "toolResult":
        return TOOL
    if kind == "system":
        return SYSTEM
    if kind == "compaction":
        return COMPACTION
    if kind == "note":
        return ERROR if row.get("level") == "error" else NOTE
    if kind == "streaming":
        return STREAMING
    return OTHER


def filter_kind(kind: int) -> int:
    """The filter bucket of a kind: errors and streaming rows follow their family."""
    if kind == ERROR:
        return NOTE
    if kind == STREAMING:
        return ASSISTANT
    return _FOREIGN_BUCKETS.get(kind, kind)


def _message_text(message: Any) -> str:
    return content_preview(message.get("content")) if isinstance(message, Mapping) else ""


def system_summary(row: Mapping[str, Any]) -> str:
    label = row.get("label")
    meta = row.get("modelSystem")
    if not isinstance(meta, Mapping):
        return f"system row without modelSystem metadata{': ' + label if label else ''}"
    if meta.get("v") != 1:
        return f"system row with unknown metadata version {meta.get('v')!r} (ignored for the model)"
    found = meta.get("message")
    message: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    sections = message.get("sections") or {}
    parts = []
    if label:
        parts.append(str(label))
    elif sections:
        names = list(sections)
        parts.append("sections: " + ", ".join(names[:5]) + (" …" if len(names) > 5 else ""))
    added = [t.get("name", "?") for t in message.get("toolsAdded") or ()]
    removed = [t.get("name", "?") for t in message.get("toolsRemoved") or ()]
    if added and not label:
        parts.append(f"+{len(added)} tools")
    if removed and not label:
        parts.append(f"−{len(removed)} tools")
    text = content_text(message.get("content") or "")
    if text and not parts:
        parts.append(text)
    anchored = " (anchored)" if row.get("before") else ""
    return ("; ".join(parts) or "no changes") + anchored


def row_summary(row: Mapping[str, Any]) -> str:
    """One line that says what the row is about."""
    kind = row.get("type")
    if "foreign" in row and isinstance(row.get("summary"), str):
        return one_line(row["summary"])  # pi / Claude Code: summarized on the worker
    if kind in ("user", "assistant", "streaming"):
        message = row.get("message")
        text = _message_text(message)
        if kind == "assistant" and isinstance(message, Mapping):
            stop = message.get("stopReason")
            if stop in ("error", "aborted"):
                why = message.get("errorMessage") or stop
                text = f"[{stop}] {why}" + (f" — {text}" if text else "")
        return one_line(text) or "(empty)"
    if kind == "toolResult":
        found = row.get("message")
        result: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
        name = result.get("toolName", "?")
        prefix = f"{name} ✗ " if result.get("isError") else f"{name}: "
        return one_line(prefix + _message_text(result))
    if kind == "system":
        return one_line(system_summary(row))
    if kind == "compaction":
        tokens = row.get("tokensBefore")
        after = row.get("tokensAfter")
        count = row.get("rowsSummarized")
        reason = row.get("reason", "")
        if isinstance(count, int) and isinstance(tokens, int) and isinstance(after, int):
            head = f"compacted {count} rows: ~{tokens:,} → ~{after:,} tokens"
        else:  # rows written before the figures were recorded
            head = f"compacted {tokens:,} tokens" if isinstance(tokens, int) else "compacted"
        if reason:
            head += f" ({reason})"
        return one_line(f"{head}: {row.get('summary', '')}")
    if kind == "note":
        return one_line(str(row.get("text", "")))
    return one_line(f"unknown row type {kind!r} (kept unchanged)")


def row_time(row: Mapping[str, Any]) -> str:
    ts = row.get("ts")
    if not isinstance(ts, int | float):
        return ""
    try:
        return time.strftime("%H:%M:%S", time.localtime(ts / 1000))
    except (OverflowError, OSError, ValueError):  # a time no calendar holds: shown without one
        return ""


def row_usage(row: Mapping[str, Any]) -> Mapping[str, Any] | None:
    if row.get("type") != "assistant":
        return None
    message = row.get("message")
    usage = message.get("usage") if isinstance(message, Mapping) else None
    return usage if isinstance(usage, Mapping) else None


def row_search_text(row: Mapping[str, Any]) -> str:
    """Everything a search should match, lower-cased (summary plus full text, tool names)."""
    kind = row.get("type")
    parts = [str(kind)]
    if kind in ("user", "assistant", "toolResult", "streaming"):
        message = row.get("message")
        parts.append(_message_text(message))
        if isinstance(message, Mapping) and message.get("toolName"):
            parts.append(str(message["toolName"]))
    elif kind == "system":
        parts.append(system_summary(row))
        meta = row.get("modelSystem")
        message = meta.get("message") if isinstance(meta, Mapping) else None
        if isinstance(message, Mapping):
            for name, value in (message.get("sections") or {}).items():
                parts.append(name)
                if value:
                    parts.append(str(value))
    else:
        parts.append(row_summary(row))
    if "foreign" in row:
        parts += [str(row.get("foreign")), str(row.get("text") or ""), str(row.get("tag") or "")]
    return " ".join(parts).lower()
