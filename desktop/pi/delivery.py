"""Fallback delivery of mid-conversation system updates (design P3).

A route with native support sends each system update in place. Other routes get one of
two per-session fallbacks: *folded* (Pi's default: the projection rebuilds the leading
system prompt from the replayed state, which rewrites the cached prefix) or *attributed*
(each update's text becomes a labelled user message where it happened, keeping the prefix
but lowering the instruction's authority). Tool changes keep travelling as system state in
both fallbacks, so the request-level tool list stays the current one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, cast

from desktop.pi.text import render_system_update
from desktop.pi.types import Message, Model, SystemMessage

FallbackDelivery = Literal["folded", "attributed"]
FALLBACKS: tuple[FallbackDelivery, ...] = ("folded", "attributed")
ATTRIBUTION_LABEL = "[pi-desktop system update]"


def supports_native_system_updates(model: Mapping[str, Any]) -> bool:
    return bool((model.get("compat") or {}).get("supportsMidConvoSystemMessages"))


def _attributed(message: SystemMessage) -> list[Message]:
    out: list[Message] = []
    text = render_system_update({**message, "toolsAdded": [], "toolsRemoved": []})
    if text:
        out.append(
            {
                "role": "user",
                "content": [{"type": "text", "text": f"{ATTRIBUTION_LABEL}\n\n{text}"}],
                "timestamp": message.get("timestamp", 0),
            }
        )
    if message.get("toolsAdded") or message.get("toolsRemoved"):
        residue: dict[str, Any] = {"role": "system", "content": ""}
        if message.get("toolsAdded"):
            residue["toolsAdded"] = message["toolsAdded"]
        if message.get("toolsRemoved"):
            residue["toolsRemoved"] = message["toolsRemoved"]
        residue["timestamp"] = message.get("timestamp", 0)
        out.append(cast(SystemMessage, residue))
    return out


def attribute_updates(
    messages: Sequence[Message],
    *,
    start: int = 0,
    checkpoints: list[tuple[int, int]] | None = None,
) -> list[Message]:
    """Turn every later system message's text into a labelled user message in place.

    An update that lands between a tool call and its results is held until the results
    are in, so a user message never separates a call from its answer.

    At a user message nothing is held or pending, so the output before it is final: with
    ``checkpoints`` each user message's (input index, output length) is recorded there, and a
    later call may resume at such a message (``start`` is its input index) with the same
    result (design P7).
    """
    result: list[Message] = []
    held: list[Message] = []
    pending: set[str] = set()

    def flush() -> None:
        result.extend(held)
        held.clear()

    for index, message in enumerate(messages, start):
        raw = cast(Mapping[str, Any], message)
        role = raw["role"]
        if role == "system" and index > 0:
            (held if pending else result).extend(_attributed(cast(SystemMessage, message)))
            continue
        if role == "assistant":
            flush()
            pending = {b["id"] for b in raw["content"] if b.get("type") == "toolCall"}
        elif role == "toolResult":
            pending.discard(raw["toolCallId"])
            result.append(message)
            if not pending:
                flush()
            continue
        else:
            pending = set()
            flush()
            if checkpoints is not None and role == "user":
                checkpoints.append((index, len(result)))
        result.append(message)
    flush()
    return result


def deliver(messages: Sequence[Message], model: Model, fallback: FallbackDelivery) -> list[Message]:
    """The transcript as this route should receive it, before the API projection."""
    if supports_native_system_updates(model) or fallback == "folded":
        return list(messages)
    return attribute_updates(messages)
