"""Each API family end to end over real loopback sockets: answer, tool round trip, caching."""

from __future__ import annotations

from typing import Any

import pytest

from desktop.emulator import Emulator
from desktop.host.providers import send_streaming
from tests.wire.families import FAMILIES, FAMILY_IDS, READ_TOOL, Family

SYSTEM = "You are a careful coding assistant working in a repository. " * 60  # ~900 tokens


def _run(emu: Emulator, family: Family, turns: list[Any], tools: list[dict[str, Any]] | None = None,
         system: str = SYSTEM) -> tuple[dict[str, Any], list[dict[str, Any]]]:  # fmt: skip
    events: list[dict[str, Any]] = []
    message = send_streaming(
        family.request(emu, system, turns, tools),
        model=family.model(emu),
        api_key="sk-test-0000",
        on_event=events.append,
    )
    return message, events


@pytest.mark.parametrize("family", FAMILIES, ids=FAMILY_IDS)
def test_streamed_answer(emu: Emulator, family: Family) -> None:
    message, events = _run(emu, family, [("user", "What is in the README? [[think]]")])

    assert message["stopReason"] == "stop", message.get("errorMessage")
    assert message["api"] == family.api and message["model"] == family.model_id
    kinds = [b["type"] for b in message["content"]]
    assert kinds == ["thinking", "text"]
    assert message["content"][1]["text"] == "Echo: What is in the README?"
    types = [e["type"] for e in events]
    assert types[0] == "start" and types[-1] == "done"
    assert types.count("text_delta") >= 2, "the answer should arrive in several deltas"
    streamed = "".join(e["delta"] for e in events if e["type"] == "text_delta")
    assert streamed == message["content"][1]["text"]
    # Usage is what the emulator accounted for this request, mapped the pi-ai way.
    cache = emu.requests[-1].cache
    assert cache is not None
    usage = message["usage"]
    assert usage["input"] + usage["cacheRead"] + usage["cacheWrite"] == cache.total
    assert usage["output"] > 0 and usage["cost"]["total"] > 0
    # The key reached the server in the family's auth header.
    headers = emu.requests[-1].headers
    assert "sk-test-0000" in " ".join(headers.values())


@pytest.mark.parametrize("family", FAMILIES, ids=FAMILY_IDS)
def test_tool_call_round_trip(emu: Emulator, family: Family) -> None:
    ask = ("user", 'Please look. [[tool:read {"path": "notes/todo.txt"}]]')
    first, events = _run(emu, family, [ask], [READ_TOOL])

    assert first["stopReason"] == "toolUse", first.get("errorMessage")
    calls = [b for b in first["content"] if b["type"] == "toolCall"]
    assert [(c["name"], c["arguments"]) for c in calls] == [("read", {"path": "notes/todo.txt"})]
    assert calls[0]["id"]
    assert [e["type"] for e in events if e["type"].startswith("toolcall")][-1] == "toolcall_end"
    sent = emu.requests[-1].json()
    assert "read" in str(sent.get("tools"))

    second, _ = _run(emu, family, [ask, ("assistant", first), ("tool", calls[0], "buy milk")], [READ_TOOL])

    assert second["stopReason"] == "stop", second.get("errorMessage")
    assert second["content"][-1]["text"] == "Tool read returned: buy milk"


@pytest.mark.parametrize("family", FAMILIES, ids=FAMILY_IDS)
def test_cache_reads_grow_with_a_stable_prefix_and_reset_when_it_changes(
    emu: Emulator, family: Family
) -> None:
    turns: list[Any] = []
    reads: list[int] = []
    for n in range(4):
        turns.append(("user", f"Step {n}: " + "please extend the parser with more cases. " * 14))
        message, _ = _run(emu, family, turns)
        assert message["stopReason"] == "stop", message.get("errorMessage")
        reads.append(message["usage"]["cacheRead"])
        turns.append(("assistant", message))

    assert reads[0] == 0
    assert reads[1] > 0
    assert reads == sorted(reads) and len(set(reads[1:])) == 3, f"reads should grow turn by turn: {reads}"

    changed, _ = _run(emu, family, [*turns, ("user", "and now?")], system="A different system prompt. " * 80)
    assert changed["usage"]["cacheRead"] == 0


def test_anthropic_reports_cache_writes_then_reads(emu: Emulator) -> None:
    family = FAMILIES[0]
    short, _ = _run(emu, family, [("user", "hello")])
    assert short["usage"]["cacheWrite"] == 0, "a prompt under 1024 tokens is never cached"

    system = SYSTEM * 2
    first, _ = _run(emu, family, [("user", "hello")], system=system)
    second, _ = _run(emu, family, [("user", "hello"), ("assistant", first), ("user", "again")], system=system)

    assert first["usage"]["cacheRead"] == 0 and first["usage"]["cacheWrite"] > 1024
    assert second["usage"]["cacheRead"] == first["usage"]["cacheWrite"]
    assert second["usage"]["cacheWrite"] > 0  # the new turn up to the moved breakpoint
    assert second["usage"]["cost"]["cacheRead"] == pytest.approx(second["usage"]["cacheRead"] * 0.3 / 1e6)


def test_openai_prompt_cache_key_partitions_the_cache(emu: Emulator) -> None:
    import orjson

    from desktop.host.providers import WireRequest

    family = FAMILIES[1]
    model = family.model(emu)
    base = family.request(emu, SYSTEM * 2, [("user", "hi")])
    body = orjson.loads(base.body)

    def send(key: str) -> dict[str, Any]:
        request = WireRequest(base.url, orjson.dumps({**body, "prompt_cache_key": key}))
        return send_streaming(request, model=model, api_key="k")

    assert send("session-a")["usage"]["cacheRead"] == 0
    assert send("session-a")["usage"]["cacheRead"] >= 1024
    assert send("session-b")["usage"]["cacheRead"] == 0
