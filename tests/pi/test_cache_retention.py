"""Each provider's cache retention, by hand (design P9): warm, expired, cold and unknown.

Figures worked by hand: a request at t = 60 s with a 5-minute retention is warm until 360 s;
at 300 s it has 60 s left, at 366 s (six minutes after) it has expired. Every use refreshes.
"""

from __future__ import annotations

import pytest

from desktop.pi.cache_retention import RETENTIONS, asks_long, clock, countdown, retention_for
from desktop.pi.cache_rules import RULES, Prompt, Segment
from desktop.pi.prompt_cache import PromptCache

MIN = 60_000


@pytest.mark.parametrize(
    ("rule", "long", "ttl_min"),
    [
        ("anthropic", False, 5),
        ("anthropic", True, 60),
        ("bedrock", False, 5),
        ("bedrock", True, 60),
        ("openai", False, 5),
        ("openai", True, 24 * 60),
        ("google", False, 5),
        ("mistral", False, 5),
        ("deepseek", False, 60),
    ],
)
def test_each_rule_is_warm_inside_its_retention_and_expired_past_it(
    rule: str, long: bool, ttl_min: int
) -> None:
    retention = retention_for(rule, long=long)
    assert retention.ttl_s == ttl_min * 60
    sent = [0, MIN]  # the last use at one minute
    one_before = clock(sent, retention, MIN + (ttl_min - 1) * MIN)
    assert one_before.state == "warm" and one_before.seconds_left == pytest.approx(60)
    assert one_before.label() == "cache warm · 1:00 left"
    after = clock(sent, retention, MIN + ttl_min * MIN + 1)
    assert after.state == "expired" and after.seconds_left is None and not after.warm


def test_idle_gaps_of_4_6_and_61_minutes() -> None:
    short, long = retention_for("anthropic"), retention_for("anthropic", long=True)
    openai = retention_for("openai")
    states = {
        gap: (
            clock([0], short, gap * MIN).state,
            clock([0], long, gap * MIN).state,
            clock([0], openai, gap * MIN).state,
        )
        for gap in (4, 6, 61)
    }
    assert states == {
        4: ("warm", "warm", "warm"),
        6: ("expired", "warm", "expired"),
        61: ("expired", "expired", "expired"),
    }
    assert clock([0], short, 4 * MIN + 48_000).label() == "cache warm · 0:12 left"
    assert clock([0], long, 6 * MIN).label() == "cache warm · 54:00 left"


@pytest.mark.parametrize(
    ("stamps", "why"),
    [
        ([0, None], "a request has no timestamp"),
        ([5 * MIN, MIN], "out of order"),
        ([0, 99 * MIN], "in the future"),
        ([0, "noon"], "a request has no timestamp"),
    ],
)
def test_bad_timestamps_say_time_unknown_and_assume_warm(stamps: list[object], why: str) -> None:
    state = clock(stamps, retention_for("anthropic"), 10 * MIN)
    assert state.state == "unknown" and state.warm
    assert why in state.note and "assumed warm" in state.note
    assert state.label() == "cache warm? time unknown"


def test_no_request_is_cold_and_no_cache_is_cold() -> None:
    assert clock([], retention_for("openai"), 0).state == "cold"
    assert clock([0], RETENTIONS["none"], 1).state == "cold"
    assert countdown(3 * 60 + 12) == "3:12" and countdown(3600 + 5) == "1:00:05"


def test_long_retention_is_read_from_the_body() -> None:
    assert asks_long(
        {"system": [{"type": "text", "text": "x", "cache_control": {"type": "ephemeral", "ttl": "1h"}}]}
    )
    assert asks_long({"prompt_cache_retention": "24h"})
    assert asks_long({"messages": [{"content": [{"cachePoint": {"type": "default", "ttl": "1h"}}]}]})
    assert not asks_long({"system": [{"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}]})


def _anthropic(long: bool) -> Prompt:
    blocks = tuple(
        Segment(
            "system:" + "s" * 4000 * (i + 1), "system", f"block {i}", ("system", i), "1h" if long else "5m"
        )
        for i in range(2)
    )
    return Prompt(RULES["anthropic"], "claude-sonnet-4-5", "m", blocks, None, long)


def test_the_cache_expires_and_each_read_refreshes() -> None:
    cache = PromptCache()
    total = _anthropic(False).total_tokens  # 1,000 + 2,000 tokens, both breakpoints
    assert cache.send(_anthropic(False), 0).written == total
    assert cache.send(_anthropic(False), 4 * MIN).read == total  # 4 minutes: warm
    assert cache.send(_anthropic(False), 8 * MIN).read == total  # refreshed at 4: still warm
    assert cache.send(_anthropic(False), 14 * MIN + 1).read == 0  # 6 minutes idle: expired
    hour = PromptCache()
    hour.send(_anthropic(True), 0)
    assert hour.predict(_anthropic(True), 59 * MIN).read == total
    assert hour.predict(_anthropic(True), 61 * MIN).read == 0
    assert hour.predict(_anthropic(True)).read == total  # no time: no expiry


def test_status_figures_warm_then_after_expiry_by_hand() -> None:
    from desktop.pi.cache_retention import cache_status

    model = {
        "provider": "anthropic",
        "id": "claude-sonnet-4-5",
        "api": "anthropic-messages",
        "cost": {"input": 3.0, "output": 15.0, "cacheRead": 0.3, "cacheWrite": 3.75},
    }
    reply = {
        "role": "assistant",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "api": "anthropic-messages",
        "usage": {"input": 1_000, "cacheRead": 9_000, "cacheWrite": 0, "output": 500},
        "timestamp": 0,
    }
    other = {**reply, "model": "claude-opus-5-5", "timestamp": 10 * MIN}  # another route: not a use
    warm = cache_status([{"role": "user"}, reply, other], model, "anthropic", 48_000)
    assert warm["state"] == "warm" and warm["label"] == "cache warm · 4:12 left"
    # Warm: 10,000 prefix tokens read at $0.30/M + 500 new written at $3.75/M = 0.003 + 0.001875.
    # Expired: 10,500 written at $3.75/M = 0.039375.
    assert warm["nextSend"]["now"] == pytest.approx(0.004875)
    assert warm["nextSend"]["afterExpiry"] == pytest.approx(0.039375)
    late = cache_status([reply], model, "anthropic", 6 * MIN)
    assert late["state"] == "expired" and late["nextSend"]["now"] == pytest.approx(0.039375)
    unpriced = cache_status([reply], {**model, "cost": {}}, "anthropic", 0)
    assert unpriced["nextSend"]["priceKnown"] is False and unpriced["nextSend"]["now"] is None
