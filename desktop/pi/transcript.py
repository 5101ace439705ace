"""Replay of chronological system state (pi-ai ``utils/transcript.ts``).

The transcript keeps every system message where it happened. Routes that accept system
messages mid-conversation send them in place; every other route gets the replayed state
*folded* into one leading system message. Replay is the single source of "current prompt"
and "current tools", so the inspector, the runtime and the projections can never disagree.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple, cast

import orjson

from desktop.pi.text import content_text
from desktop.pi.types import Context, Message, SystemMessage, Tool, ToolReference

TranscriptMessages = Sequence[Mapping[str, Any]]


def _systems(messages: Iterable[Mapping[str, Any]]) -> list[SystemMessage]:
    # A comprehension scans a 50k-message transcript about twice as fast as a generator.
    return [cast(SystemMessage, message) for message in messages if message.get("role") == "system"]


def initial_system_message(system_prompt: str | None, tools: Sequence[Tool] | None) -> SystemMessage | None:
    """The leading system message for a prompt and tool set, or None when both are empty."""
    has_prompt = bool(system_prompt)
    has_tools = bool(tools)
    if not has_prompt and not has_tools:
        return None
    message: SystemMessage = {"role": "system", "content": system_prompt or ""}  # type: ignore[typeddict-item]
    if has_tools:
        message["toolsAdded"] = list(tools or [])
    message["timestamp"] = 0
    return message


def normalize_context(context: Context) -> list[Message]:
    """Fold ``systemPrompt``/``tools`` shorthand into a leading system message."""
    head = initial_system_message(context.get("systemPrompt"), context.get("tools"))
    messages = list(context["messages"])
    return [head, *messages] if head else messages


def leading_system_message(messages: TranscriptMessages) -> SystemMessage | None:
    if messages and messages[0].get("role") == "system":
        return cast(SystemMessage, messages[0])
    return None


def current_tools(messages: TranscriptMessages) -> list[Tool]:
    """The tools available after applying every addition and removal in order."""
    return list(_tool_state(_systems(messages)).current)


def current_system_message(messages: TranscriptMessages) -> SystemMessage | None:
    """Replay every system message into one: content appended, sections patched by name."""
    content: list[str] = []
    sections: dict[str, str] = {}
    timestamp: int | None = None
    for message in _systems(messages):
        if timestamp is None:
            timestamp = message.get("timestamp")
        text = content_text(message["content"])
        if text:
            content.append(text)
        for name, value in (message.get("sections") or {}).items():
            if value is None:
                sections.pop(name, None)
            else:
                sections[name] = value
    # The state's own list, shared by the folded messages of one state (read-only, design X11):
    # the next projection finds the state by it without reading its tools again.
    tools = _tool_state(_systems(messages)).current
    if timestamp is None and not tools:
        return None
    result: dict[str, Any] = {"role": "system", "content": "\n\n".join(content)}
    if sections:
        result["sections"] = sections
    if tools:
        result["toolsAdded"] = tools
    result["timestamp"] = timestamp if timestamp is not None else 0
    return cast(SystemMessage, result)


def collapse_system_messages(messages: Sequence[Message]) -> list[Message]:
    """Fold for routes without mid-conversation system messages: replayed state leads."""
    head = current_system_message(messages)
    rest: list[Message] = [m for m in messages if m["role"] != "system"]
    return [head, *rest] if head else rest


def resolve_transcript(messages: Sequence[Message], supports_mid_convo_system: bool | None) -> list[Message]:
    return list(messages) if supports_mid_convo_system else collapse_system_messages(messages)


def tool_declaration(tool: Mapping[str, Any]) -> Tool:
    """Only what the model sees of a tool: executable and display-only fields dropped."""
    declaration: dict[str, Any] = {
        "name": tool["name"],
        "description": tool["description"],
        "parameters": orjson.loads(orjson.dumps(tool["parameters"])),
    }
    if tool.get("constrainedSampling") is not None:
        declaration["constrainedSampling"] = tool["constrainedSampling"]
    return cast(Tool, declaration)


def declaration_bytes(tool: Mapping[str, Any]) -> bytes:
    """Canonical bytes of a declaration, for exact comparison and identity hashing."""
    return orjson.dumps(tool_declaration(tool))


def declarations_equal(left: Mapping[str, Any], right: Mapping[str, Any]) -> bool:
    # Equal mappings declare the same tool; only differing ones need the canonical bytes.
    return left == right or declaration_bytes(left) == declaration_bytes(right)


class ToolStateChanges(NamedTuple):
    tools_added: list[Tool]
    tools_removed: list[ToolReference]

    @property
    def empty(self) -> bool:
        return not self.tools_added and not self.tools_removed


def tool_state_changes(previous: Sequence[Tool], current: Sequence[Tool]) -> ToolStateChanges:
    """Diff two complete tool states; a changed definition is a removal plus an addition."""
    before = {tool["name"]: tool for tool in previous}
    after = {tool["name"]: tool for tool in current}
    added = [
        tool_declaration(tool)
        for tool in current
        if tool["name"] not in before or not declarations_equal(before[tool["name"]], tool)
    ]
    removed: list[ToolReference] = [
        {"name": tool["name"]}
        for tool in previous
        if tool["name"] not in after or not declarations_equal(tool, after[tool["name"]])
    ]
    return ToolStateChanges(added, removed)


def declared_tools(messages: TranscriptMessages) -> list[Tool]:
    """Every definition the transcript ever declared, latest per name, first-declaration order."""
    return list(_tool_state(_systems(messages)).declared)


def declared_tool_tuple(messages: TranscriptMessages) -> tuple[Tool, ...]:
    """``declared_tools`` as the tool state's own tuple: the same object while the tool
    declarations are the same, so what is derived from it can be kept by it (design X13)."""
    return _tool_state(_systems(messages)).declared


def has_non_additive_tool_changes(messages: TranscriptMessages) -> bool:
    """A removal or a same-name redeclaration: history an addition-only transport cannot replay."""
    return _tool_state(_systems(messages)).non_additive


class _ToolState(NamedTuple):
    """What the system messages' tool changes add up to (``current_tools``, ``declared_tools``,
    ``has_non_additive_tool_changes``)."""

    current: list[Tool]
    declared: tuple[Tool, ...]
    non_additive: bool


#: Tool states by the identities of the changes that make them, each holding those objects so
#: their identities name nothing else meanwhile (design X11, X13). Every projection reads the state
#: of its whole transcript, and a long session's tool list is the same objects request after
#: request: walking its hundreds of tools for every request was a tenth of a what-if pass.
_STATES: dict[tuple[int, ...], tuple[tuple[object, ...], _ToolState]] = {}
#: States kept before the memo starts again (a session has a few tool lists, a test many).
_STATES_LIMIT = 256
_REMOVE, _ADD, _LISTS = 0, 1, 2


def _tool_state(systems: Sequence[SystemMessage]) -> _ToolState:
    """The tool state after ``systems``: found by the identities of their change lists (the
    same lists request after request), else by the changes they hold in the order they apply
    (each message's removals, then its additions: equal sequences of the same tool objects
    give the same state, whichever lists or messages carry them)."""
    lists: list[object] = []
    for message in systems:
        removed = message.get("toolsRemoved")
        added = message.get("toolsAdded")
        if removed or added:
            lists += (removed, added)
    by_lists = (_LISTS, *map(id, lists))
    hit = _STATES.get(by_lists)
    if hit is not None:
        return hit[1]
    held: list[object] = []
    key: list[int] = []
    for message in systems:
        removed = message.get("toolsRemoved")
        if removed:
            key.append(_REMOVE)
            key.extend(map(id, removed))
            held.extend(removed)
        added = message.get("toolsAdded")
        if added:
            key.append(_ADD)
            key.extend(map(id, added))
            held.extend(added)
    slot = tuple(key)
    hit = _STATES.get(slot)
    if hit is None:
        hit = (tuple(held), _replay_tools(systems))
        _STATES[slot] = hit
    if len(_STATES) >= _STATES_LIMIT:
        _STATES.clear()
    _STATES[by_lists] = (tuple(lists), hit[1])
    return hit[1]


def _replay_tools(systems: Sequence[SystemMessage]) -> _ToolState:
    tools: dict[str, Tool] = {}
    definitions: dict[str, Tool] = {}
    non_additive = False
    for message in systems:
        for ref in message.get("toolsRemoved") or ():
            non_additive = True
            tools.pop(ref["name"], None)
        for tool in message.get("toolsAdded") or ():
            if tool["name"] in definitions:
                non_additive = True
            tools[tool["name"]] = tool
            definitions[tool["name"]] = tool
    return _ToolState(list(tools.values()), tuple(definitions.values()), non_additive)


class TranscriptTools(NamedTuple):
    #: Tools for the request-level field.
    request_tools: list[Tool]
    #: Whether later system messages carry their own additions in place.
    anchors_additions: bool


def resolve_transcript_tools(messages: TranscriptMessages, supports_tool_additions: bool) -> TranscriptTools:
    """Split declarations between the request-level list and in-place additions."""
    anchors = supports_tool_additions and not has_non_additive_tool_changes(messages)
    if anchors:
        head = leading_system_message(messages)
        return TranscriptTools(list(head.get("toolsAdded") or []) if head else [], True)
    return TranscriptTools(current_tools(messages), False)
