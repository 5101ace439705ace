"""pi-ai's ``streamSimple`` option resolution (``simple-options.ts``, ``estimate.ts``, ``models.ts``).

These decide request fields that look like plain options but are derived: ``max_tokens`` is
the caller's value (or the model cap) clamped to the context room left by a token estimate,
the reasoning level is clamped to the levels the model supports, and sampling parameters
merge model defaults, per-level overrides and the request. They are API-neutral; the Chat
Completions family uses them first.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from desktop.pi.projection._js import js_length, js_value
from desktop.pi.text import system_message_text
from desktop.pi.types import Model

CONTEXT_SAFETY_TOKENS = 4096
MIN_MAX_TOKENS = 1
MIN_ANSWER_TOKENS = 1024
CHARS_PER_TOKEN = 4
ESTIMATED_IMAGE_CHARS = 4800
DEFAULT_THINKING_BUDGETS: dict[str, int] = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}
EXTENDED_THINKING_LEVELS: tuple[str, ...] = ("off", "minimal", "low", "medium", "high", "xhigh", "max")

_MISSING = object()


def supported_thinking_levels(model: Model) -> list[str]:
    if not model.get("reasoning"):
        return ["off"]
    level_map = model.get("thinkingLevelMap") or {}
    levels = []
    for level in EXTENDED_THINKING_LEVELS:
        mapped = level_map.get(level, _MISSING)
        if mapped is None:
            continue
        if level in ("xhigh", "max") and mapped is _MISSING:
            continue
        levels.append(level)
    return levels


def clamp_thinking_level(model: Model, level: str) -> str:
    """The nearest supported level, preferring stronger thinking over weaker."""
    available = supported_thinking_levels(model)
    if level in available:
        return level
    if level not in EXTENDED_THINKING_LEVELS:
        return available[0] if available else "off"
    index = EXTENDED_THINKING_LEVELS.index(level)
    for candidate in EXTENDED_THINKING_LEVELS[index:]:
        if candidate in available:
            return candidate
    for candidate in reversed(EXTENDED_THINKING_LEVELS[:index]):
        if candidate in available:
            return candidate
    return available[0] if available else "off"


def resolve_reasoning(model: Model, reasoning: str | None) -> str | None:
    """``options.reasoning`` clamped to the model; ``None`` when thinking is off."""
    if not reasoning:
        return None
    clamped = clamp_thinking_level(model, reasoning)
    return None if clamped == "off" else clamped


def resolve_sampling_params(
    model: Model, thinking_level: str, request_params: Mapping[str, Any] | None
) -> dict[str, Any] | None:
    """Model sampling defaults, then per-level overrides, then the request's own values."""
    level = clamp_thinking_level(model, thinking_level)
    model_params = model.get("samplingParams")
    level_params = (model.get("samplingParamsByThinkingLevel") or {}).get(level)
    if not (model_params or level_params or request_params):
        return None
    return {**(model_params or {}), **(level_params or {}), **(request_params or {})}


def _content_chars(content: str | Sequence[Mapping[str, Any]]) -> int:
    if isinstance(content, str):
        return js_length(content)
    chars = 0
    for block in content:
        chars += js_length(block["text"]) if block.get("type") == "text" else ESTIMATED_IMAGE_CHARS
    return chars


def _tools_tokens(tools: Sequence[Any] | None) -> int:
    if not tools:
        return 0
    return math.ceil(js_length(orjson.dumps(js_value(list(tools))).decode("utf-8")) / CHARS_PER_TOKEN)


def estimate_message_tokens(message: Mapping[str, Any]) -> int:
    role = message["role"]
    if role == "system":
        return (
            math.ceil(js_length(system_message_text(message)) / CHARS_PER_TOKEN)  # type: ignore[arg-type]
            + _tools_tokens(message.get("toolsAdded"))
            + _tools_tokens(message.get("toolsRemoved"))
        )
    content = message.get("content")
    if role in ("user", "toolResult"):
        return math.ceil(_content_chars(content or []) / CHARS_PER_TOKEN)
    chars = 0
    for block in content or ():
        kind = block.get("type")
        if kind == "text":
            chars += js_length(block["text"])
        elif kind == "thinking":
            chars += js_length(block["thinking"])
        else:
            chars += js_length(block["name"]) + js_length(
                orjson.dumps(js_value(block.get("arguments"))).decode("utf-8")
            )
    return math.ceil(chars / CHARS_PER_TOKEN)


def _usage_tokens(usage: Mapping[str, Any]) -> int:
    total: int = usage.get("totalTokens") or (
        usage.get("input", 0)
        + usage.get("output", 0)
        + usage.get("cacheRead", 0)
        + usage.get("cacheWrite", 0)
    )
    return total


def estimate_context_tokens(messages: Sequence[Mapping[str, Any]]) -> int:
    """Last trustworthy reported usage plus an estimate of everything after it."""
    latest_prefix = -math.inf
    usage_index: int | None = None
    for index, message in enumerate(messages):
        if message["role"] == "assistant":
            # A prefix message newer than this response (e.g. a compaction summary) means
            # its usage no longer describes the current prefix. NaN compares false, like JS.
            timestamp = message.get("timestamp")
            applies = timestamp is not None and timestamp >= latest_prefix
            if (
                applies
                and message.get("stopReason") not in ("aborted", "error")
                and _usage_tokens(message["usage"]) > 0
            ):
                usage_index = index
        timestamp = message.get("timestamp")
        if timestamp is None or math.isnan(latest_prefix):
            latest_prefix = math.nan
        elif timestamp > latest_prefix:
            latest_prefix = timestamp
    if usage_index is not None:
        tokens = _usage_tokens(messages[usage_index]["usage"])
        return tokens + sum(estimate_message_tokens(m) for m in messages[usage_index + 1 :])
    return sum(estimate_message_tokens(m) for m in messages)


def clamp_max_tokens_to_context(model: Model, messages: Sequence[Mapping[str, Any]], max_tokens: int) -> int:
    if model["contextWindow"] <= 0:
        return max(MIN_MAX_TOKENS, max_tokens)
    available = model["contextWindow"] - estimate_context_tokens(messages) - CONTEXT_SAFETY_TOKENS
    return min(max_tokens, max(MIN_MAX_TOKENS, available))


def thinking_budget_for_level(level: str, custom: Mapping[str, int] | None) -> int:
    budgets = {**DEFAULT_THINKING_BUDGETS, **(custom or {})}
    return budgets["high" if level in ("xhigh", "max") else level]


def clamp_thinking_budget_to_answer_room(budget: int, ceiling: int) -> int:
    return min(budget, max(0, ceiling - MIN_ANSWER_TOKENS))
