"""The token estimate behind every output cap, on inputs the oracle fixtures cannot carry.

Expected numbers come from pi-ai's own ``estimateContextTokens`` (run in Node on the same
messages): a tool call without ``arguments`` counts ``"undefined"``, integral floats count as
JavaScript prints them, a missing timestamp stops later usage from applying, and a usage
block with missing counts never applies.
"""

from __future__ import annotations

from typing import Any

import pytest

from desktop.pi.projection._budget import clamp_max_tokens_to_context, estimate_context_tokens


def _usage(tokens: int) -> dict[str, int]:
    return {"input": tokens, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": tokens}


def _assistant(content: list[dict[str, Any]], usage: Any, timestamp: int | None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content, "usage": usage, "stopReason": "stop"}
    if timestamp is not None:
        message["timestamp"] = timestamp
    return message


CASES = {
    "missing-arguments": (
        [_assistant([{"type": "toolCall", "id": "a", "name": "abc"}], _usage(0), 1)],
        3,
    ),
    "integral-float-schema": (
        [
            {
                "role": "system",
                "content": "x",
                "toolsAdded": [
                    {
                        "name": "t",
                        "description": "d",
                        "parameters": {
                            "type": "object",
                            "properties": {"a": {"type": "number", "minimum": 1.0}},
                        },
                    }
                ],
                "timestamp": 1,
            }
        ],
        29,
    ),
    "missing-timestamp": (
        [
            {"role": "user", "content": "hello", "timestamp": 1},
            _assistant([{"type": "text", "text": "yo"}], _usage(500), 2),
            {"role": "user", "content": "abcdefgh"},
            _assistant([{"type": "text", "text": "z"}], _usage(900), 5),
        ],
        503,
    ),
    "partial-usage": (
        [
            {"role": "user", "content": "hello", "timestamp": 1},
            _assistant([{"type": "text", "text": "yo"}], {"input": 100}, 2),
        ],
        3,
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_estimate_matches_pi_ai(name: str) -> None:
    messages, expected = CASES[name]
    assert estimate_context_tokens(messages) == expected


def test_clamp_leaves_safety_margin() -> None:
    model: Any = {"contextWindow": 4096 + 10 + 503, "maxTokens": 100}
    messages, _ = CASES["missing-timestamp"]
    assert clamp_max_tokens_to_context(model, messages, 100) == 10
    assert clamp_max_tokens_to_context({**model, "contextWindow": 0}, messages, 100) == 100
    assert clamp_max_tokens_to_context({**model, "contextWindow": 1}, messages, 100) == 1
