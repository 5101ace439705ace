"""The cache view predicts in the provider's terms and says where and why the cache ends (design P6, G4).

Hand-built bodies with figures worked out from the rules module's documented units (four
characters per token over canonical JSON); the emulator comparison over a long conversation is
in ``tests/session/test_cache_prediction.py``.
"""

from __future__ import annotations

from typing import Any

import orjson

from desktop.pi.cache_view import check, predict

DEEPSEEK: dict[str, Any] = {
    "api": "openai-completions",
    "provider": "deepseek",
    "id": "deepseek-flash",
    "cost": {"input": 1.0, "output": 2.0, "cacheRead": 0.1, "cacheWrite": 0.0},
}
OPUS: dict[str, Any] = {
    "api": "anthropic-messages",
    "provider": "anthropic",
    "id": "claude-opus-5-5",
    "cost": {"input": 15.0, "output": 75.0, "cacheRead": 1.5, "cacheWrite": 18.75},
}


def chat(*texts: str) -> bytes:
    messages = [{"role": "user" if i % 2 == 0 else "assistant", "content": t} for i, t in enumerate(texts)]
    return orjson.dumps({"model": "deepseek-flash", "messages": messages})


def test_deepseek_reads_the_previous_prefix_in_64_token_units() -> None:
    first = chat("A" * 995)  # 1024 canonical chars: 256 tokens
    second = chat("A" * 995, "B" * 222, "C" * 227)  # 1536 chars: 384 tokens
    prediction = predict(DEEPSEEK, second, [first])
    assert (prediction.total, prediction.cached, prediction.uncached) == (384, 256, 128)
    assert prediction.ends_after == "message 1 (user)"
    assert prediction.first_change == "message 2 (assistant) (messages) is new since the previous request"
    # The marker sits right after the first message in the body's own bytes.
    assert second[: prediction.marker_byte].endswith(b'AAA"}')
    assert prediction.cost["input"] == 128 / 1e6 and prediction.cost["cacheRead"] == 256 * 0.1 / 1e6


def test_a_changed_front_reads_nothing_and_names_the_change() -> None:
    first = chat("A" * 995, "B" * 222, "C" * 227)
    changed = chat("Z" * 995, "B" * 222, "C" * 227)
    prediction = predict(DEEPSEEK, changed, [first])
    assert prediction.cached == 0 and prediction.marker_byte == 0
    assert "message 1 (user) (messages) changed" in prediction.why


def anthropic(tools: list[str], user: list[str]) -> bytes:
    body = {
        "model": "claude-opus-5-5",
        "tools": [{"name": n, "description": "d" * 2000, "input_schema": {}} for n in tools],
        "system": [{"type": "text", "text": "S" * 2000, "cache_control": {"type": "ephemeral"}}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": t, "cache_control": {"type": "ephemeral"}}]}
            for t in user
        ],
    }
    return orjson.dumps(body)


def test_anthropic_cache_ends_at_the_breakpoint_before_the_change() -> None:
    first = anthropic(["read", "write"], ["hello " * 50])
    same_tools = anthropic(["read", "write"], ["hello " * 50, "more " * 40])
    prediction = predict(OPUS, same_tools, [first])
    assert prediction.cached > 0 and prediction.ends_after == "message 1 (user), block 1"
    assert prediction.cached + prediction.written + prediction.uncached == prediction.total
    assert prediction.written > 0 and prediction.uncached == 0  # the new message up to its breakpoint
    changed_tool = anthropic(["read", "edit"], ["hello " * 50])
    broken = predict(OPUS, changed_tool, [first])
    assert broken.cached == 0
    assert "tool 'edit' (tools) changed" in broken.why


def test_check_is_exact_for_breakpoints_and_one_unit_for_prefix_rules() -> None:
    first = chat("A" * 995)
    prediction = predict(DEEPSEEK, chat("A" * 995, "B" * 222, "C" * 227), [first])
    assert check(prediction, {"input": 128, "cacheRead": 256, "cacheWrite": 0}).ok
    assert check(prediction, {"input": 64, "cacheRead": 320, "cacheWrite": 0}).ok  # one 64-token unit
    off = check(prediction, {"input": 0, "cacheRead": 384, "cacheWrite": 0})
    assert not off.ok and "predicted 256 cached tokens, the provider read 384" in off.mismatch
    opus = predict(OPUS, anthropic(["read"], ["x " * 300]), [anthropic(["read"], ["x " * 300])])
    reported = {"input": opus.uncached, "cacheRead": opus.cached, "cacheWrite": opus.written}
    assert check(opus, reported).ok
    assert not check(opus, {**reported, "cacheRead": opus.cached - 1, "input": opus.uncached + 1}).ok


def test_first_request_and_unknown_cache_say_so() -> None:
    assert "nothing is cached yet" in predict(DEEPSEEK, chat("A" * 995)).why
    pi = {"api": "pi-messages", "provider": "pi", "id": "x", "cost": {}}
    assert "No prompt cache is known" in predict(pi, orjson.dumps({"messages": []})).why


def test_check_scales_to_a_real_tokenizer_total() -> None:
    """A real provider counts its own tokens: the prediction is scaled to the reported total."""
    prediction = predict(DEEPSEEK, chat("A" * 995, "B" * 222, "C" * 227), [chat("A" * 995)])
    assert (prediction.total, prediction.cached) == (384, 256)
    # 768 real tokens: the predicted two thirds read are 512; one 64-token unit plus 1% allowed.
    assert check(prediction, {"input": 256, "cacheRead": 512, "cacheWrite": 0}).ok
    assert check(prediction, {"input": 190, "cacheRead": 578, "cacheWrite": 0}).ok
    assert not check(prediction, {"input": 0, "cacheRead": 768, "cacheWrite": 0}).ok
