"""Prompt-cache accounting with each provider's prefix rules, computed from request bodies.

Two models cover the five families:

* ``BreakpointCache`` (Anthropic): the prompt is a sequence of blocks in the order tools →
  system → messages. Only prefixes ending at an explicit ``cache_control`` breakpoint are
  written, and only when at least the model's minimum length (1024, 2048 or 4096 tokens).
  A breakpoint reads the longest cached prefix ending at it or at one of the 19 block
  boundaries before it (the 20-block lookback). Reported as read tokens, written tokens
  (from the end of the read to the last breakpoint) and the rest as fresh input.
* ``PrefixCache`` (OpenAI, DeepSeek, Google, Mistral): automatic. The canonical prompt text
  is cut into fixed token steps (128 tokens, DeepSeek 64); every complete step boundary at
  or past the minimum length (1024, DeepSeek 64, Gemini Pro 4096) is stored, and a request
  reads the longest stored prefix. OpenAI-style caches are partitioned by
  ``prompt_cache_key`` when one is sent.

Entries never expire: the emulator is deterministic, and tests model expiry by changing
the prompt or using a fresh emulator.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from desktop.emulator.tokens import CHARS_PER_TOKEN, estimate_tokens

ANTHROPIC_LOOKBACK_BLOCKS = 20


@dataclass(frozen=True, slots=True)
class CacheResult:
    """Token accounting for one request: ``fresh + read + written == total``."""

    total: int
    read: int
    written: int
    written_1h: int = 0

    @property
    def fresh(self) -> int:
        return self.total - self.read - self.written


@dataclass(frozen=True, slots=True)
class Block:
    """One Anthropic prompt block: its canonical text and breakpoint (``None``, ``"5m"`` or ``"1h"``)."""

    text: str
    breakpoint: str | None = None


def anthropic_min_tokens(model: str) -> int:
    """Minimum cacheable prompt length by model class (Anthropic's published table)."""
    name = model.lower()
    if any(tag in name for tag in ("opus-4-5", "opus-4-6", "opus-4.5", "haiku-4-5", "haiku-4.5")):
        return 4096
    if "haiku" in name:
        return 2048
    return 1024


def _chain(previous: bytes, text: str) -> bytes:
    return hashlib.blake2b(previous + text.encode(), digest_size=16).digest()


class BreakpointCache:
    def __init__(self) -> None:
        self._entries: set[tuple[str, bytes]] = set()
        self._lock = threading.Lock()

    def account(self, namespace: str, blocks: Sequence[Block], min_tokens: int) -> CacheResult:
        hashes: list[bytes] = []
        cumulative: list[int] = []
        digest, tokens = b"", 0
        for block in blocks:
            digest = _chain(digest, block.text)
            tokens += estimate_tokens(block.text)
            hashes.append(digest)
            cumulative.append(tokens)
        breakpoints = [i for i, block in enumerate(blocks) if block.breakpoint]
        with self._lock:
            read_at = -1
            for p in breakpoints:
                for q in range(p, max(-1, p - ANTHROPIC_LOOKBACK_BLOCKS), -1):
                    if (namespace, hashes[q]) in self._entries:
                        read_at = max(read_at, q)
                        break
            read = cumulative[read_at] if read_at >= 0 else 0
            written = written_1h = 0
            if breakpoints:
                last = breakpoints[-1]
                if last > read_at and cumulative[last] >= min_tokens:
                    written = cumulative[last] - read
                    written_1h = written if blocks[last].breakpoint == "1h" else 0
            for p in breakpoints:
                if cumulative[p] >= min_tokens:
                    self._entries.add((namespace, hashes[p]))
        return CacheResult(total=tokens, read=read, written=written, written_1h=written_1h)


class PrefixCache:
    def __init__(self, *, step_tokens: int, min_tokens: int) -> None:
        self.step_tokens = step_tokens
        self.min_tokens = min_tokens
        self._entries: set[tuple[str, bytes]] = set()
        self._lock = threading.Lock()

    def account(self, namespace: str, prompt: str, *, min_tokens: int | None = None) -> CacheResult:
        minimum = self.min_tokens if min_tokens is None else min_tokens
        total = max(1, estimate_tokens(prompt))
        step_chars = self.step_tokens * CHARS_PER_TOKEN
        boundaries: list[tuple[int, bytes]] = []
        digest = b""
        for end in range(step_chars, len(prompt) + 1, step_chars):
            digest = _chain(digest, prompt[end - step_chars : end])
            tokens = end // CHARS_PER_TOKEN
            if tokens >= minimum:
                boundaries.append((tokens, digest))
        with self._lock:
            read = 0
            for tokens, key in boundaries:
                if (namespace, key) in self._entries:
                    read = tokens
            for _tokens, key in boundaries:
                self._entries.add((namespace, key))
        return CacheResult(total=total, read=read, written=0)
