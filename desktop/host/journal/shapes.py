"""The shapes a session file's rows must have to be used, checked where they are read (design T9).

The reader keeps rows as raw dicts for speed, and everything downstream (replay of system state,
compaction, projections for every API, estimates, the timeline) indexes into them. A row that
was edited by hand, damaged on disk or written by another program could otherwise end every
command in ``KeyError`` or ``TypeError`` and, because the row stays in the file, do so forever.
So each row of a known type is checked once, on read, against the neutral shapes of
``desktop.pi.types``: the message of user, assistant and tool result rows (every content block),
everything under ``modelSystem`` (content, ``sections``, ``toolsAdded``, ``toolsRemoved``), the
compaction row with its checkpoint, the note row, the assistant's route, the types of ``ts``,
``before`` and ``label``. A row that does not fit is set aside by the reader with a diagnostic
naming the file, the line and the field; the rest of the session stays usable.

What is checked is what a consumer relies on; unknown extra fields are allowed (design T7). Rows
of unknown types, and ``modelSystem`` or checkpoint metadata of an unknown version, are not
checked here: nothing reads them as a message (they grant and show nothing).

``tool_activation`` sections are checked as text here; whether one grants anything is decided
by the restore (``desktop.session.activation``), which reports sections it does not accept.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

MODEL_SYSTEM_VERSION = 1
_NOTE_LEVELS = frozenset({"info", "warning", "error"})
_USAGE_NUMBERS = ("input", "output", "cacheRead", "cacheWrite", "cacheWrite1h", "reasoning", "totalTokens")
_COST_NUMBERS = ("input", "output", "cacheRead", "cacheWrite", "total")


class ShapeError(Exception):
    """A row does not have the shape its type promises; ``field`` is a dotted path into the row."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def row_shape_problem(row: Mapping[str, Any]) -> ShapeError | None:
    """Why this row cannot be used (the field and what is wrong with it), or ``None``.

    The common rows (user, assistant, tool result) first go through a flat check that answers
    only "fits" or "look closer"; a row it does not pass is checked field by field below, which
    names the field. The flat check accepts nothing the detailed one refuses, so the answer is
    the same, at about a third of the cost per row (design T9).
    """
    kind = row.get("type")
    fits = FITS.get(kind)  # type: ignore[arg-type]  # the envelope check made it text
    if fits is not None and fits(row):
        return None
    check = _ROWS.get(kind)  # type: ignore[arg-type]
    if check is None:
        return None
    try:
        _optional(row, "ts", "", _int)
        check(row)
    except ShapeError as error:
        return error
    return None


# --- primitives -------------------------------------------------------------------------------


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _wrong(field: str, expected: str, value: object) -> ShapeError:
    return ShapeError(field, f"{field} must be {expected}, not {_type_name(value)}")


def _str(value: object, field: str) -> str:
    if type(value) is not str:
        raise _wrong(field, "text", value)
    return value


def _int(value: object, field: str) -> int:
    if type(value) is not int:
        raise _wrong(field, "a whole number", value)
    return value


def _number(value: object, field: str) -> None:
    if type(value) is not int and type(value) is not float:
        raise _wrong(field, "a number", value)


def _bool(value: object, field: str) -> None:
    if type(value) is not bool:
        raise _wrong(field, "true or false", value)


def _object(value: object, field: str) -> dict[str, Any]:
    if type(value) is not dict:
        raise _wrong(field, "an object", value)
    return value


def _list(value: object, field: str) -> list[Any]:
    if type(value) is not list:
        raise _wrong(field, "a list", value)
    return value


def _required(obj: Mapping[str, Any], key: str, field: str, check: Callable[[Any, str], Any]) -> Any:
    where = f"{field}.{key}" if field else key
    if key not in obj:
        raise ShapeError(where, f"{where} is missing")
    return check(obj[key], where)


def _optional(obj: Mapping[str, Any], key: str, field: str, check: Callable[[Any, str], Any]) -> None:
    """``key`` may be absent or null; when it holds a value, that value must pass ``check``."""
    value = obj.get(key)
    if value is not None:
        check(value, f"{field}.{key}" if field else key)


