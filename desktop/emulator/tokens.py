"""The emulator's token count (``desktop.emulator.provider_cache``: four characters per token).

Kept as a name for the benchmarks that measure prompts the way the emulator does.
"""

from __future__ import annotations

from desktop.emulator.provider_cache import CHARS_PER_TOKEN, canonical, count_tokens

estimate_tokens = count_tokens

__all__ = ["CHARS_PER_TOKEN", "canonical", "estimate_tokens"]
