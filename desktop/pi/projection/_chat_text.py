"""JavaScript string and JSON semantics that leak into Chat Completions wire bytes.

pi-ai runs on JavaScript: string lengths count UTF-16 code units, ``JSON.stringify`` prints
integral numbers without a fraction, and its short hash walks UTF-16 code units. Where those
details decide request bytes (tool-call argument strings, token estimates that clamp
``max_tokens``, derived tool-call ids) Python must reproduce them exactly.
"""

from __future__ import annotations

import math
import re
from typing import Any

import orjson

_LONE_SURROGATE = re.compile("[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]")
_ANY_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")
_JS_SAFE_INTEGRAL_LIMIT = 1e21


def sanitize_surrogates(text: str) -> str:
    """Drop unpaired UTF-16 surrogates, which providers reject as invalid JSON text.

    Python strings decoded from JSON hold astral characters as single code points, so a
    surrogate here is either unpaired (removed, as pi-ai does) or half of a pair spelled out
    as two code points (joined into the character JavaScript would have seen).
    """
    if not _ANY_SURROGATE.search(text):
        return text
    text = _LONE_SURROGATE.sub("", text)
    return _SURROGATE_PAIR.sub(
        lambda m: m.group().encode("utf-16-le", "surrogatepass").decode("utf-16-le"), text
    )


def js_length(text: str) -> int:
    """``text.length`` in JavaScript: UTF-16 code units."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def js_value(value: Any) -> Any:
    """The value as JavaScript would hold it after ``JSON.parse``: integral floats become ints.

    Returns the same object when nothing changes, so the common float-free case allocates
    nothing.
    """
    kind = type(value)
    if kind is float:
        if math.isfinite(value) and value == int(value) and abs(value) < _JS_SAFE_INTEGRAL_LIMIT:
            return int(value)
        return value
    if kind is dict:
        changed: dict[str, Any] | None = None
        for key, item in value.items():
            new = js_value(item)
            if new is not item:
                if changed is None:
                    changed = dict(value)
                changed[key] = new
        return value if changed is None else changed
    if kind is list:
        items: list[Any] | None = None
        for index, item in enumerate(value):
            new = js_value(item)
            if new is not item:
                if items is None:
                    items = list(value)
                items[index] = new
        return value if items is None else items
    return value


def js_stringify(value: Any) -> str:
    """``JSON.stringify(value)`` for plain JSON data."""
    return orjson.dumps(js_value(value)).decode("utf-8")


def _imul(a: int, b: int) -> int:
    return (a * b) & 0xFFFFFFFF


def _base36(number: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    if number == 0:
        return "0"
    out = []
    while number:
        number, rem = divmod(number, 36)
        out.append(digits[rem])
    return "".join(reversed(out))


def short_hash(text: str) -> str:
    """pi-ai's ``shortHash`` (a cyrb53-style pair of 32-bit hashes over UTF-16 code units)."""
    h1 = 0xDEADBEEF
    h2 = 0x41C6CE57
    units = text.encode("utf-16-le", "surrogatepass")
    for index in range(0, len(units), 2):
        ch = units[index] | (units[index + 1] << 8)
        h1 = _imul(h1 ^ ch, 2654435761)
        h2 = _imul(h2 ^ ch, 1597334677)
    h1 = _imul(h1 ^ (h1 >> 16), 2246822507) ^ _imul(h2 ^ (h2 >> 13), 3266489909)
    h2 = _imul(h2 ^ (h2 >> 16), 2246822507) ^ _imul(h1 ^ (h1 >> 13), 3266489909)
    return _base36(h2 & 0xFFFFFFFF) + _base36(h1 & 0xFFFFFFFF)


#: ``String.prototype.trim`` whitespace (differs from ``str.strip``: BOM yes, \x1c-\x1f no).
JS_WHITESPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


def js_trim(text: str) -> str:
    return text.strip(JS_WHITESPACE)


def js_blank(text: str) -> bool:
    """``text.trim().length === 0``."""
    return not text.strip(JS_WHITESPACE)