def _role(message: Mapping[str, Any], role: str, field: str) -> None:
    if message.get("role") != role:
        raise ShapeError(f"{field}.role", f"{field}.role must be {role!r}, not {message.get('role')!r}")


# --- content blocks ---------------------------------------------------------------------------


def _text_block(block: dict[str, Any], field: str) -> None:
    _required(block, "text", field, _str)
    _optional(block, "textSignature", field, _str)


def _thinking_block(block: dict[str, Any], field: str) -> None:
    _required(block, "thinking", field, _str)
    _optional(block, "thinkingSignature", field, _str)
    _optional(block, "redacted", field, _bool)


def _image_block(block: dict[str, Any], field: str) -> None:
    _required(block, "data", field, _str)
    _required(block, "mimeType", field, _str)


def _tool_call_block(block: dict[str, Any], field: str) -> None:
    _required(block, "id", field, _str)
    _required(block, "name", field, _str)
    _required(block, "arguments", field, _object)
    _optional(block, "thoughtSignature", field, _str)
    _optional(block, "namespace", field, _str)


_BlockCheck = Callable[[dict[str, Any], str], None]
_USER_BLOCKS: dict[str, _BlockCheck] = {"text": _text_block, "image": _image_block}
_SYSTEM_BLOCKS: dict[str, _BlockCheck] = {"text": _text_block}
_ASSISTANT_BLOCKS: dict[str, _BlockCheck] = {
    "text": _text_block,
    "thinking": _thinking_block,
    "toolCall": _tool_call_block,
}


def _blocks(value: object, field: str, kinds: Mapping[str, _BlockCheck]) -> None:
    for index, block in enumerate(_list(value, field)):
        where = f"{field}[{index}]"
        _object(block, where)
        kind = block.get("type")
        check = kinds.get(kind) if type(kind) is str else None
        if check is None:
            allowed = ", ".join(repr(k) for k in kinds)
            raise ShapeError(f"{where}.type", f"{where}.type must be one of {allowed}, not {kind!r}")
        check(block, where)


def _text_or_blocks(value: object, field: str, kinds: Mapping[str, _BlockCheck]) -> None:
    if type(value) is not str:
        _blocks(value, field, kinds)


# --- messages ---------------------------------------------------------------------------------


def _user_message(message: dict[str, Any], field: str) -> None:
    _role(message, "user", field)
    _required(message, "content", field, lambda v, f: _text_or_blocks(v, f, _USER_BLOCKS))
    _optional(message, "timestamp", field, _int)


def _usage(usage: object, field: str) -> None:
    _object(usage, field)
    assert isinstance(usage, dict)
    for key in _USAGE_NUMBERS:
        _optional(usage, key, field, _number)
    cost = usage.get("cost")
    if cost is not None:
        _object(cost, f"{field}.cost")
        for key in _COST_NUMBERS:
            _optional(cost, key, f"{field}.cost", _number)


def _assistant_message(message: dict[str, Any], field: str) -> None:
    _role(message, "assistant", field)
    _required(message, "content", field, lambda v, f: _blocks(v, f, _ASSISTANT_BLOCKS))
    for key in ("api", "provider", "model", "stopReason", "errorMessage", "responseId", "responseModel"):
        _optional(message, key, field, _str)
    _optional(message, "usage", field, _usage)
    _optional(message, "timestamp", field, _int)


def _tool_result_message(message: dict[str, Any], field: str) -> None:
    _role(message, "toolResult", field)
    _required(message, "toolCallId", field, _str)
    _required(message, "toolName", field, _str)
    _required(message, "content", field, lambda v, f: _blocks(v, f, _USER_BLOCKS))
    _optional(message, "isError", field, _bool)
    _optional(message, "usage", field, _usage)
    _optional(message, "timestamp", field, _int)


def _tool(value: object, field: str) -> None:
    tool = _object(value, field)
    _required(tool, "name", field, _str)
    _required(tool, "description", field, _str)
    _required(tool, "parameters", field, _object)


def _tool_reference(value: object, field: str) -> None:
    _required(_object(value, field), "name", field, _str)


