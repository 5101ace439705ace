"""Output-token ceilings and thinking budgets (pi-ai ``simple-options.ts`` + ``estimate.ts``).

pi-ai caps ``max_tokens`` to what the context window has left after a rough estimate of the
prompt (4 characters per token, images 1200 tokens). The estimate decides a number in the
request body, so it must be reproduced exactly, JavaScript string lengths included.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from desktop.pi.projection._js import js_length as utf16_len
from desktop.pi.text import system_message_text
from desktop.pi.types import Model

CONTEXT_SAFETY_TOKENS = 4096
MIN_MAX_TOKENS = 1
MIN_ANSWER_TOKENS = 1024
CHARS_PER_TOKEN = 4
ESTIMATED_IMAGE_CHARS = 4800
DEFAULT_THINKING_BUDGETS: dict[str, int] = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}


def _json_len(value: Any) -> int:
    try:
        return utf16_len(orjson.dumps(value).decode("utf-8"))
    except TypeError:
        return len("[unserializable]")


def _content_chars(content: str | Sequence[Mapping[str, Any]]) -> int:
    if isinstance(content, str):
        return utf16_len(content)
    return sum(
        utf16_len(block["text"]) if block.get("type") == "text" else ESTIMATED_IMAGE_CHARS
        for block in content
    )


def _tools_tokens(tools: Sequence[Any] | None) -> int:
    return math.ceil(_json_len(tools) / CHARS_PER_TOKEN) if tools else 0


def estimate_message_tokens(message: Mapping[str, Any]) -> int:
    role = message["role"]
    if role == "system":
        text = system_message_text(message)  # type: ignore[arg-type]
        return (
            math.ceil(utf16_len(text) / CHARS_PER_TOKEN)
            + _tools_tokens(message.get("toolsAdded"))
            + _tools_tokens(message.get("toolsRemoved"))
        )
    if role in ("user", "toolResult"):
        return math.ceil(_content_chars(message["content"]) / CHARS_PER_TOKEN)
    chars = 0
    for block in message["content"]:
        kind = block.get("type")
        if kind == "text":
            chars += utf16_len(block["text"])
        elif kind == "thinking":
            chars += utf16_len(block["thinking"])
        else:
            # JSON.stringify(undefined) is undefined, which pi-ai prints as "undefined".
            arguments = _json_len(block["arguments"]) if "arguments" in block else len("undefined")
            chars += utf16_len(block["name"]) + arguments
    return math.ceil(chars / CHARS_PER_TOKEN)


def _usage_tokens(usage: Mapping[str, Any]) -> int:
    total: int = usage.get("totalTokens") or (
        usage["input"] + usage["output"] + usage["cacheRead"] + usage["cacheWrite"]
    )
    return total


def estimate_context_tokens(messages: Sequence[Mapping[str, Any]]) -> int:
    """Last trustworthy reported usage plus an estimate of everything after it."""
    latest_prefix = -math.inf
    usage_index: int | None = None
    usage_tokens = 0
    for index, message in enumerate(messages):
        if (
            message["role"] == "assistant"
            and message.get("timestamp", 0) >= latest_prefix
            and message.get("stopReason") not in ("aborted", "error")
        ):
            tokens = _usage_tokens(message["usage"])
            if tokens > 0:
                usage_index, usage_tokens = index, tokens
        latest_prefix = max(latest_prefix, message.get("timestamp", 0))
    start = 0 if usage_index is None else usage_index + 1
    return usage_tokens + sum(estimate_message_tokens(m) for m in messages[start:])


def clamp_max_tokens_to_context(model: Model, messages: Sequence[Mapping[str, Any]], max_tokens: int) -> int:
    if model["contextWindow"] <= 0:
        return max(MIN_MAX_TOKENS, max_tokens)
    available = model["contextWindow"] - estimate_context_tokens(messages) - CONTEXT_SAFETY_TOKENS
    return min(max_tokens, max(MIN_MAX_TOKENS, available))


def clamp_reasoning(level: str) -> str:
    """Budget-based thinking has no levels above "high"."""
    return "high" if level in ("xhigh", "max") else level


def thinking_budget_for_level(level: str, custom: Mapping[str, int] | None = None) -> int:
    budgets = {**DEFAULT_THINKING_BUDGETS, **(custom or {})}
    return budgets[clamp_reasoning(level)]


@dataclass(frozen=True)
class ThinkingAllowance:
    max_tokens: int
    thinking_budget: int


def adjust_max_tokens_for_thinking(
    base_max_tokens: int | None, model_max_tokens: int, level: str, custom: Mapping[str, int] | None = None
) -> ThinkingAllowance:
    """Raise the ceiling by the thinking budget, keeping room for an answer under the model cap."""
    budget = thinking_budget_for_level(level, custom)
    max_tokens = (
        model_max_tokens if base_max_tokens is None else min(base_max_tokens + budget, model_max_tokens)
    )
    if max_tokens <= budget:
        budget = min(budget, max(0, max_tokens - MIN_ANSWER_TOKENS))
    return ThinkingAllowance(max_tokens, budget)
