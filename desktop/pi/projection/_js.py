"""JavaScript string and number semantics that leak into request bytes.

pi-ai and the provider SDKs run on JavaScript: string lengths count UTF-16 code units (the
token estimate that clamps the output cap, id length limits), ``JSON.stringify`` prints
integral numbers without a fraction, ``String.prototype.trim`` has its own whitespace set,
unpaired surrogates are stripped before encoding and pi-ai's ``shortHash`` walks UTF-16 code
units. Each differs from the obvious Python call on some input, and any difference changes
the request bytes, so every projection uses these.
"""

from __future__ import annotations

import math
import re
from typing import Any

import orjson

_ANY_SURROGATE = re.compile("[\ud800-\udfff]")
# pi-ai's ``sanitizeSurrogates`` pattern, verbatim.
_LONE_SURROGATE = re.compile("[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]")
_SURROGATE_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")
#: Integral floats from here up stay floats: orjson writes no integer past 64 bits (a value of
#: this size in a session is damage, and the request is still built, in exponent notation).
_INT_LIMIT = 2.0**63
_MASK = 0xFFFFFFFF
_VALID_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_INVALID_ID_CHAR = re.compile(r"[^a-zA-Z0-9_-]")
_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"

#: ``String.prototype.trim`` whitespace: ECMAScript WhiteSpace and LineTerminator (differs from
#: ``str.strip()``: the BOM is whitespace, \x1c-\x1f and \x85 are not).
JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def js_id_chars(text: str) -> str:
    """``text.replace(/[^a-zA-Z0-9_-]/g, "_")``: per UTF-16 unit, so an astral character becomes
    two underscores."""
    return _INVALID_ID_CHAR.sub(lambda m: "__" if ord(m.group()) > 0xFFFF else "_", text)


def normalize_tool_call_id(call_id: str, _model: Any = None, _source: Any = None) -> str:
    """The tool call id rule of Anthropic, Bedrock and Gemini 3: safe characters, at most 64
    UTF-16 units."""
    return call_id if _VALID_ID.fullmatch(call_id) else js_id_chars(call_id)[:64]


def sanitize_surrogates(text: str) -> str:
    """Drop unpaired UTF-16 surrogates (pi-ai ``sanitizeSurrogates``); providers reject them.

    Python holds an astral character as one code point, so a surrogate here is unpaired, or half
    of a pair spelled as two code points, which is joined into the character JavaScript sees.
    """
    if text.isascii() or _ANY_SURROGATE.search(text) is None:
        return text
    text = _LONE_SURROGATE.sub("", text)
    return _SURROGATE_PAIR.sub(
        lambda m: m.group().encode("utf-16-le", "surrogatepass").decode("utf-16-le"), text
    )


def js_length(text: str) -> int:
    """``text.length``: UTF-16 code units, so an astral character counts twice."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def js_trim(text: str) -> str:
    """``text.trim()``."""
    return text.strip(JS_WHITESPACE)


def js_blank(text: str | None) -> bool:
    """``!text || text.trim().length === 0``."""
    return not text or not text.strip(JS_WHITESPACE)


def _js_number(value: float) -> Any:
    if value.is_integer() and abs(value) < _INT_LIMIT:
        return int(value)
    # JSON.stringify writes NaN and the infinities as null.
    return None if math.isnan(value) or math.isinf(value) else value


def js_value(value: Any) -> Any:
    """A JSON value as JavaScript holds it after ``JSON.parse``: integral floats become ints.

    Returns the very same object when nothing changes, so the common float-free case
    allocates nothing.
    """
    kind = type(value)
    if kind is float:
        return _js_number(value)
    if kind is dict or kind is list:
        changed: Any = None
        for key, item in value.items() if kind is dict else enumerate(value):
            item_kind = type(item)
            if item_kind is str or item_kind is int or item_kind is bool or item is None:
                continue
            new = js_value(item)
            if new is not item:
                if changed is None:
                    changed = kind(value)
                changed[key] = new
        return value if changed is None else changed
    return value


def js_stringify(value: Any) -> str:
    """``JSON.stringify(value)`` for plain JSON data (compact, integral numbers without fraction)."""
    return orjson.dumps(js_value(value)).decode("utf-8")


def _base36(number: int) -> str:
    if number == 0:
        return "0"
    out: list[str] = []
    while number:
        number, rem = divmod(number, 36)
        out.append(_BASE36[rem])
    return "".join(reversed(out))


def short_hash(text: str) -> str:
    """pi-ai ``shortHash``: a cyrb53-style pair of 32-bit lanes over UTF-16 code units, base 36."""
    h1 = 0xDEADBEEF
    h2 = 0x41C6CE57
    if text.isascii():
        units: Any = text.encode("ascii")
    else:
        data = text.encode("utf-16-le", "surrogatepass")
        units = [data[i] | (data[i + 1] << 8) for i in range(0, len(data), 2)]
    for ch in units:
        h1 = ((h1 ^ ch) * 2654435761) & _MASK
        h2 = ((h2 ^ ch) * 1597334677) & _MASK
    h1 = (((h1 ^ (h1 >> 16)) * 2246822507) & _MASK) ^ (((h2 ^ (h2 >> 13)) * 3266489909) & _MASK)
    h2 = (((h2 ^ (h2 >> 16)) * 2246822507) & _MASK) ^ (((h1 ^ (h1 >> 13)) * 3266489909) & _MASK)
    return _base36(h2) + _base36(h1)