def _sections(value: object, field: str) -> None:
    for name, text in _object(value, field).items():
        if text is not None and type(text) is not str:
            raise _wrong(f"{field}.{name}", "text or null", text)


def _each(check: Callable[[Any, str], None]) -> Callable[[Any, str], None]:
    def run(value: object, field: str) -> None:
        for index, item in enumerate(_list(value, field)):
            check(item, f"{field}[{index}]")

    return run


def system_message_problem(message: object, field: str = "message") -> ShapeError | None:
    """Why a neutral system message (a ``modelSystem`` or checkpoint message) is unusable."""
    try:
        _system_message(message, field)
    except ShapeError as error:
        return error
    return None


def _system_message(value: object, field: str) -> None:
    message = _object(value, field)
    _role(message, "system", field)
    _required(message, "content", field, lambda v, f: _text_or_blocks(v, f, _SYSTEM_BLOCKS))
    _optional(message, "sections", field, _sections)
    _optional(message, "toolsAdded", field, _each(_tool))
    _optional(message, "toolsRemoved", field, _each(_tool_reference))
    _optional(message, "timestamp", field, _int)


# --- rows -------------------------------------------------------------------------------------


def _route(value: object, field: str) -> None:
    route = _object(value, field)
    for key in ("provider", "model", "api", "baseUrl"):
        _required(route, key, field, _str)
    _optional(route, "account", field, _str)


def _user_row(row: Mapping[str, Any]) -> None:
    _user_message(_required(row, "message", "", _object), "message")


def _assistant_row(row: Mapping[str, Any]) -> None:
    _assistant_message(_required(row, "message", "", _object), "message")
    _required(row, "route", "", _route)


def _tool_result_row(row: Mapping[str, Any]) -> None:
    _tool_result_message(_required(row, "message", "", _object), "message")


def _system_row(row: Mapping[str, Any]) -> None:
    _optional(row, "before", "", _str)
    _optional(row, "label", "", _str)
    meta = row.get("modelSystem")
    if meta is None:
        return
    _object(meta, "modelSystem")
    version = _required(meta, "v", "modelSystem", _int)
    if version == MODEL_SYSTEM_VERSION:
        _required(meta, "message", "modelSystem", _system_message)


def _checkpoint(value: object, field: str) -> None:
    checkpoint = _object(value, field)
    version = _required(checkpoint, "v", field, _int)
    if version != MODEL_SYSTEM_VERSION:
        return
    _required(checkpoint, "message", field, _system_message)
    _optional(checkpoint, "activation", field, _object)
    _optional(checkpoint, "route", field, _object)


def _compaction_row(row: Mapping[str, Any]) -> None:
    _required(row, "summary", "", _str)
    _required(row, "firstKeptId", "", _str)
    _required(row, "tokensBefore", "", _int)
    _optional(row, "checkpoint", "", _checkpoint)
    _optional(row, "usage", "", _usage)


def _note_row(row: Mapping[str, Any]) -> None:
    level = row.get("level")
    if type(level) is not str or level not in _NOTE_LEVELS:
        raise ShapeError("level", f"level must be 'info', 'warning' or 'error', not {level!r}")
    _required(row, "text", "", _str)
    _optional(row, "data", "", _object)


_ROWS: dict[str, Callable[[Mapping[str, Any]], None]] = {
    "user": _user_row,
    "assistant": _assistant_row,
    "toolResult": _tool_result_row,
    "system": _system_row,
    "compaction": _compaction_row,
    "note": _note_row,
}


# --- the flat check of the common rows ----------------------------------------------------------
# Each ``_fits_*`` returns True only for a row the checks above accept; anything else (including
# every row with a problem) goes to them for the field and the message. No per-field calls: a
# session is mostly these three kinds, and this runs once per row on every read.


def _fits_usage(usage: object) -> bool:
    if type(usage) is not dict:
        return False
    for key in _USAGE_NUMBERS:
        value = usage.get(key)
        if value is not None and type(value) is not int and type(value) is not float:
            return False
    cost = usage.get("cost")
    if cost is None:
        return True
    if type(cost) is not dict:
        return False
    for key in _COST_NUMBERS:
        value = cost.get(key)
        if value is not None and type(value) is not int and type(value) is not float:
            return False
    return True


