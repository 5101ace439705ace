"""Checking a parsed JSON value against a msgspec type, and saying its first problem in one line
naming the field (design T9, T10, T11): the one row schema (``journal.rows``), the foreign readers'
shapes and the settings file all say problems this way.

``msgspec.convert(..., strict=True)`` checks (a bool is not a number, text is not a number) and
names where in msgspec's words (``Expected `str`, got `int` - at `$.message.content[0].text```);
``shape_error`` turns that into ``message.content[0].text must be text, not a number``.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec


class SchemaError(ValueError):
    """A value does not fit its type: msgspec's words, and where (a dotted path into the value)."""

    def __init__(self, what: str, path: str) -> None:
        super().__init__(f"{what} - at {path or 'the top'}")
        self.what = what
        self.path = path


_AT = re.compile(r"^(.*?)(?: - at `\$(.*)`)?$", re.DOTALL)


def check(value: Any, kind: Any, prefix: str = "") -> Any:
    """``value`` converted to ``kind`` strictly; a problem is raised as a ``SchemaError`` whose
    path starts with ``prefix`` (the field ``value`` sits in)."""
    try:
        return msgspec.convert(value, type=kind, strict=True)
    except msgspec.ValidationError as error:
        found = _AT.match(str(error))
        assert found is not None  # the pattern matches any text
        raise SchemaError(found[1], prefix + (found[2] or "")) from None


class ShapeError(Exception):
    """A value does not have the shape its type promises; ``field`` is a dotted path into it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


_NAMES = {
    "str": "text",
    "int": "a whole number",
    "float": "a number",
    "bool": "true or false",
    "array": "a list",
    "object": "an object",
    "null": "null",
}
_PART = re.compile(r"\.([^.\[]+)|\[(\d+|\.\.\.)\]")
_EXPECTED = re.compile(r"Expected `([^`]*)`(?:, got `[^`]*`)?(?: (.*))?$")


#: How a JSON value's type is named in a message (values come from a JSON parser: exact types).
_TYPE_NAMES = {
    type(None): "null",
    bool: "a boolean",
    int: "a number",
    float: "a number",
    str: "text",
    list: "a list",
    dict: "an object",
}


#: msgspec's bounds (``Expected `float` > 0.0``) in words.
_BOUNDS = (("<=", "at most"), (">=", "at least"), ("<", "less than"), (">", "more than"))
_GOT = re.compile(r", got `([^`]*)`")


def _msgspec_name(value: object) -> str:
    """msgspec's name of a JSON value's type (``got `int```)."""
    return {type(None): "null", list: "array", dict: "object"}.get(type(value), type(value).__name__)


def _fits(value: Any, what: str) -> bool:
    """Whether ``value`` is where msgspec's problem ``what`` can be: the object missing the
    field, or a value of the type it got."""
    if what.startswith("Object missing required field `"):
        return type(value) is dict and what.split("`")[1] not in value
    got = _GOT.search(what)
    return got is None or _msgspec_name(value) == got[1]


def _walk(data: Any, parts: list[tuple[str, str]], what: str, field: str = "") -> tuple[str, Any, bool]:
    """The dotted field a msgspec path (``parts``) names in ``data``, the value there, and whether
    the problem fits it. msgspec leaves a dict's keys out (``[...]``); the first key whose value
    fits the problem names it."""
    value = data
    for at, (key, index) in enumerate(parts):
        if index == "...":
            if type(value) is not dict:
                return field, value, False
            first: tuple[str, Any, bool] | None = None
            for name, item in value.items():
                found = _walk(item, parts[at + 1 :], what, f"{field}.{name}" if field else str(name))
                if found[2]:
                    return found
                first = first or found
            return first or (field, value, False)
        if index:
            position = int(index)
            value = value[position] if type(value) is list and position < len(value) else None
            field = f"{field}[{index}]"
        else:
            value = value.get(key) if type(value) is dict else None
            field = f"{field}.{key}" if field else key
    return field, value, _fits(value, what)


def shape_error(error: SchemaError, data: Any, whole: str = "(the row)") -> ShapeError:
    """msgspec's problem as one line naming the field: ``FIELD must be EXPECTED, not WHAT``."""
    what = error.what
    field, value, _ = _walk(data, _PART.findall(error.path), what)
    if what.startswith("Object missing required field `"):
        missing = what.split("`")[1]
        field = f"{field}.{missing}" if field else missing
        return ShapeError(field, f"{field} is missing")
    if not field and not what.startswith(("Expected", "Invalid")):
        return ShapeError(whole, what)  # a rule of the whole value's own, which names its fields
    field = field or whole
    if "Invalid enum value" in what or what.startswith("Invalid value"):
        return ShapeError(field, f"{field} cannot be {value!r}")
    expected = _EXPECTED.match(what)
    if expected is None:
        return ShapeError(field, f"{field}: {what}")
    kinds, bound = expected[1], expected[2]
    if bound and bound.startswith("of length >= 1"):
        return ShapeError(field, f"{field} must not be empty")
    if bound:
        for sign, words in _BOUNDS:
            bound = bound.replace(sign, words)
        return ShapeError(field, f"{field} must be {bound.removesuffix('.0')}")
    names = [_NAMES.get(kind, kind) for kind in kinds.split(" | ")]
    if "a whole number" in names and "a number" in names:
        names.remove("a whole number")
    got = _TYPE_NAMES.get(type(value), type(value).__name__)
    return ShapeError(field, f"{field} must be {' or '.join(names)}, not {got}")
