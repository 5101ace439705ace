"""JavaScript string semantics that leak into wire bytes (pi-ai runs on UTF-16 strings).

pi-ai strips unpaired surrogates before JSON encoding, trims with JavaScript's whitespace
set and measures text in UTF-16 code units for its token estimate. Each differs from the
obvious Python call on some input, and any difference changes the request bytes.
"""

from __future__ import annotations

import re

_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")
# ECMAScript WhiteSpace + LineTerminator, the set String.prototype.trim() removes.
_JS_BLANK = re.compile("[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]*")


def _join_pair(match: re.Match[str]) -> str:
    high, low = (ord(c) for c in match.group())
    return chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))


def sanitize_surrogates(text: str) -> str:
    """Drop unpaired UTF-16 surrogates (pi-ai ``sanitizeSurrogates``); paired ones are joined."""
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub("", _SURROGATE_PAIR.sub(_join_pair, text))


def is_blank(text: str) -> bool:
    """``text.trim().length === 0`` in JavaScript."""
    if text.isascii():
        # Explicit set: Python's default strip() would also eat \x1c-\x1f, which JS keeps.
        return not text.strip(" \t\n\v\f\r")
    return _JS_BLANK.fullmatch(text) is not None


def utf16_len(text: str) -> int:
    """``text.length`` in JavaScript: UTF-16 code units, not code points."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2
