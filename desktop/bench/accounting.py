"""Accounting (pure): one request's figures, a run's summary, the theoretical minimum."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from desktop.bench.cache_model import CHARS_PER_TOKEN, PromptShape, estimate_tokens
from desktop.pi.cost import calculate_cost


@dataclass(frozen=True)
class RequestFigures:
    """Input-side figures of one request, as the provider reports them and the catalog prices them."""

    total: int  # every prompt token: fresh + cache reads + cache writes
    cached: int  # served from the prompt cache
    written: int  # written to the cache (Anthropic; billed at the cache-write price)
    cost: float  # input-side dollars: fresh + reads + writes

    @property
    def uncached(self) -> int:
        """Tokens the provider processed without the cache (fresh input and cache writes)."""
        return self.total - self.cached


def figures(model: Mapping[str, Any], usage: Mapping[str, Any]) -> RequestFigures:
    """From a pi-ai usage (``input`` = fresh, ``cacheRead``, ``cacheWrite``) at the model's prices."""
    priced = {
        "input": int(usage["input"]),
        "output": 0,
        "cacheRead": int(usage["cacheRead"]),
        "cacheWrite": int(usage["cacheWrite"]),
        "cacheWrite1h": int(usage.get("cacheWrite1h") or 0),
    }
    cost = calculate_cost(model, priced)
    return RequestFigures(
        total=priced["input"] + priced["cacheRead"] + priced["cacheWrite"],
        cached=priced["cacheRead"],
        written=priced["cacheWrite"],
        cost=cost["input"] + cost["cacheRead"] + cost["cacheWrite"],
    )


@dataclass(frozen=True)
class Summary:
    requests: int
    cold_uncached: int  # first request
    later_uncached: int  # every request after the first
    total_input: int
    cached: int
    cost: float
    minimum: int  # theoretical minimum of uncached tokens (each distinct prompt token once)

    @property
    def uncached(self) -> int:
        return self.cold_uncached + self.later_uncached

    @property
    def hit_ratio(self) -> float:
        return self.cached / self.total_input if self.total_input else 0.0

    @property
    def over_minimum(self) -> float:
        """Uncached tokens as a multiple of the theoretical minimum."""
        return self.uncached / self.minimum if self.minimum else 0.0


def summarize(rows: Sequence[RequestFigures], minimum: int) -> Summary:
    if not rows:
        raise ValueError("a run needs at least one request to summarize")
    return Summary(
        requests=len(rows),
        cold_uncached=rows[0].uncached,
        later_uncached=sum(r.uncached for r in rows[1:]),
        total_input=sum(r.total for r in rows),
        cached=sum(r.cached for r in rows),
        cost=sum(r.cost for r in rows),
        minimum=minimum,
    )


def _common_prefix(a: str, b: str, at_least: int) -> int:
    """Length of the common prefix of ``a`` and ``b`` if longer than ``at_least``, else ``at_least``."""
    limit = min(len(a), len(b))
    if limit <= at_least or a[: at_least + 1] != b[: at_least + 1]:
        return at_least
    lo, hi = at_least + 1, limit  # a[:lo] == b[:lo]
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def new_tokens(shapes: Sequence[PromptShape]) -> list[int]:
    """Per request: tokens past the longest prefix shared with any earlier request.

    Their sum is the theoretical minimum of uncached tokens: a perfect cache (no minimum
    length, no step granularity, nothing evicted) still has to process each of them once.
    """
    out: list[int] = []
    seen_blocks: dict[bytes, int] = {}  # chained block digest -> cumulative tokens
    earlier: list[str] = []
    for shape in shapes:
        if shape.text is not None:
            shared = 0
            for previous in earlier:
                shared = _common_prefix(shape.text, previous, shared)
            earlier.append(shape.text)
            out.append(shape.tokens - shared // CHARS_PER_TOKEN)
            continue
        digest, tokens, shared_tokens = b"", 0, 0
        chain: list[tuple[bytes, int]] = []
        for block in shape.blocks:
            digest = hashlib.blake2b(digest + block.encode(), digest_size=16).digest()
            tokens += estimate_tokens(block)
            chain.append((digest, tokens))
            if digest in seen_blocks:
                shared_tokens = tokens
        seen_blocks.update(chain)
        out.append(tokens - shared_tokens)
    return out
