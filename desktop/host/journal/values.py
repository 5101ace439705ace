"""Values a parsed line may hold and still be carried further, checked where lines are read (design T9).

A JSON line can hold values that parse but that nothing after the reader can carry: nesting
deeper than a request can be encoded (orjson writes at most 254 levels, and a request wraps a
row's values in a few more), and integers outside the signed 64-bit range, which Qt cannot pass
through a model to the window's views and orjson cannot write. Every reader (Desktop journals,
pi and Claude Code files, the window's row index) sets such a line aside with the field, as it
does a line of the wrong shape, so nothing downstream meets one.

The check costs two byte counts and one search per line; a line with that many brackets is
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
#: Digits as "0", every other byte as a space: a run of 19 digits is then a plain substring,
#: found in C at memory speed (a regular expression scans a byte at a time, 15 times slower).
_DIGITS = bytes(0x30 if 0x30 <= byte <= 0x39 else 0x20 for byte in range(256))
_LONG_NUMBER = b"0" * 19
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


def plain_line(raw: bytes) -> bool:
    """Whether ``value_problem`` finds nothing in this line whatever it parses to: too few
    brackets to nest ``MAX_DEPTH`` levels and no run of 19 digits (the reader's fast path)."""
    return raw.count(b"[") + raw.count(b"{") <= MAX_DEPTH and _LONG_NUMBER not in raw.translate(_DIGITS)


def value_problem(raw: bytes, value: Any) -> tuple[str, str] | None:
    """(field, what is wrong) when the parsed line ``value`` (read from ``raw``) holds nesting
    deeper than ``MAX_DEPTH`` or an integer outside the signed 64-bit range; else None."""
    deep = raw.count(b"[") + raw.count(b"{") > MAX_DEPTH and not _shallow(value)
    if not deep and _LONG_NUMBER not in raw.translate(_DIGITS):
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
