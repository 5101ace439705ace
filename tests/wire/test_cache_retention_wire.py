"""The emulator's cache expires by each provider's documented retention (design P9).

The emulator keeps its own cache rules, written from the providers' pages (design P11), so
the product's predictions are checked against the documented behaviour, not against themselves.

A clock the test sets drives the emulator: a conversation is sent with idle gaps of 4, 6 and
61 minutes on Anthropic (5-minute and 1-hour markers) and OpenAI (in-memory retention), and
the cache reads pi-ai's parsers report are those the retention rules predict: a read after 4
minutes, nothing after 6 on the short retentions, nothing after 61 on any.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from desktop.emulator import Emulator
from desktop.host.providers import WireRequest, send_streaming
from desktop.pi.cache_retention import asks_long, clock, retention_for
from desktop.pi.cache_rules import prompt_for_model
from desktop.pi.prompt_cache import PromptCache
from tests.wire.families import FAMILIES, Family

SYSTEM = "You are a careful coding assistant working in a repository. " * 60
MIN = 60_000
GAPS = (4, 6, 61)


def _long(request: WireRequest) -> WireRequest:
    """The same request asking for 1-hour retention on every cache marker."""
    body = orjson.loads(request.body)
    for block in [*body.get("system", []), *body.get("tools", [])] + [
        b for m in body.get("messages", []) if isinstance(m.get("content"), list) for b in m["content"]
    ]:
        if "cache_control" in block:
            block["cache_control"] = {"type": "ephemeral", "ttl": "1h"}
    return WireRequest(request.url, orjson.dumps(body), request.headers)


def _family(name: str, api: str) -> Family:
    return next(f for f in FAMILIES if f.name == name and f.api == api)


@pytest.mark.parametrize(
    ("family", "long", "reads"),
    [
        (_family("anthropic", "anthropic-messages"), False, [True, False, False]),
        (_family("anthropic", "anthropic-messages"), True, [True, True, False]),
        (_family("openai", "openai-responses"), False, [True, False, False]),
    ],
    ids=["anthropic-5m", "anthropic-1h", "openai"],
)
def test_idle_gaps_expire_the_emulator_cache_as_the_rules_say(
    family: Family, long: bool, reads: list[bool]
) -> None:
    now = [10 * MIN]
    with Emulator() as emu:
        emu.clock = lambda: now[0]
        model = family.model(emu)
        turns: list[Any] = []
        reported: list[int] = []
        for n, gap in enumerate((0, *GAPS)):
            now[0] += gap * MIN
            turns.append(("user", f"Step {n}: " + "please extend the parser with more cases. " * 14))
            request = family.request(emu, SYSTEM, turns)
            request = _long(request) if long else request
            message = send_streaming(request, model=model, api_key="k")
            reported.append(message["usage"]["cacheRead"])
            turns.append(("assistant", message))
        bodies = [r.json() for r in emu.requests]
    assert [read > 0 for read in reported[1:]] == reads
    # The pure rules predict the same, from the same times: the clock's state before each
    # send, and the prompt cache fed the bodies with their times.
    retention = retention_for(prompt_for_model(model, bodies[0]).rule.name, long=asks_long(bodies[0]))
    times = [10 * MIN]
    for gap in GAPS:
        times.append(times[-1] + gap * MIN)
    assert [clock(times[:i], retention, times[i]).warm for i in range(1, 4)] == reads
    cache = PromptCache()
    predicted = [cache.send(prompt_for_model(model, b), t).read for b, t in zip(bodies, times, strict=True)]
    assert predicted == reported
