"""What a response cost, from the token usage and the catalog's prices (pi-ai ``calculateCost``).

Prices are dollars per million tokens. A model may list request-wide tiers: the tier with
the highest ``inputTokensAbove`` threshold that the request's whole input (fresh + cache
reads + cache writes) exceeds prices *every* token of that request. Anthropic's one-hour
cache writes (``cacheWrite1h``, a subset of ``cacheWrite``) cost twice the base input price
instead of the cache-write price.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_ZERO_COST: dict[str, float] = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}


def zero_cost() -> dict[str, float]:
    """A fresh all-zero cost (copying a made dict is cheaper than building one: every stream makes one)."""
    return _ZERO_COST.copy()


def usage_count(usage: object, key: str) -> int:
    """A reported usage figure when it is a positive integer, else 0 (a file may hold anything)."""
    value = usage.get(key) if isinstance(usage, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def select_rates(cost: Mapping[str, Any], input_tokens: float) -> Mapping[str, Any]:
    """The rate card for a request with this many input tokens (base rates or the matching tier)."""
    rates: Mapping[str, Any] = cost
    matched = -1.0
    for tier in cost.get("tiers") or ():
        threshold = tier["inputTokensAbove"]
        if input_tokens > threshold and threshold > matched:
            rates = tier
            matched = threshold
    return rates


def _tokens(usage: Mapping[str, Any], key: str) -> float:
    """A token count of a recorded usage: a usage read from a file may lack one (pi-ai's own
    always has all four), and counts as none (design T9: its shape was checked as numbers)."""
    value = usage.get(key)
    return value if type(value) is int or type(value) is float else 0


def calculate_cost(model: Mapping[str, Any], usage: dict[str, Any]) -> dict[str, float]:
    """Fill ``usage["cost"]`` from ``model["cost"]`` in place and return it.

    A model without prices (``cost`` missing) costs nothing rather than failing: local and
    emulator routes have no catalog price.
    """
    cost_card: Mapping[str, Any] = model.get("cost") or {}
    fresh, cache_read, cache_write = (
        _tokens(usage, "input"),
        _tokens(usage, "cacheRead"),
        _tokens(usage, "cacheWrite"),
    )
    rates = select_rates(cost_card, fresh + cache_read + cache_write) if cost_card.get("tiers") else cost_card
    input_rate = float(rates.get("input", 0) or 0)
    long_write = _tokens(usage, "cacheWrite1h")
    cost = usage.get("cost")
    if type(cost) is not dict:
        cost = usage["cost"] = zero_cost()
    cost["input"] = (input_rate / 1_000_000) * fresh
    cost["output"] = (float(rates.get("output", 0) or 0) / 1_000_000) * _tokens(usage, "output")
    cost["cacheRead"] = (float(rates.get("cacheRead", 0) or 0) / 1_000_000) * cache_read
    cost["cacheWrite"] = (
        float(rates.get("cacheWrite", 0) or 0) * (cache_write - long_write) + input_rate * 2 * long_write
    ) / 1_000_000
    cost["total"] = cost["input"] + cost["output"] + cost["cacheRead"] + cost["cacheWrite"]
    return cost  # type: ignore[no-any-return]