def _fits_user_blocks(content: object) -> bool:
    """User and tool result content blocks: text and image."""
    if type(content) is not list:
        return False
    for block in content:
        if type(block) is not dict:
            return False
        kind = block.get("type")
        if kind == "text":
            if type(block.get("text")) is not str:
                return False
            signature = block.get("textSignature")
            if signature is not None and type(signature) is not str:
                return False
        elif kind == "image":
            if type(block.get("data")) is not str or type(block.get("mimeType")) is not str:
                return False
        else:
            return False
    return True


def _fits_envelope(row: Mapping[str, Any], role: str) -> dict[str, Any] | None:
    """The row's message when ``ts`` and the message's role and ``timestamp`` fit."""
    ts = row.get("ts")
    if ts is not None and type(ts) is not int:
        return None
    message = row.get("message")
    if type(message) is not dict or message.get("role") != role:
        return None
    timestamp = message.get("timestamp")
    if timestamp is not None and type(timestamp) is not int:
        return None
    return message


def _fits_user(row: Mapping[str, Any]) -> bool:
    message = _fits_envelope(row, "user")
    if message is None or "content" not in message:
        return False
    content = message["content"]
    return type(content) is str or _fits_user_blocks(content)


def _fits_tool_result(row: Mapping[str, Any]) -> bool:
    message = _fits_envelope(row, "toolResult")
    if message is None:
        return False
    if type(message.get("toolCallId")) is not str or type(message.get("toolName")) is not str:
        return False
    is_error = message.get("isError")
    if is_error is not None and type(is_error) is not bool:
        return False
    usage = message.get("usage")
    if usage is not None and not _fits_usage(usage):
        return False
    return _fits_user_blocks(message.get("content"))


_ASSISTANT_TEXT_KEYS = (
    "api",
    "provider",
    "model",
    "stopReason",
    "errorMessage",
    "responseId",
    "responseModel",
)


def _fits_assistant(row: Mapping[str, Any]) -> bool:
    message = _fits_envelope(row, "assistant")
    if message is None:
        return False
    content = message.get("content")
    if type(content) is not list:
        return False
    for block in content:
        if type(block) is not dict:
            return False
        kind = block.get("type")
        if kind == "text":
            if type(block.get("text")) is not str:
                return False
            signature = block.get("textSignature")
            if signature is not None and type(signature) is not str:
                return False
        elif kind == "thinking":
            if type(block.get("thinking")) is not str:
                return False
            signature = block.get("thinkingSignature")
            if signature is not None and type(signature) is not str:
                return False
            redacted = block.get("redacted")
            if redacted is not None and type(redacted) is not bool:
                return False
        elif kind == "toolCall":
            if (
                type(block.get("id")) is not str
                or type(block.get("name")) is not str
                or type(block.get("arguments")) is not dict
            ):
                return False
            signature = block.get("thoughtSignature")
            if signature is not None and type(signature) is not str:
                return False
            namespace = block.get("namespace")
            if namespace is not None and type(namespace) is not str:
                return False
        else:
            return False
    for key in _ASSISTANT_TEXT_KEYS:
        value = message.get(key)
        if value is not None and type(value) is not str:
            return False
    usage = message.get("usage")
    if usage is not None and not _fits_usage(usage):
        return False
    route = row.get("route")
    if type(route) is not dict:
        return False
    if (
        type(route.get("provider")) is not str
        or type(route.get("model")) is not str
        or type(route.get("api")) is not str
        or type(route.get("baseUrl")) is not str
    ):
        return False
    account = route.get("account")
    return account is None or type(account) is str


#: The flat check of each common row type; a row it passes is one ``row_shape_problem`` accepts
#: (the reader stores such a row without asking again, ``lines.JournalRows.add_message``).
FITS: dict[str, Callable[[Mapping[str, Any]], bool]] = {
    "user": _fits_user,
    "assistant": _fits_assistant,
    "toolResult": _fits_tool_result,
}
