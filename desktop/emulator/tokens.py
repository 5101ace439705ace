"""The emulator's token count: the one in ``desktop.pi.cache_rules`` (four characters per token).

Kept as a name for the benchmarks that measure prompts the way the emulator does.
"""

from __future__ import annotations

from desktop.pi.cache_rules import CHARS_PER_TOKEN, canonical, estimate_tokens

__all__ = ["CHARS_PER_TOKEN", "canonical", "estimate_tokens"]
