"""Values a parsed line may hold and still be carried further, checked where lines are read (design T9).

A JSON line can hold values that parse but that nothing after the reader can carry: nesting
deeper than a request can be encoded (orjson writes at most 254 levels, and a request wraps a
row's values in a few more), and integers outside the signed 64-bit range, which Qt cannot pass
through a model to the window's views and orjson cannot write. Every reader (Desktop journals,
pi and Claude Code files, the window's row index) sets such a line aside with the field, as it
does a line of the wrong shape, so nothing downstream meets one.

The check reads each line once more, in C: one translation of its bytes (``_shape``) is
counted for brackets and searched for long runs of digits. A line with that many brackets is
written again by orjson (in C) to learn its depth, and a row is walked only when it is too deep
or its line has a run of 19 digits.
"""

from __future__ import annotations

from typing import Any

import orjson

#: Deepest nesting of objects and lists a line may hold (the line's own object is level 1).
MAX_DEPTH = 200
_INT_MIN = -(2**63)
_INT_MAX = 2**63 - 1
#: A line's bytes as ``_shape`` reads them: every digit as "0", "{" as "[" and "E" as "e".
#: Brackets are then one count, and a run of 19 digits or a three-digit exponent a plain
#: substring, found in C at memory speed (a regular expression scans a byte at a time, 15
#: times slower).
_SHAPES = bytes.maketrans(b"0123456789{E", b"0000000000[e")
_LONG_NUMBER = b"0" * 19
#: An exponent no double may hold (orjson refuses the number; msgspec skips it unread in a
#: field it does not know).
_LONG_EXPONENTS = (b"0e000", b"0e+000")
#: The deepest nesting orjson writes.
_ORJSON_DEPTH = 254


def _shallow(value: Any) -> bool:
    """Whether ``value`` nests at most ``MAX_DEPTH`` levels, asked of orjson (in C) rather than
    walked in Python: orjson writes 254 levels, so the value wrapped in the difference must fit."""
    for _ in range(_ORJSON_DEPTH - MAX_DEPTH):
        value = [value]
    try:
        orjson.dumps(value)
    except orjson.JSONEncodeError:
        return False
    return True


def _shape(raw: bytes) -> bytes:
    return raw.translate(_SHAPES)


def _deep(shape: bytes) -> bool:
    """Whether the line has brackets enough to nest deeper than ``MAX_DEPTH``."""
    return shape.count(b"[") > MAX_DEPTH


def plain_line(raw: bytes) -> bool:
    """Whether the reader's fast path may take this line as msgspec decodes it: ``value_problem``
    finds nothing in it whatever it parses to (too few brackets to nest ``MAX_DEPTH`` levels, no
    run of 19 digits), and the parts msgspec skips unread (fields this version does not know)
    parse as orjson reads them: msgspec checks neither their UTF-8 nor their numbers' range, so
    a line with a malformed string or an exponent of three digits or more takes the full path,
    which sets it aside as orjson does (the fuzz found both)."""
    shape = _shape(raw)
    if _deep(shape) or _LONG_NUMBER in shape or any(exponent in shape for exponent in _LONG_EXPONENTS):
        return False
    if not raw.isascii():
        try:
            raw.decode()
        except UnicodeDecodeError:
            return False
    return True


def value_problem(raw: bytes, value: Any) -> tuple[str, str] | None:
    """(field, what is wrong) when the parsed line ``value`` (read from ``raw``) holds nesting
    deeper than ``MAX_DEPTH`` or an integer outside the signed 64-bit range; else None."""
    shape = _shape(raw)
    deep = _deep(shape) and not _shallow(value)
    if not deep and _LONG_NUMBER not in shape:
        return None
    stack: list[tuple[Any, str, int]] = [(value, "", 1)]
    while stack:
        item, field, depth = stack.pop()
        kind = type(item)
        if kind is dict or kind is list:
            if depth > MAX_DEPTH:
                return field or "(the line)", f"nested deeper than {MAX_DEPTH} levels"
            pairs = item.items() if kind is dict else enumerate(item)
            for key, child in pairs:
                where = f"{field}[{key}]" if kind is list else (f"{field}.{key}" if field else str(key))
                stack.append((child, where, depth + 1))
        elif kind is int and not _INT_MIN <= item <= _INT_MAX:
            return field or "(the line)", f"{field or 'the value'} is an integer outside the 64-bit range"
    return None
