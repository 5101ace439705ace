"""The emulator's reported cache usage is what the product's prompt cache computes (design P6).

Every family, over real sockets: a conversation whose prefix grows and then changes is sent to
the emulator, and the usage pi-ai's parsers read back equals, request by request, a cold
``PromptCache`` fed the same bodies through the preview's entry point (``prompt_for_model``,
the route's model dict), so the preview and the emulator cannot drift apart.
"""

from __future__ import annotations

from typing import Any

import pytest

from desktop.emulator import Emulator
from desktop.host.providers import send_streaming
from desktop.pi.cache_rules import prompt_for_model
from desktop.pi.prompt_cache import PromptCache
from tests.wire.families import FAMILIES, FAMILY_IDS, Family

SYSTEM = "You are a careful coding assistant working in a repository. " * 60


@pytest.mark.parametrize("family", FAMILIES, ids=FAMILY_IDS)
def test_reported_usage_is_the_rules_module_s(emu: Emulator, family: Family) -> None:
    model = family.model(emu)
    turns: list[Any] = []
    reported: list[tuple[int, int, int]] = []
    systems = [SYSTEM] * 4 + ["A different system prompt. " * 80]
    for n, system in enumerate(systems):
        turns.append(("user", f"Step {n}: " + "please extend the parser with more cases. " * 14))
        message = send_streaming(family.request(emu, system, turns), model=model, api_key="k")
        assert message["stopReason"] == "stop", message.get("errorMessage")
        usage = message["usage"]
        reported.append((usage["input"], usage["cacheRead"], usage["cacheWrite"]))
        turns.append(("assistant", message))

    cache = PromptCache()
    predicted = []
    for request in emu.requests:
        accounted = cache.send(prompt_for_model(model, request.json()))
        predicted.append((accounted.fresh, accounted.read, accounted.written))
    assert predicted == reported
    assert any(read for _, read, _ in reported[1:4]), "the conversation exercises cache reads"
    assert reported[4][1] == 0, "the changed system prompt reads nothing"
