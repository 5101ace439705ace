"""pi-ai's ``shortHash`` (two 32-bit multiply-xorshift lanes, base-36), bit for bit.

Used where pi-ai derives identifiers from text, e.g. Mistral's nine-character tool-call ids,
so that ids we derive match the ones pi-ai would send.
"""

from __future__ import annotations

_MASK = 0xFFFFFFFF


def _imul(a: int, b: int) -> int:
    """JavaScript ``Math.imul`` as an unsigned 32-bit result."""
    return (a * b) & _MASK


def _base36(value: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    if value == 0:
        return "0"
    out = []
    while value:
        value, rem = divmod(value, 36)
        out.append(digits[rem])
    return "".join(reversed(out))


def short_hash(text: str) -> str:
    h1, h2 = 0xDEADBEEF, 0x41C6CE57
    for unit in _utf16_units(text):
        h1 = _imul(h1 ^ unit, 2654435761)
        h2 = _imul(h2 ^ unit, 1597334677)
    h1 = _imul(h1 ^ (h1 >> 16), 2246822507) ^ _imul(h2 ^ (h2 >> 13), 3266489909)
    h2 = _imul(h2 ^ (h2 >> 16), 2246822507) ^ _imul(h1 ^ (h1 >> 13), 3266489909)
    return _base36(h2 & _MASK) + _base36(h1 & _MASK)


def _utf16_units(text: str) -> list[int]:
    """``charCodeAt`` values: code points above U+FFFF become surrogate pairs."""
    units: list[int] = []
    for ch in text:
        code = ord(ch)
        if code > 0xFFFF:
            code -= 0x10000
            units.extend((0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF)))
        else:
            units.append(code)
    return units
