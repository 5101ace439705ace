"""A deterministic stand-in for a tokenizer: four characters per token.

Real tokenizers differ per provider; the emulator only needs counts that are stable,
monotonic in the text and cheap, so that cache arithmetic (minimum lengths, 64/128-token
steps) can be checked exactly in tests. Prompt parts are measured over a canonical
serialization (sorted keys, no ``cache_control``), since key order and cache markers are
not something the model reads.
"""

from __future__ import annotations

from typing import Any

import orjson

CHARS_PER_TOKEN = 4
#: Request fields that steer caching but are not prompt text.
_NOT_PROMPT = frozenset({"cache_control"})


def estimate_tokens(text: str) -> int:
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in _NOT_PROMPT}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def canonical(value: Any) -> str:
    """One prompt part as the emulator 'reads' it: sorted-key JSON without cache markers."""
    return orjson.dumps(_strip(value), option=orjson.OPT_SORT_KEYS).decode()
