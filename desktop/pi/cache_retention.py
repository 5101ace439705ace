"""How long each provider keeps a prompt cache, and what that means now (design P9).

A cache written at one request is gone some minutes of inactivity later: a user back from
lunch must not be told the cache is warm. Each rule below is the provider's documented
retention (sources in ``docs/design.md``, P9); every use of the prefix (a read or a write)
starts the window again, which is what "refreshed by each read" and "minutes of inactivity"
both mean. Pure functions of (timestamps, rule, now): no clock is read here, so the window,
``status``, the what-if replay and the emulator (with a clock a test sets) agree.

Bad timestamps (missing, out of order, in the future) give the state ``unknown``: the
figures fall back to the warm assumption and say so; nothing raises.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from desktop.pi.cost import usage_count

State = Literal["warm", "expired", "cold", "unknown"]

MINUTE = 60
HOUR = 60 * MINUTE


@dataclass(frozen=True, slots=True)
class Retention:
    """One provider's retention: how long an unused prefix stays readable."""

    name: str
    #: Seconds of inactivity after which the prefix is predicted expired.
    ttl_s: int
    #: What the provider documents, in a few words (shown with the figures).
    note: str


RETENTIONS: dict[str, Retention] = {
    "anthropic": Retention("anthropic", 5 * MINUTE, "5 minutes, refreshed by each read"),
    "anthropic-1h": Retention("anthropic-1h", HOUR, "1 hour (cache_control ttl 1h), refreshed by each read"),
    "bedrock": Retention("bedrock", 5 * MINUTE, "5 minutes, refreshed by each cache hit"),
    "bedrock-1h": Retention("bedrock-1h", HOUR, "1 hour (cachePoint ttl 1h), refreshed by each cache hit"),
    "openai": Retention(
        "openai", 5 * MINUTE, "in-memory: 5 to 10 minutes of inactivity (up to 1 hour off-peak); 5 assumed"
    ),
    "openai-24h": Retention("openai-24h", 24 * HOUR, "extended retention (prompt_cache_retention 24h)"),
    "google": Retention("google", 5 * MINUTE, "implicit caching, retention not published; 5 minutes assumed"),
    "deepseek": Retention("deepseek", HOUR, "disk cache, cleared within hours to days; 1 hour assumed"),
    "mistral": Retention("mistral", 5 * MINUTE, "retention not published; OpenAI's 5 minutes assumed"),
    "none": Retention("none", 0, "no prompt cache"),
}


def asks_long(body: Mapping[str, Any]) -> bool:
    """Whether the request body asks for long retention (Anthropic/Bedrock ``ttl: "1h"``
    markers, OpenAI's ``prompt_cache_retention: "24h"``).

    Markers sit where pi-ai puts them: the system prompt, the tools and the last messages, so
    only those are read (a replay asks this of every request; reading the whole body each
    time would make it quadratic)."""
    if body.get("prompt_cache_retention") == "24h":
        return True
    places: list[Any] = []
    for key in ("system", "tools"):
        value = body.get(key)
        if isinstance(value, list):
            places.extend(value)
    config = body.get("toolConfig")
    if isinstance(config, Mapping) and isinstance(config.get("tools"), list):
        places.extend(config["tools"])
    messages = body.get("messages")
    if isinstance(messages, list):
        for message in messages[-3:]:
            content = message.get("content") if isinstance(message, Mapping) else None
            if isinstance(content, list):
                places.extend(content)
    return any(_long_marker(place) for place in places)


def _long_marker(block: Any) -> bool:
    if not isinstance(block, Mapping):
        return False
    for key in ("cache_control", "cachePoint"):
        marker = block.get(key)
        if isinstance(marker, Mapping) and marker.get("ttl") == "1h":
            return True
    return False


def retention_for(rule: str, *, long: bool = False) -> Retention:
    """The retention of a cache rule (``desktop.pi.cache_rules.RULES`` names), long or short."""
    if long and rule in ("anthropic", "bedrock"):
        return RETENTIONS[f"{rule}-1h"]
    if long and rule == "openai":
        return RETENTIONS["openai-24h"]
    return RETENTIONS.get(rule, RETENTIONS["none"])


@dataclass(frozen=True, slots=True)
class CacheClock:
    """The cache of one route at one moment."""

    state: State
    #: Seconds until the warm prefix expires (``None`` unless warm).
    seconds_left: float | None
    #: What the state rests on, for people ("time unknown: ...", the retention rule).
    note: str
    retention: Retention

    @property
    def warm(self) -> bool:
        """Whether the cache is predicted readable (``unknown`` assumes it is, and says so)."""
        return self.state in ("warm", "unknown")

    def label(self) -> str:
        """The status line: "cache warm · 3:12 left", "cache expired", "cache cold"."""
        if self.state == "warm" and self.seconds_left is not None:
            return f"cache warm · {countdown(self.seconds_left)} left"
        if self.state == "unknown":
            return "cache warm? time unknown"
        return f"cache {self.state}"

    def to_json(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "secondsLeft": None if self.seconds_left is None else round(self.seconds_left, 1),
            "retention": self.retention.name,
            "retentionSeconds": self.retention.ttl_s,
            "note": self.note,
        }


