"""The shapes pi and Claude Code entries must have to be used, checked where they are read (design T9, T10, X1).

Another program wrote these files, and a hand edit, a crash or a newer version can leave any JSON
value in any field. The format modules and everything after them (pi's context rebuilding, the
projections for every API, prices, the window's rows) index into the entries, so each entry is
checked once, on open, for the fields they read: a pi message against the neutral message shapes
of the one row schema (``desktop.host.journal.rows``), pi's own roles and entry types, and Claude
Code's entries and Anthropic content blocks, all as pydantic ``TypedDict``s. An entry that does
not fit is set aside with its line and field (``set_aside``): it stays in the tree as a row that
says so, so the entries after it keep their parent, but nothing reads its content.

Unknown entry types, roles and blocks and extra fields are allowed (a newer writer); only what is
read is checked. Optional fields may be absent or ``null``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal, NotRequired, TypeAlias

from pydantic import AfterValidator, BeforeValidator, ConfigDict, Discriminator, Tag, TypeAdapter, with_config
from typing_extensions import TypedDict  # pydantic reads this one on Python 3.11

from desktop.host.journal.rows import (
    AnyBlock,
    AssistantMessage,
    Number,
    Object,
    ShapeError,
    SystemMessage,
    ToolResultMessage,
    Usage,
    UserBlock,
    UserMessage,
    problem_of,
)

#: The type of an entry set aside: shown as an entry of unknown type, never read further.
SET_ASIDE = "set-aside"

_OPEN = ConfigDict(extra="allow", strict=True)
#: Token counts beyond JavaScript's exact integers are damage; the usage shown sums four of them,
#: and the sum must still pass a Qt model (64 bits).
_MAX_TOKENS = 2**53

OptionalText: TypeAlias = str | None


def _by(key: str, known: frozenset[str]) -> Callable[[Any], str]:
    """A discriminator: the value of ``key`` when it is one this module checks, else ``other``."""

    def tag(value: Any) -> str:
        found = value.get(key) if isinstance(value, Mapping) else None
        return found if type(found) is str and found in known else "other"

    return tag


@with_config(_OPEN)
class _Typed(TypedDict):
    """An entry, message or block of a kind nothing here checks: its kind must still be text."""

    type: str


@with_config(_OPEN)
class _Role(TypedDict):
    role: str


# --- pi -------------------------------------------------------------------------------------------


def _content_or(empty: object) -> BeforeValidator:
    """pi gives a message without content an empty one (``entry_messages``); so is it checked."""

    def fill(message: Any) -> Any:
        if isinstance(message, dict) and message.get("content") is None:
            return {**message, "content": empty}
        return message

    return BeforeValidator(fill)


UserContent = str | list[UserBlock]


@with_config(_OPEN)
class _PiCustom(TypedDict):
    role: str
    content: NotRequired[UserContent | None]
    customType: NotRequired[OptionalText]
    timestamp: NotRequired[int | None]


@with_config(_OPEN)
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


@with_config(_OPEN)
class _PiSummary(TypedDict):
    role: str
    summary: NotRequired[OptionalText]
    timestamp: NotRequired[int | None]


_PI_ROLES = frozenset(
    {"user", "assistant", "toolResult", "system", "custom", "hookMessage", "bashExecution"}
    | {"branchSummary", "compactionSummary"}
)
#: Other roles are dropped by pi's convertToLlm: nothing reads them.
PiMessage = Annotated[
    Annotated[Annotated[UserMessage, _content_or([])], Tag("user")]
    | Annotated[Annotated[AssistantMessage, _content_or([])], Tag("assistant")]
    | Annotated[Annotated[ToolResultMessage, _content_or([])], Tag("toolResult")]
    | Annotated[Annotated[SystemMessage, _content_or("")], Tag("system")]
    | Annotated[_PiCustom, Tag("custom")]
    | Annotated[_PiCustom, Tag("hookMessage")]  # v2's name of ``custom``, migrated on read
    | Annotated[_PiBash, Tag("bashExecution")]
    | Annotated[_PiSummary, Tag("branchSummary")]
    | Annotated[_PiSummary, Tag("compactionSummary")]
    | Annotated[_Role, Tag("other")],
    Discriminator(_by("role", _PI_ROLES)),
]


@with_config(_OPEN)
class _PiEntry(TypedDict):
    type: str
    parentId: NotRequired[OptionalText]


@with_config(_OPEN)
class _PiMessageEntry(_PiEntry):
    message: PiMessage


def _falsy_none(value: Any) -> Any:
    return value or None  # pi writes {} or leaves it out before it kept one


@with_config(_OPEN)
class _PiCompaction(_PiEntry):
    summary: NotRequired[OptionalText]
    firstKeptEntryId: NotRequired[OptionalText]
    tokensBefore: NotRequired[Number | None]
    systemMessage: NotRequired[Annotated[SystemMessage | None, BeforeValidator(_falsy_none)]]
    usage: NotRequired[Usage | None]


@with_config(_OPEN)
class _PiBranchSummary(_PiEntry):
    summary: NotRequired[OptionalText]
    fromId: NotRequired[OptionalText]


@with_config(_OPEN)
class _PiCustomMessage(_PiEntry):
    content: NotRequired[UserContent | None]
    customType: NotRequired[OptionalText]


@with_config(_OPEN)
class _Replacement(TypedDict):
    """A context edit's replacement content replaces any message's: a block of any neutral kind."""

    content: str | list[AnyBlock]  # required, else the message loses it


@with_config(_OPEN)
class _PiContextEdit(_PiEntry):
    targetId: str
    replacement: NotRequired[_Replacement | None]


@with_config(_OPEN)
class _PiModelChange(_PiEntry):
    provider: NotRequired[OptionalText]
    modelId: NotRequired[OptionalText]


@with_config(_OPEN)
class _PiThinkingLevel(_PiEntry):
    thinkingLevel: NotRequired[OptionalText]


@with_config(_OPEN)
class _PiLabel(_PiEntry):
    targetId: str
    label: NotRequired[OptionalText]


@with_config(_OPEN)
class _PiSessionInfo(_PiEntry):
    name: NotRequired[OptionalText]


@with_config(_OPEN)
class _PiUsage(_PiEntry):
    usage: NotRequired[Usage | None]
    provider: NotRequired[OptionalText]
    model: NotRequired[OptionalText]
    kind: NotRequired[OptionalText]


@with_config(_OPEN)
class _PiCustomEntry(_PiEntry):
    customType: NotRequired[OptionalText]


_PI_TYPES: dict[str, TypeAdapter[Any]] = {
    "message": TypeAdapter(_PiMessageEntry),
    "compaction": TypeAdapter(_PiCompaction),
    "branch_summary": TypeAdapter(_PiBranchSummary),
    "custom_message": TypeAdapter(_PiCustomMessage),
    "context_edit": TypeAdapter(_PiContextEdit),
    "model_change": TypeAdapter(_PiModelChange),
    "thinking_level_change": TypeAdapter(_PiThinkingLevel),
    "label": TypeAdapter(_PiLabel),
    "session_info": TypeAdapter(_PiSessionInfo),
    "usage": TypeAdapter(_PiUsage),
    "custom": TypeAdapter(_PiCustomEntry),
}
_PI_OTHER: TypeAdapter[Any] = TypeAdapter(_PiEntry)


def pi_entry_problem(entry: Mapping[str, Any]) -> ShapeError | None:
    """Why a pi entry (migrated to v3, with a string ``id``) cannot be used, or None."""
    kind = entry.get("type")
    adapter = _PI_TYPES.get(kind) if type(kind) is str else None
    return problem_of((adapter or _PI_OTHER).validate_python, entry)


# --- Claude Code ------------------------------------------------------------------------------------


def _tokens(value: Number) -> Number:
    if not -_MAX_TOKENS <= value <= _MAX_TOKENS:
        raise ValueError(f"is more tokens than any request holds ({value})")
    return value


Tokens: TypeAlias = Annotated[Number, AfterValidator(_tokens)] | None


@with_config(_OPEN)
class _ClaudeText(TypedDict):
    type: Literal["text"]
    text: str


@with_config(_OPEN)
class _ClaudeThinking(TypedDict):
    type: Literal["thinking"]
    thinking: NotRequired[OptionalText]
    signature: NotRequired[OptionalText]


@with_config(_OPEN)
class _ClaudeRedacted(TypedDict):
    type: Literal["redacted_thinking"]
    data: NotRequired[OptionalText]


@with_config(_OPEN)
class _ClaudeToolUse(TypedDict):
    type: Literal["tool_use"]
    id: NotRequired[OptionalText]
    name: str
    input: NotRequired[Object | None]


@with_config(_OPEN)
class _ClaudeToolResult(TypedDict):
    type: Literal["tool_result"]
    tool_use_id: NotRequired[OptionalText]
    content: NotRequired[str | list[ClaudeBlock] | None]
    is_error: NotRequired[bool | None]


@with_config(_OPEN)
class _ImageSource(TypedDict):
    data: NotRequired[OptionalText]
    media_type: NotRequired[OptionalText]


def _source_tag(value: Any) -> str:
    return "source" if isinstance(value, dict) else "other"  # only a source object is read


@with_config(_OPEN)
class _ClaudeImage(TypedDict):
    type: Literal["image"]
    source: NotRequired[
        Annotated[
            Annotated[_ImageSource, Tag("source")] | Annotated[Any, Tag("other")],
            Discriminator(_source_tag),
        ]
    ]


_CLAUDE_BLOCKS = frozenset({"text", "thinking", "redacted_thinking", "tool_use", "tool_result", "image"})
#: Other blocks (server tools) are shown as their JSON.
ClaudeBlock = Annotated[
    Annotated[_ClaudeText, Tag("text")]
    | Annotated[_ClaudeThinking, Tag("thinking")]
    | Annotated[_ClaudeRedacted, Tag("redacted_thinking")]
    | Annotated[_ClaudeToolUse, Tag("tool_use")]
    | Annotated[_ClaudeToolResult, Tag("tool_result")]
    | Annotated[_ClaudeImage, Tag("image")]
    | Annotated[_Typed, Tag("other")],
    Discriminator(_by("type", _CLAUDE_BLOCKS)),
]


@with_config(_OPEN)
class _ClaudeUsage(TypedDict):
    input_tokens: NotRequired[Tokens]
    output_tokens: NotRequired[Tokens]
    cache_read_input_tokens: NotRequired[Tokens]
    cache_creation_input_tokens: NotRequired[Tokens]


@with_config(_OPEN)
class _ClaudeMessage(TypedDict):
    content: NotRequired[str | list[ClaudeBlock] | None]
    model: NotRequired[OptionalText]
    id: NotRequired[OptionalText]
    stop_reason: NotRequired[OptionalText]
    usage: NotRequired[_ClaudeUsage | None]


@with_config(_OPEN)
class _ClaudeEntry(TypedDict):
    type: str
    parentUuid: NotRequired[OptionalText]
    logicalParentUuid: NotRequired[OptionalText]
    timestamp: NotRequired[OptionalText]


@with_config(_OPEN)
class _ClaudeMessageEntry(_ClaudeEntry):
    message: _ClaudeMessage


@with_config(_OPEN)
class _ClaudeSystem(_ClaudeEntry):
    subtype: NotRequired[OptionalText]
    content: NotRequired[OptionalText]


_CLAUDE_TYPES: dict[str, TypeAdapter[Any]] = {
    "user": TypeAdapter(_ClaudeMessageEntry),
    "assistant": TypeAdapter(_ClaudeMessageEntry),
    "system": TypeAdapter(_ClaudeSystem),
}
_CLAUDE_OTHER: TypeAdapter[Any] = TypeAdapter(_ClaudeEntry)


def claude_entry_problem(entry: Mapping[str, Any]) -> ShapeError | None:
    """Why a Claude Code entry (one with a ``uuid``) cannot be used, or None."""
    kind = entry.get("type")
    adapter = _CLAUDE_TYPES.get(kind) if type(kind) is str else None
    return problem_of((adapter or _CLAUDE_OTHER).validate_python, entry)


def set_aside(entry: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """What stays of an entry that cannot be used: its id and links (``keys``, when text), so
    the entries after it keep their place in the tree, and a type no reader takes for content."""
    kept = {key: entry[key] for key in keys if type(entry.get(key)) is str}
    return {**kept, "type": SET_ASIDE}
