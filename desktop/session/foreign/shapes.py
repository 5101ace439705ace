"""The shapes pi and Claude Code entries must have to be used, checked where they are read (design T9, X1).

Another program wrote these files, and a hand edit, a crash or a newer version can leave any JSON
value in any field. The format modules and everything after them (pi's context rebuilding, the
projections for every API, prices, the window's rows) index into the entries, so each entry is
checked once, on open, for the fields they read: a pi message against the same neutral message
shapes a Desktop journal row's message must have (``desktop.host.journal.shapes``), pi's own
roles and entry types, and Claude Code's entries and Anthropic content blocks. An entry that does
not fit is set aside with its line and field (``set_aside``): it stays in the tree as a row that
says so, so the entries after it keep their parent, but nothing reads its content.

Unknown entry types and extra fields are allowed (a newer writer); only what is read is checked.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from desktop.host.journal.shapes import (
    _ASSISTANT_BLOCKS,
    _USER_BLOCKS,
    ShapeError,
    _assistant_message,
    _blocks,
    _bool,
    _int,
    _list,
    _number,
    _object,
    _optional,
    _required,
    _str,
    _system_message,
    _text_or_blocks,
    _tool_result_message,
    _usage,
    _user_message,
    _wrong,
)

#: The type of an entry set aside: shown as an entry of unknown type, never read further.
SET_ASIDE = "set-aside"

Check = Callable[[Mapping[str, Any]], None]
#: Token counts beyond JavaScript's exact integers are damage; the usage shown sums four of them,
#: and the sum must still pass a Qt model (64 bits).
_MAX_TOKENS = 2**53


def _text_or_null(value: object, field: str) -> None:
    if value is not None and type(value) is not str:
        raise _wrong(field, "text or null", value)


def _link(entry: Mapping[str, Any], key: str) -> None:
    _text_or_null(entry.get(key), key)


def _user_content(value: object, field: str) -> None:
    _text_or_blocks(value, field, _USER_BLOCKS)


# --- pi -------------------------------------------------------------------------------------------


def _pi_custom(message: dict[str, Any], field: str) -> None:
    _optional(message, "content", field, _user_content)
    _optional(message, "customType", field, _str)
    _optional(message, "timestamp", field, _int)


def _pi_bash(message: dict[str, Any], field: str) -> None:
    _optional(message, "command", field, _str)
    _optional(message, "output", field, _str)
    _optional(message, "exitCode", field, _number)
    for key in ("cancelled", "truncated", "excludeFromContext"):
        _optional(message, key, field, _bool)
    _optional(message, "fullOutputPath", field, _str)
    _optional(message, "timestamp", field, _int)


def _pi_summary(message: dict[str, Any], field: str) -> None:
    _optional(message, "summary", field, _str)
    _optional(message, "timestamp", field, _int)


def _with_content(
    check: Callable[[dict[str, Any], str], None], empty: object
) -> Callable[[dict[str, Any], str], None]:
    """pi gives a message without content an empty one (``entry_messages``); so is it checked."""

    def run(message: dict[str, Any], field: str) -> None:
        check(message if message.get("content") is not None else {**message, "content": empty}, field)

    return run


_PI_ROLES: dict[str, Callable[[dict[str, Any], str], None]] = {
    "user": _with_content(_user_message, []),
    "assistant": _with_content(_assistant_message, []),
    "toolResult": _with_content(_tool_result_message, []),
    "system": _with_content(_system_message, ""),
    "custom": _pi_custom,
    "hookMessage": _pi_custom,  # v2's name of ``custom``, migrated on read
    "bashExecution": _pi_bash,
    "branchSummary": _pi_summary,
    "compactionSummary": _pi_summary,
}


def _pi_message(entry: Mapping[str, Any]) -> None:
    message = _required(entry, "message", "", _object)
    role = message.get("role")
    if type(role) is not str:
        raise _wrong("message.role", "text", role)
    check = _PI_ROLES.get(role)
    if check is not None:  # other roles are dropped by pi's convertToLlm: nothing reads them
        check(message, "message")


def _pi_compaction(entry: Mapping[str, Any]) -> None:
    _optional(entry, "summary", "", _str)
    _optional(entry, "firstKeptEntryId", "", _str)
    _optional(entry, "tokensBefore", "", _number)
    checkpoint = entry.get("systemMessage")
    if checkpoint:  # pi writes {} or leaves it out before it kept one
        _system_message(checkpoint, "systemMessage")
    _optional(entry, "usage", "", _usage)


#: A context edit's replacement content replaces any message's: a block of any neutral kind.
_ANY_BLOCKS = {**_ASSISTANT_BLOCKS, **_USER_BLOCKS}


def _pi_replacement(value: object, field: str) -> None:
    replacement = _object(value, field)
    content = _required(replacement, "content", field, lambda v, f: v)  # else the message loses it
    if type(content) is not str:
        _blocks(content, f"{field}.content", _ANY_BLOCKS)


def _pi_context_edit(entry: Mapping[str, Any]) -> None:
    _required(entry, "targetId", "", _str)
    _optional(entry, "replacement", "", _pi_replacement)


def _pi_usage_entry(entry: Mapping[str, Any]) -> None:
    _optional(entry, "usage", "", _usage)
    for key in ("provider", "model", "kind"):
        _optional(entry, key, "", _str)


def _texts(*keys: str) -> Check:
    def check(entry: Mapping[str, Any]) -> None:
        for key in keys:
            _optional(entry, key, "", _str)

    return check


def _pi_label(entry: Mapping[str, Any]) -> None:
    _required(entry, "targetId", "", _str)
    _text_or_null(entry.get("label"), "label")


def _pi_custom_message(entry: Mapping[str, Any]) -> None:
    _optional(entry, "content", "", _user_content)
    _optional(entry, "customType", "", _str)


_PI_TYPES: dict[str, Check] = {
    "message": _pi_message,
    "compaction": _pi_compaction,
    "branch_summary": _texts("summary", "fromId"),
    "custom_message": _pi_custom_message,
    "context_edit": _pi_context_edit,
    "model_change": _texts("provider", "modelId"),
    "thinking_level_change": _texts("thinkingLevel"),
    "label": _pi_label,
    "session_info": lambda e: _text_or_null(e.get("name"), "name"),
    "usage": _pi_usage_entry,
    "custom": _texts("customType"),
}


def pi_entry_problem(entry: Mapping[str, Any]) -> ShapeError | None:
    """Why a pi entry (migrated to v3, with a string ``id``) cannot be used, or None."""
    try:
        kind = entry.get("type")
        if type(kind) is not str:
            raise _wrong("type", "text", kind)
        _link(entry, "parentId")
        check = _PI_TYPES.get(kind)
        if check is not None:
            check(entry)
    except ShapeError as error:
        return error
    return None


# --- Claude Code ------------------------------------------------------------------------------------


def _claude_text(block: dict[str, Any], field: str) -> None:
    _required(block, "text", field, _str)


def _claude_thinking(block: dict[str, Any], field: str) -> None:
    _optional(block, "thinking", field, _str)
    _optional(block, "signature", field, _str)


def _claude_tool_use(block: dict[str, Any], field: str) -> None:
    _optional(block, "id", field, _str)
    _required(block, "name", field, _str)
    _optional(block, "input", field, _object)


def _claude_image(block: dict[str, Any], field: str) -> None:
    source = block.get("source")
    if isinstance(source, dict):
        _optional(source, "data", f"{field}.source", _str)
        _optional(source, "media_type", f"{field}.source", _str)


def _claude_result_content(value: object, field: str) -> None:
    if type(value) is not str:
        _claude_blocks(value, field)


def _claude_tool_result(block: dict[str, Any], field: str) -> None:
    _optional(block, "tool_use_id", field, _str)
    _optional(block, "content", field, _claude_result_content)
    _optional(block, "is_error", field, _bool)


_CLAUDE_BLOCKS: dict[str, Callable[[dict[str, Any], str], None]] = {
    "text": _claude_text,
    "thinking": _claude_thinking,
    "redacted_thinking": lambda b, f: _optional(b, "data", f, _str),
    "tool_use": _claude_tool_use,
    "tool_result": _claude_tool_result,
    "image": _claude_image,
}


def _claude_blocks(value: object, field: str) -> None:
    for index, block in enumerate(_list(value, field)):
        where = f"{field}[{index}]"
        _object(block, where)
        kind = block.get("type")
        if type(kind) is not str:
            raise _wrong(f"{where}.type", "text", kind)
        check = _CLAUDE_BLOCKS.get(kind)
        if check is not None:  # other blocks (server tools) are shown as their JSON
            check(block, where)


def _claude_content(value: object, field: str) -> None:
    if type(value) is not str:
        _claude_blocks(value, field)


def _token_count(value: object, field: str) -> None:
    _number(value, field)
    if not -_MAX_TOKENS <= value <= _MAX_TOKENS:  # type: ignore[operator]
        raise ShapeError(field, f"{field} is more tokens than any request holds ({value})")


def _claude_usage(value: object, field: str) -> None:
    usage = _object(value, field)
    for key in ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"):
        _optional(usage, key, field, _token_count)


def _claude_message(entry: Mapping[str, Any]) -> None:
    message = _required(entry, "message", "", _object)
    _optional(message, "content", "message", _claude_content)
    for key in ("model", "id", "stop_reason"):
        _optional(message, key, "message", _str)
    _optional(message, "usage", "message", _claude_usage)


_CLAUDE_TYPES: dict[str, Check] = {
    "user": _claude_message,
    "assistant": _claude_message,
    "system": _texts("subtype", "content"),
}


def claude_entry_problem(entry: Mapping[str, Any]) -> ShapeError | None:
    """Why a Claude Code entry (one with a ``uuid``) cannot be used, or None."""
    try:
        kind = entry.get("type")
        if type(kind) is not str:
            raise _wrong("type", "text", kind)
        _link(entry, "parentUuid")
        _link(entry, "logicalParentUuid")
        _text_or_null(entry.get("timestamp"), "timestamp")
        check = _CLAUDE_TYPES.get(kind)
        if check is not None:
            check(entry)
    except ShapeError as error:
        return error
    return None


def set_aside(entry: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """What stays of an entry that cannot be used: its id and links (``keys``, when text), so
    the entries after it keep their place in the tree, and a type no reader takes for content."""
    kept = {key: entry[key] for key in keys if type(entry.get(key)) is str}
    return {**kept, "type": SET_ASIDE}
