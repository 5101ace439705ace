"""The shapes pi and Claude Code entries must have to be used, checked where they are read (design T9, T10, X1).

Another program wrote these files, and a hand edit, a crash or a newer version can leave any JSON
value in any field. The format modules and everything after them (pi's context rebuilding, the
projections for every API, prices, the window's rows) index into the entries, so each entry is
checked once, on open, for the fields they read: a pi message against the neutral message shapes
of the one row schema (``desktop.host.journal.rows``), pi's own roles and entry types, and Claude
Code's entries and Anthropic content blocks, all as msgspec types. An entry that does not fit is
set aside with its line and field (``set_aside``): it stays in the tree as a row that says so, so
the entries after it keep their parent, but nothing reads its content.

Unknown entry types, roles and blocks and extra fields are allowed (a newer writer); only what is
read is checked. Optional fields may be absent or ``null``. A field whose kind picks its shape but
may also be a kind nothing here reads (a pi message's role, a Claude block's type) is an object
to msgspec and checked by its kind here (``_by_kind``): msgspec's tagged unions refuse unknown tags.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal, NotRequired, TypeAlias, TypedDict

from msgspec import Meta

from desktop.host.journal.rows import (
    AnyBlock,
    AssistantMessage,
    Number,
    Object,
    SystemMessage,
    ToolResultMessage,
    Usage,
    UserBlock,
    UserMessage,
)
from desktop.host.schema import SchemaError, ShapeError, check, shape_error

#: The type of an entry set aside: shown as an entry of unknown type, never read further.
SET_ASIDE = "set-aside"

#: Token counts beyond JavaScript's exact integers are damage; the usage shown sums four of them,
#: and the sum must still pass a Qt model (64 bits).
_MAX_TOKENS = 2**53

OptionalText: TypeAlias = str | None


class _Typed(TypedDict):
    """An entry, message or block of a kind nothing here checks: its kind must still be text."""

    type: str


class _Role(TypedDict):
    role: str


def _by_kind(value: Any, key: str, shapes: Mapping[str, Any], other: Any, where: str) -> None:
    """Check ``value`` (an object, at ``where``) as the shape its ``key`` names, or ``other``."""
    kind = value.get(key)
    check(value, shapes.get(kind, other) if type(kind) is str else other, where)


# --- pi -------------------------------------------------------------------------------------------

UserContent = str | list[UserBlock]


class _PiCustom(TypedDict):
    role: str
    content: NotRequired[UserContent | None]
    customType: NotRequired[OptionalText]
    timestamp: NotRequired[int | None]


class _PiBash(TypedDict):
    role: str
    command: NotRequired[OptionalText]
    output: NotRequired[OptionalText]
    exitCode: NotRequired[Number | None]
    cancelled: NotRequired[bool | None]
    truncated: NotRequired[bool | None]
    excludeFromContext: NotRequired[bool | None]
    fullOutputPath: NotRequired[OptionalText]
    timestamp: NotRequired[int | None]


class _PiSummary(TypedDict):
    role: str
    summary: NotRequired[OptionalText]
    timestamp: NotRequired[int | None]


#: pi's roles; other roles are dropped by pi's convertToLlm: nothing reads them.
_PI_ROLES: dict[str, Any] = {
    "user": UserMessage,
    "assistant": AssistantMessage,
    "toolResult": ToolResultMessage,
    "system": SystemMessage,
    "custom": _PiCustom,
    "hookMessage": _PiCustom,  # v2's name of ``custom``, migrated on read
    "bashExecution": _PiBash,
    "branchSummary": _PiSummary,
    "compactionSummary": _PiSummary,
}
#: pi gives a message without content an empty one (``entry_messages``); so is it checked.
_EMPTY_CONTENT: dict[str, object] = {"user": [], "assistant": [], "toolResult": [], "system": ""}


def _pi_message(message: dict[str, Any], where: str) -> None:
    role = message.get("role")
    if type(role) is str and role in _EMPTY_CONTENT and message.get("content") is None:
        message = {**message, "content": _EMPTY_CONTENT[role]}
    _by_kind(message, "role", _PI_ROLES, _Role, where)


class _PiEntry(TypedDict):
    type: str
    parentId: NotRequired[OptionalText]


class _PiMessageEntry(_PiEntry):
    message: Object  # checked by its role (``_pi_message``)


class _PiCompaction(_PiEntry):
    summary: NotRequired[OptionalText]
    firstKeptEntryId: NotRequired[OptionalText]
    tokensBefore: NotRequired[Number | None]
    systemMessage: NotRequired[Any]  # {} or absent before pi kept one; else a system message
    usage: NotRequired[Usage | None]


class _PiBranchSummary(_PiEntry):
    summary: NotRequired[OptionalText]
    fromId: NotRequired[OptionalText]


class _PiCustomMessage(_PiEntry):
    content: NotRequired[UserContent | None]
    customType: NotRequired[OptionalText]


class _Replacement(TypedDict):
    """A context edit's replacement content replaces any message's: a block of any neutral kind."""

    content: str | list[AnyBlock]  # required, else the message loses it


class _PiContextEdit(_PiEntry):
    targetId: str
    replacement: NotRequired[_Replacement | None]


class _PiModelChange(_PiEntry):
    provider: NotRequired[OptionalText]
    modelId: NotRequired[OptionalText]


class _PiThinkingLevel(_PiEntry):
    thinkingLevel: NotRequired[OptionalText]


class _PiLabel(_PiEntry):
    targetId: str
    label: NotRequired[OptionalText]


class _PiSessionInfo(_PiEntry):
    name: NotRequired[OptionalText]


class _PiUsage(_PiEntry):
    usage: NotRequired[Usage | None]
    provider: NotRequired[OptionalText]
    model: NotRequired[OptionalText]
    kind: NotRequired[OptionalText]


class _PiCustomEntry(_PiEntry):
    customType: NotRequired[OptionalText]


_PI_TYPES: dict[str, Any] = {
    "message": _PiMessageEntry,
    "compaction": _PiCompaction,
    "branch_summary": _PiBranchSummary,
    "custom_message": _PiCustomMessage,
    "context_edit": _PiContextEdit,
    "model_change": _PiModelChange,
    "thinking_level_change": _PiThinkingLevel,
    "label": _PiLabel,
    "session_info": _PiSessionInfo,
    "usage": _PiUsage,
    "custom": _PiCustomEntry,
}


def _pi_entry(entry: dict[str, Any]) -> None:
    _by_kind(entry, "type", _PI_TYPES, _PiEntry, "")
    kind = entry["type"]
    if kind == "message":
        _pi_message(entry["message"], ".message")
    elif kind == "compaction" and entry.get("systemMessage"):
        check(entry["systemMessage"], SystemMessage, ".systemMessage")


def pi_entry_problem(entry: Mapping[str, Any]) -> ShapeError | None:
    """Why a pi entry (migrated to v3, with a string ``id``) cannot be used, or None."""
    return _problem(_pi_entry, entry)


# --- Claude Code ------------------------------------------------------------------------------------

Tokens: TypeAlias = (
    Annotated[int, Meta(ge=-_MAX_TOKENS, le=_MAX_TOKENS)]
    | Annotated[float, Meta(ge=-_MAX_TOKENS, le=_MAX_TOKENS)]
    | None
)
#: Content: text, or a list of blocks, each checked by its type (``_claude_blocks``).
ClaudeContent = str | list[Object] | None


class _ClaudeText(TypedDict):
    type: Literal["text"]
    text: str


class _ClaudeThinking(TypedDict):
    type: Literal["thinking"]
    thinking: NotRequired[OptionalText]
    signature: NotRequired[OptionalText]


class _ClaudeRedacted(TypedDict):
    type: Literal["redacted_thinking"]
    data: NotRequired[OptionalText]


class _ClaudeToolUse(TypedDict):
    type: Literal["tool_use"]
    id: NotRequired[OptionalText]
    name: str
    input: NotRequired[Object | None]


class _ClaudeToolResult(TypedDict):
    type: Literal["tool_result"]
    tool_use_id: NotRequired[OptionalText]
    content: NotRequired[ClaudeContent]
    is_error: NotRequired[bool | None]


class _ImageSource(TypedDict):
    data: NotRequired[OptionalText]
    media_type: NotRequired[OptionalText]


class _ClaudeImage(TypedDict):
    type: Literal["image"]
    source: NotRequired[Any]  # only a source object is read (``_claude_blocks``)


#: Other blocks (server tools) are shown as their JSON.
_CLAUDE_BLOCKS: dict[str, Any] = {
    "text": _ClaudeText,
    "thinking": _ClaudeThinking,
    "redacted_thinking": _ClaudeRedacted,
    "tool_use": _ClaudeToolUse,
    "tool_result": _ClaudeToolResult,
    "image": _ClaudeImage,
}


def _claude_blocks(content: Any, where: str) -> None:
    """Check each block of ``content`` (already checked as ``ClaudeContent``) by its type."""
    if type(content) is not list:
        return
    for index, block in enumerate(content):
        at = f"{where}[{index}]"
        _by_kind(block, "type", _CLAUDE_BLOCKS, _Typed, at)
        kind = block["type"]
        if kind == "tool_result":
            _claude_blocks(block.get("content"), f"{at}.content")
        elif kind == "image" and type(block.get("source")) is dict:
            check(block["source"], _ImageSource, f"{at}.source")


class _ClaudeUsage(TypedDict):
    input_tokens: NotRequired[Tokens]
    output_tokens: NotRequired[Tokens]
    cache_read_input_tokens: NotRequired[Tokens]
    cache_creation_input_tokens: NotRequired[Tokens]


class _ClaudeMessage(TypedDict):
    content: NotRequired[ClaudeContent]
    model: NotRequired[OptionalText]
    id: NotRequired[OptionalText]
    stop_reason: NotRequired[OptionalText]
    usage: NotRequired[_ClaudeUsage | None]


class _ClaudeEntry(TypedDict):
    type: str
    parentUuid: NotRequired[OptionalText]
    logicalParentUuid: NotRequired[OptionalText]
    timestamp: NotRequired[OptionalText]


class _ClaudeMessageEntry(_ClaudeEntry):
    message: _ClaudeMessage


class _ClaudeSystem(_ClaudeEntry):
    subtype: NotRequired[OptionalText]
    content: NotRequired[OptionalText]


_CLAUDE_TYPES: dict[str, Any] = {
    "user": _ClaudeMessageEntry,
    "assistant": _ClaudeMessageEntry,
    "system": _ClaudeSystem,
}


def _claude_entry(entry: dict[str, Any]) -> None:
    _by_kind(entry, "type", _CLAUDE_TYPES, _ClaudeEntry, "")
    if entry["type"] in ("user", "assistant"):
        _claude_blocks(entry["message"].get("content"), ".message.content")


def claude_entry_problem(entry: Mapping[str, Any]) -> ShapeError | None:
    """Why a Claude Code entry (one with a ``uuid``) cannot be used, or None."""
    return _problem(_claude_entry, entry)


def _problem(checker: Callable[[Any], None], entry: Mapping[str, Any]) -> ShapeError | None:
    try:
        checker(entry)
    except SchemaError as error:
        return shape_error(error, entry)
    return None


def set_aside(entry: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """What stays of an entry that cannot be used: its id and links (``keys``, when text), so
    the entries after it keep their place in the tree, and a type no reader takes for content."""
    kept = {key: entry[key] for key in keys if type(entry.get(key)) is str}
    return {**kept, "type": SET_ASIDE}
