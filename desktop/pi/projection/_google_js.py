"""JavaScript string and number semantics that decide Google request bytes.

pi-ai and the Google GenAI SDK run on JavaScript. Where its semantics differ from Python's and
the difference reaches the wire (string lengths in UTF-16 units for the token estimate that
clamps ``maxOutputTokens``, ``String.prototype.trim`` deciding which blocks are empty, integral
numbers printed without a fraction, unpaired surrogates dropped), the projection reproduces it.
"""

from __future__ import annotations

import math
import re
from typing import Any

import orjson

_ANY_SURROGATE = re.compile("[\ud800-\udfff]")
_LONE_SURROGATE = re.compile("[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]")
_SURROGATE_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")
#: What ``String.prototype.trim`` removes: ECMAScript WhiteSpace and LineTerminator.
_JS_WHITESPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_JS_SAFE_INTEGRAL_LIMIT = 1e21


def sanitize_surrogates(text: str) -> str:
    """Drop unpaired UTF-16 surrogates (pi-ai's ``sanitizeSurrogates``); they are invalid JSON text.

    Python holds an astral character as one code point, so a surrogate here is unpaired, or half
    of a pair spelled as two code points (joined into the character JavaScript would have seen).
    """
    if not _ANY_SURROGATE.search(text):
        return text
    text = _LONE_SURROGATE.sub("", text)
    return _SURROGATE_PAIR.sub(
        lambda m: m.group().encode("utf-16-le", "surrogatepass").decode("utf-16-le"), text
    )


def js_length(text: str) -> int:
    """``text.length``: UTF-16 code units."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def js_blank(text: str | None) -> bool:
    """``!text || text.trim() === ""``."""
    return not text or not text.strip(_JS_WHITESPACE)


def js_value(value: Any) -> Any:
    """The value as JavaScript holds it after ``JSON.parse``: integral floats become ints.

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


def js_stringify_length(value: Any) -> int:
    """``JSON.stringify(value).length`` for plain JSON data."""
    return js_length(orjson.dumps(js_value(value)).decode("utf-8"))
