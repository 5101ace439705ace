"""Effective system state and the one update that brings it to the desired state.

The effective state is never stored on its own: it is replayed from the transcript
(``desktop.pi.transcript``), so what the inspector shows, what the runtime diffs against
and what a projection folds are the same thing. An update names only what changed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple, cast

from desktop.pi.transcript import current_system_message, tool_state_changes
from desktop.pi.types import SystemMessage, Tool


class EffectiveState(NamedTuple):
    content: str
    sections: dict[str, str]
    tools: list[Tool]


def effective_state(messages: Sequence[Mapping[str, Any]]) -> EffectiveState:
    replayed = current_system_message(messages)
    if replayed is None:
        return EffectiveState("", {}, [])
    content = replayed["content"]
    return EffectiveState(
        content=content if isinstance(content, str) else "",
        sections=dict(cast(dict[str, str], replayed.get("sections") or {})),
        tools=list(replayed.get("toolsAdded") or []),
    )


def section_changes(current: Mapping[str, str], desired: Mapping[str, str]) -> dict[str, str | None]:
    """Changed or new sections in desired order, then tombstones for the ones that went away."""
    changes: dict[str, str | None] = {
        name: text for name, text in desired.items() if current.get(name) != text
    }
    changes.update({name: None for name in current if name not in desired})
    return changes


def system_update(
    state: EffectiveState,
    desired_sections: Mapping[str, str],
    desired_tools: Sequence[Tool],
    *,
    timestamp: int,
) -> SystemMessage | None:
    """The system message that moves ``state`` to the desired state, or None if nothing changed."""
    sections = section_changes(state.sections, desired_sections)
    tools = tool_state_changes(state.tools, desired_tools)
    if not sections and tools.empty:
        return None
    message: dict[str, Any] = {"role": "system", "content": ""}
    if sections:
        message["sections"] = sections
    if tools.tools_added:
        message["toolsAdded"] = tools.tools_added
    if tools.tools_removed:
        message["toolsRemoved"] = tools.tools_removed
    message["timestamp"] = timestamp
    return cast(SystemMessage, message)