def countdown(seconds: float) -> str:
    """``m:ss`` (``h:mm:ss`` past an hour) of a non-negative number of seconds."""
    whole = max(0, int(seconds))
    hours, rest = divmod(whole, HOUR)
    minutes, secs = divmod(rest, MINUTE)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def clock(timestamps_ms: Sequence[object], retention: Retention, now_ms: int) -> CacheClock:
    """The cache state at ``now_ms`` after requests sent at ``timestamps_ms`` (Unix ms,
    oldest first) on one route. No request: cold. The last use plus the retention decides
    warm or expired; bad timestamps give ``unknown`` with the warm assumption stated."""
    if retention.ttl_s <= 0:
        return CacheClock("cold", None, "no prompt cache is known for this API", retention)
    if not timestamps_ms:
        return CacheClock("cold", None, "no request on this route in this session yet", retention)
    stamps = [t for t in timestamps_ms if isinstance(t, int) and not isinstance(t, bool)]
    problem = ""
    if len(stamps) != len(timestamps_ms):
        problem = "a request has no timestamp"
    elif any(b < a for a, b in itertools.pairwise(stamps)):
        problem = "the timestamps are out of order"
    elif stamps[-1] > now_ms:
        problem = "the last timestamp is in the future"
    if problem:
        return CacheClock("unknown", None, f"time unknown ({problem}): the cache is assumed warm", retention)
    idle = (now_ms - stamps[-1]) / 1000
    left = retention.ttl_s - idle
    if left > 0:
        return CacheClock("warm", left, f"retention: {retention.note}", retention)
    return CacheClock("expired", None, f"unused for longer than the retention ({retention.note})", retention)


def route_times(messages: Sequence[Any], model: Mapping[str, Any]) -> list[object]:
    """When each reply on ``model``'s route (provider, model id, API) was recorded, oldest
    first, from the transcript: the uses of that route's provider cache this session made.
    A reply without a usable time is kept as ``None`` (the clock says "time unknown")."""
    key = (model.get("provider"), model.get("id"), model.get("api"))
    out: list[object] = []
    for message in messages:
        if not isinstance(message, Mapping) or message.get("role") != "assistant":
            continue
        if (message.get("provider"), message.get("model"), message.get("api")) != key:
            continue
        stamp = message.get("timestamp")
        out.append(stamp if isinstance(stamp, int) and not isinstance(stamp, bool) else None)
    return out


def _price(model: Mapping[str, Any], key: str) -> float | None:
    cost = model.get("cost")
    value = cost.get(key) if isinstance(cost, Mapping) else None
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def next_send_cost(model: Mapping[str, Any], usage: Mapping[str, Any] | None, rule: str) -> dict[str, Any]:
    """The input cost of the next send now (warm) and after expiry, from the last reply's
    reported usage: the prefix it sent is read from the cache while warm and processed again
    (written, for breakpoint rules) once expired; its reply is the new part either way. The
    next message's own text is not counted. ``None`` figures: price unknown."""
    prefix = sum(usage_count(usage, key) for key in ("input", "cacheRead", "cacheWrite"))
    new = usage_count(usage, "output")
    # Both counts are the provider's own (design P12): the last reply's reported usage.
    units = "reported by the provider for the last reply" if prefix or new else "no reply reported usage yet"
    fresh_price = _price(model, "cacheWrite" if rule in ("anthropic", "bedrock") else "input")
    read_price = _price(model, "cacheRead")
    if rule == "none":
        read_price = fresh_price
    now = after = None
    if fresh_price is not None and read_price is not None:
        now = round((prefix * read_price + new * fresh_price) / 1e6, 6)
        after = round((prefix + new) * fresh_price / 1e6, 6)
    return {
        "prefixTokens": prefix,
        "newTokens": new,
        "units": units,
        "now": now,
        "afterExpiry": after,
        "priceKnown": now is not None,
    }


def cache_status(
    messages: Sequence[Any], model: Mapping[str, Any], rule: str, now_ms: int, *, long: bool = False
) -> dict[str, Any]:
    """``status --json``'s cache figures for the route ``model``: the state and time left
    (design P9), and the next send's input cost now and after expiry."""
    times = route_times(messages, model)
    last_usage: Mapping[str, Any] | None = None
    for message in reversed(messages):
        if not isinstance(message, Mapping) or message.get("role") != "assistant":
            continue
        if (message.get("provider"), message.get("model")) == (model.get("provider"), model.get("id")):
            found = message.get("usage")
            last_usage = found if isinstance(found, Mapping) else None
            break
    state = clock(times, retention_for(rule, long=long), now_ms)
    cost = next_send_cost(model, last_usage, rule)
    if not state.warm:  # expired or cold: the next send pays the cold price now
        cost["now"] = cost["afterExpiry"]
    return {**state.to_json(), "label": state.label(), "nextSend": cost}
