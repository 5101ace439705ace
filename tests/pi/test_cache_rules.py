"""The one prompt-cache rules module (design P6): each provider's rule, and the byte spans.

The emulator's own accounting is checked against the module in ``tests/wire/test_cache_rules_wire.py``
(real sockets); here the rules themselves are pinned on hand-built bodies.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from desktop.pi.cache_rules import (
    ANTHROPIC_LOOKBACK_BLOCKS,
    CHARS_PER_TOKEN,
    WIRE_OF_API,
    estimate_tokens,
    json_spans,
    prompt_for_model,
    read_prompt,
    rule_for,
)
from desktop.pi.cost import calculate_cost
from desktop.pi.prompt_cache import PromptCache
from tests.pi.pi_ai_cases import load_cases

EPHEMERAL = {"type": "ephemeral"}


def text_of_tokens(tokens: int, fill: str = "x") -> str:
    return fill * (tokens * CHARS_PER_TOKEN)


def anthropic_body(
    system: str, turns: list[str], *, model: str = "claude-sonnet-4-5", system_breakpoint: bool = True
) -> dict[str, Any]:
    messages = [{"role": "user", "content": [{"type": "text", "text": t}]} for t in turns]
    messages[-1]["content"][-1]["cache_control"] = EPHEMERAL
    block: dict[str, Any] = {"type": "text", "text": system}
    if system_breakpoint:
        block["cache_control"] = EPHEMERAL
    return {"model": model, "system": [block], "messages": messages}


def test_rules_follow_the_route() -> None:
    assert rule_for("anthropic-messages", "anthropic").name == "anthropic"
    assert rule_for("bedrock-converse-stream", "amazon-bedrock").name == "bedrock"
    assert rule_for("openai-completions", "deepseek").name == "deepseek"
    assert rule_for("openai-completions", "openrouter").name == "openai"
    assert rule_for("mistral-conversations", "mistral").name == "mistral"
    assert rule_for("openai-responses", "openai").step_tokens == 128
    assert rule_for("google-vertex", "google-vertex").name == "google"
    assert rule_for("pi-messages", "pi").kind == "none"
    assert rule_for("deepseek-chat", "x").kind == "none"  # an unknown API caches nothing
    assert set(WIRE_OF_API) >= {"anthropic-messages", "openai-completions", "google-generative-ai"}


def test_anthropic_writes_at_a_breakpoint_then_reads_it_exactly() -> None:
    sim = PromptCache()
    system = text_of_tokens(1500)
    first = sim.send(read_prompt("anthropic", "anthropic", anthropic_body(system, ["hi"])))
    assert first.read == 0 and first.written == first.total and first.fresh == 0
    second = sim.send(read_prompt("anthropic", "anthropic", anthropic_body(system, ["hi", "again"])))
    assert second.read == first.total, "reads exactly the prefix written at the old breakpoint"
    assert second.read_segments == 2  # system block and the first message
    assert second.written == second.total - second.read


def test_a_changed_system_prompt_reads_nothing_after_it_and_the_old_prefix_stays_cached() -> None:
    sim = PromptCache()
    one, two = text_of_tokens(1500, "a"), text_of_tokens(1500, "b")
    first = sim.send(read_prompt("anthropic", "anthropic", anthropic_body(one, ["hi"])))
    changed = sim.send(read_prompt("anthropic", "anthropic", anthropic_body(two, ["hi", "again"])))
    assert changed.read == 0, "the same messages after another system prompt are another prefix"
    assert changed.written == changed.total
    back = sim.send(read_prompt("anthropic", "anthropic", anthropic_body(one, ["hi", "again"])))
    assert back.read == first.total and back.read_segments == 2


def test_anthropic_minimum_length_depends_on_the_model() -> None:
    sim = PromptCache()
    body = anthropic_body(text_of_tokens(1500), ["hi"], model="claude-haiku-4-5")
    assert sim.send(read_prompt("anthropic", "anthropic", body)).written == 0  # under 4096
    assert sim.send(read_prompt("anthropic", "anthropic", body)).read == 0
    body = anthropic_body(text_of_tokens(900), ["hi"])
    assert sim.send(read_prompt("anthropic", "anthropic", body)).written == 0  # under 1024


def test_anthropic_looks_back_twenty_blocks_from_a_breakpoint() -> None:
    def body(blocks: int) -> dict[str, Any]:
        turns = [f"turn {n} " + "y" * 40 for n in range(blocks)]
        return anthropic_body(text_of_tokens(1200), turns, system_breakpoint=False)

    sim = PromptCache()
    written = sim.send(read_prompt("anthropic", "anthropic", body(1)))  # stored at block 1
    assert written.written == written.total
    near = sim.predict(read_prompt("anthropic", "anthropic", body(ANTHROPIC_LOOKBACK_BLOCKS)))
    far = sim.predict(read_prompt("anthropic", "anthropic", body(ANTHROPIC_LOOKBACK_BLOCKS + 1)))
    assert near.read == written.total, "block 1 is within the 20 blocks ending at the breakpoint (20)"
    assert far.read == 0, "block 1 is outside the 20 blocks ending at the breakpoint (21): a miss"
    assert far.written == far.total


def test_one_hour_writes_are_reported_apart() -> None:
    body = anthropic_body(text_of_tokens(1500), ["hi"])
    body["messages"][-1]["content"][-1]["cache_control"] = {"type": "ephemeral", "ttl": "1h"}
    usage = PromptCache().send(read_prompt("anthropic", "anthropic", body))
    assert usage.written_1h == usage.written > 0


def test_predict_reads_without_storing() -> None:
    sim = PromptCache()
    prompt = read_prompt("anthropic", "anthropic", anthropic_body(text_of_tokens(1500), ["hi"]))
    assert sim.predict(prompt).written > 0
    assert sim.predict(prompt).read == 0
    twin = sim.copy()
    sim.send(prompt)
    assert sim.predict(prompt).read == prompt.total_tokens and twin.predict(prompt).read == 0


def chat_body(messages: list[str], key: str | None = None, model: str = "gpt-4.1") -> dict[str, Any]:
    body: dict[str, Any] = {"model": model, "messages": [{"role": "user", "content": m} for m in messages]}
    if key is not None:
        body["prompt_cache_key"] = key
    return body


def test_openai_reads_whole_128_token_steps_from_1024_tokens() -> None:
    sim = PromptCache()
    first = read_prompt("chat", "openai", chat_body([text_of_tokens(1300)], key="a"))
    assert sim.send(first).read == 0
    second = read_prompt("chat", "openai", chat_body([text_of_tokens(1300), "more"], key="a"))
    usage = sim.send(second)
    assert usage.read % 128 == 0 and usage.read >= 1024
    assert first.total_tokens - 128 < usage.read <= first.total_tokens
    assert usage.written == 0
    assert usage.read_segments == 0 and usage.read_chars == usage.read * CHARS_PER_TOKEN  # inside message 1
    other_key = read_prompt("chat", "openai", chat_body([text_of_tokens(1300), "more"], key="b"))
    assert sim.predict(other_key).read == 0, "prompt_cache_key partitions the cache"
    short = read_prompt("chat", "openai", chat_body([text_of_tokens(900)], key="c"))
    sim.send(short)
    assert sim.predict(short).read == 0, "under 1,024 tokens nothing is cached"


def test_a_request_on_another_key_between_two_leaves_the_first_keys_prefix_cached() -> None:
    sim = PromptCache()
    first = read_prompt("chat", "openai", chat_body([text_of_tokens(1300)], key="a"))
    assert sim.send(first).read == 0
    assert sim.send(read_prompt("chat", "openai", chat_body([text_of_tokens(1300)], key="b"))).read == 0
    again = sim.send(read_prompt("chat", "openai", chat_body([text_of_tokens(1300), "more"], key="a")))
    assert first.total_tokens - 128 < again.read <= first.total_tokens


def test_deepseek_caches_in_64_token_units_from_the_first() -> None:
    sim = PromptCache()
    sim.send(read_prompt("chat", "deepseek", chat_body([text_of_tokens(200)], model="deepseek-chat")))
    usage = sim.predict(
        read_prompt("chat", "deepseek", chat_body([text_of_tokens(200), "next"], model="deepseek-chat"))
    )
    assert usage.read % 64 == 0 and 128 <= usage.read <= 200


def test_gemini_pro_needs_4096_tokens() -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": text_of_tokens(2000)}]}]}
    for model, cached in (("gemini-2.5-flash", True), ("gemini-2.5-pro", False)):
        sim = PromptCache()
        sim.send(read_prompt("google", "google", body, model))
        assert (sim.predict(read_prompt("google", "google", body, model)).read > 0) is cached, model


def test_bedrock_cache_point_marks_the_block_before_it() -> None:
    body = {
        "system": [{"text": text_of_tokens(1200)}, {"cachePoint": {"type": "default"}}],
        "messages": [{"role": "user", "content": [{"text": "hi"}, {"cachePoint": {"type": "default"}}]}],
    }
    prompt = read_prompt("bedrock", "amazon-bedrock", body, "anthropic.claude-sonnet-4-5")
    assert [s.breakpoint for s in prompt.segments] == ["5m", "5m"]
    assert [s.label for s in prompt.segments] == ["system block 1", "message 1 (user), block 1"]
    sim = PromptCache()
    first, second = sim.send(prompt), sim.send(prompt)
    assert first.written == prompt.total_tokens and second.read == prompt.total_tokens


def test_usage_and_cost_are_pi_ai_s() -> None:
    model = {"cost": {"input": 3.0, "output": 15.0, "cacheRead": 0.3, "cacheWrite": 3.75}}
    sim = PromptCache()
    body = anthropic_body(text_of_tokens(1500), ["hi"])
    sim.send(read_prompt("anthropic", "anthropic", body))
    usage = sim.send(read_prompt("anthropic", "anthropic", anthropic_body(text_of_tokens(1500), ["hi", "x"])))
    pi = usage.pi_usage(output=10)
    assert (pi["input"], pi["cacheRead"], pi["cacheWrite"]) == (usage.fresh, usage.read, usage.written)
    assert pi["totalTokens"] == usage.total + 10
    assert usage.cost(model, 10) == calculate_cost(model, dict(pi))
    assert usage.cost(model)["cacheRead"] == pytest.approx(usage.read * 0.3 / 1e6)


def test_segments_name_tools_and_messages_in_cache_order() -> None:
    body = {
        "model": "claude-sonnet-4-5",
        "messages": [{"role": "user", "content": "hello"}],
        "system": "be brief",
        "tools": [{"name": "read", "input_schema": {}}],
    }
    prompt = prompt_for_model({"api": "anthropic-messages", "provider": "anthropic", "id": "x"}, body)
    assert [(s.section, s.label) for s in prompt.segments] == [
        ("tools", "tool 'read'"),
        ("system", "system prompt"),
        ("messages", "message 1 (user)"),
    ]
    assert prompt.model == "claude-sonnet-4-5"  # the body's model, as the provider sees it
    assert estimate_tokens("abcde") == 2


def _fixture_cases() -> list[dict[str, Any]]:
    return [c for c in load_cases() if isinstance(c.get("body"), dict)]


def _at(body: Any, path: tuple[str | int, ...]) -> Any:
    for step in path:
        body = body[step]
    return body


def test_every_segment_span_marks_its_value_in_the_exact_body_bytes() -> None:
    """Over every pi-ai conformance body: each span cut from ``orjson.dumps(body)`` (the bytes a
    ``ProviderRequest`` sends) decodes to the segment's own value, and a path that names
    nothing has no span."""
    checked = 0
    for case in _fixture_cases():
        body = case["body"]
        data = orjson.dumps(body)
        segments = prompt_for_model(case["model"], body).segments
        paths = [segment.path for segment in segments]
        spans = json_spans(body, [*paths, ("nope",), *([(*paths[-1], "nope")] if paths else [])])
        for path, span in zip(paths, spans, strict=False):
            assert span is not None, (case["name"], path)
            assert data[span[0] : span[1]] == orjson.dumps(_at(body, path)), (case["name"], path)
            checked += 1
        assert spans[len(paths) :] == [None] * (len(spans) - len(paths)), case["name"]
    assert checked > 500
