"""From journal rows to the messages the model is given.

Rows arrive in *model order* (anchors already applied by the journal). A compaction row
restarts the context: its checkpoint (the full effective state at the cut) leads, then
the summary, then the retained tail and everything after. Rows that carry no model
message (notes, unknown types, system rows with an unknown metadata version) are skipped:
an unknown version must never put invented state in front of the model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple, cast

from desktop.host.journal.envelope import SCHEMA_VERSION as ROW_SCHEMA_VERSION
from desktop.pi.types import Message, SystemMessage, UserMessage

MODEL_SYSTEM_VERSION = 1
CHECKPOINT_VERSION = 1

COMPACTION_SUMMARY_PREFIX = (
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX = "\n</summary>"

Row = Mapping[str, Any]


def understood(row: Row) -> bool:
    """A row of this app's schema version. A newer row is kept in the file but read as unknown:
    its shape was checked against nothing this app knows (design T7, T9)."""
    version = row.get("v", 1)
    return type(version) is int and version <= ROW_SCHEMA_VERSION


def row_message(row: Row) -> Message | None:
    """The neutral message a row contributes, if any."""
    if not understood(row):
        return None
    kind = row.get("type")
    if kind in ("user", "assistant", "toolResult"):
        message = row.get("message")
        return cast(Message, message) if isinstance(message, dict) else None
    if kind == "system":
        meta = row.get("modelSystem")
        if isinstance(meta, dict) and meta.get("v") == MODEL_SYSTEM_VERSION:
            message = meta.get("message")
            if isinstance(message, dict) and message.get("role") == "system":
                return cast(SystemMessage, message)
    return None


def summary_message(summary: str, timestamp: int) -> UserMessage:
    return {
        "role": "user",
        "content": [
            {"type": "text", "text": COMPACTION_SUMMARY_PREFIX + summary + COMPACTION_SUMMARY_SUFFIX}
        ],
        "timestamp": timestamp,
    }


def checkpoint_message(row: Row) -> SystemMessage | None:
    checkpoint = row.get("checkpoint")
    if not isinstance(checkpoint, dict) or checkpoint.get("v") != CHECKPOINT_VERSION:
        return None
    message = checkpoint.get("message")
    if isinstance(message, dict) and message.get("role") == "system":
        return cast(SystemMessage, message)
    return None


def last_compaction_index(rows: Sequence[Row]) -> int | None:
    for index in range(len(rows) - 1, -1, -1):
        if rows[index].get("type") == "compaction" and understood(rows[index]):
            return index
    return None


class ContextView(NamedTuple):
    """The model's context with the rows each message came from (None for synthesized ones)."""

    messages: Sequence[Message]
    #: The row each message came from (the compaction row for the checkpoint and summary).
    sources: Sequence[Row]
    #: How many leading messages were synthesized from the last compaction (checkpoint, summary).
    prefix: int = 0
    previous_summary: str | None = None
    #: Index of the first message journaled after the last compaction. Usage figures of earlier
    #: messages (the retained tail) measured the context before it was compacted (design C1).
    fresh: int = 0


def context_view(rows: Sequence[Row]) -> ContextView:
    messages: list[Message] = []
    sources: list[Row] = []
    previous_summary: str | None = None
    compaction = last_compaction_index(rows)
    start = 0
    if compaction is not None:
        comp = rows[compaction]
        checkpoint = checkpoint_message(comp)
        if checkpoint is not None:
            messages.append(checkpoint)
            sources.append(comp)
        previous_summary = str(comp.get("summary", ""))
        messages.append(summary_message(previous_summary, int(comp.get("ts", 0))))
        sources.append(comp)
    prefix = len(messages)
    if compaction is not None:
        comp = rows[compaction]
        first_kept = comp.get("firstKeptId")
        start = next(
            (i for i in range(compaction) if rows[i].get("id") == first_kept),
            compaction,
        )
        for row in rows[start:compaction]:
            message = row_message(row)
            if message is not None:
                messages.append(message)
                sources.append(row)
        start = compaction + 1
    fresh = len(messages)
    for row in rows[start:]:
        message = row_message(row)
        if message is not None:
            messages.append(message)
            sources.append(row)
    return ContextView(messages, sources, prefix, previous_summary, fresh)
