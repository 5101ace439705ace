"""pi-ai's ``streamSimple`` option resolution for the Google APIs.

``maxOutputTokens`` and ``thinkingConfig`` look like plain options but are derived: the output
cap is the caller's value (or the model cap) clamped to the context room a token estimate
leaves, and the thinking control is a discrete level for Gemini 3 / Gemma 4 and a token budget
for older models, with a model-specific "off" (some Gemini 3 models cannot switch thinking off,
so "off" means their lowest level).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from desktop.pi.projection import ProjectionError, RequestOptions
from desktop.pi.projection._js import js_length, js_stringify
from desktop.pi.text import system_message_text
from desktop.pi.types import Model

GoogleFamily = Literal["google-generative-ai", "google-vertex"]

CONTEXT_SAFETY_TOKENS = 4096
MIN_MAX_TOKENS = 1
CHARS_PER_TOKEN = 4
ESTIMATED_IMAGE_CHARS = 4800
EXTENDED_THINKING_LEVELS: tuple[str, ...] = ("off", "minimal", "low", "medium", "high", "xhigh", "max")
GOOGLE_LEVELS = ("minimal", "low", "medium", "high")

_THINKING_LEVEL_MODEL = re.compile(r"gemini-3(?:\.\d+)?-(?:pro|flash)")
_GEMMA_4 = re.compile(r"gemma-?4")
_MISSING = object()

#: Token budgets per level (``getGoogleBudget``); the Vertex adapter has no flash-lite row.
_BUDGETS_PRO = {"minimal": 128, "low": 2048, "medium": 8192, "high": 32768}
_BUDGETS_FLASH_LITE = {"minimal": 512, "low": 2048, "medium": 8192, "high": 24576}
_BUDGETS_FLASH = {"minimal": 128, "low": 2048, "medium": 8192, "high": 24576}


# --- thinking -------------------------------------------------------------------------------


def supported_thinking_levels(model: Model) -> list[str]:
    if not model.get("reasoning"):
        return ["off"]
    level_map: Mapping[str, Any] = model.get("thinkingLevelMap") or {}
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


def uses_thinking_level(model: Model) -> bool:
    """Gemini 3 Pro/Flash, the ``-latest`` Flash aliases and Gemma 4 take a level, not a budget."""
    model_id = model["id"].lower()
    return bool(
        _THINKING_LEVEL_MODEL.search(model_id)
        or model_id in ("gemini-flash-latest", "gemini-flash-lite-latest")
        or _GEMMA_4.search(model_id)
    )


def resolve_google_level(model: Model, level: str) -> str:
    """A pi level through the model's ``thinkingLevelMap`` to one of Google's four levels."""
    mapped = (model.get("thinkingLevelMap") or {}).get(level)
    resolved = mapped.lower() if isinstance(mapped, str) else level
    if resolved not in GOOGLE_LEVELS:
        raise ProjectionError(
            f"Unsupported Google thinking level mapping for {model['provider']}/{model['id']}: "
            f"{level} -> {mapped if isinstance(mapped, str) else 'undefined'}; fix the model's "
            "thinkingLevelMap or pick another reasoning level"
        )
    return resolved


def _disabled_thinking_config(model: Model) -> dict[str, Any]:
    if not uses_thinking_level(model):
        return {"thinkingBudget": 0}
    fallback = clamp_thinking_level(model, "off")
    if fallback == "off":
        return {"thinkingBudget": 0}
    return {"thinkingLevel": resolve_google_level(model, fallback).upper()}


def _budget(model: Model, level: str, custom: Mapping[str, int] | None, family: GoogleFamily) -> int:
    if custom is not None and custom.get(level) is not None:
        return int(custom[level])
    model_id = model["id"]
    if "2.5-pro" in model_id:
        return _BUDGETS_PRO[level]
    if family == "google-generative-ai" and "2.5-flash-lite" in model_id:
        return _BUDGETS_FLASH_LITE[level]
    if "2.5-flash" in model_id:
        return _BUDGETS_FLASH[level]
    return -1


def thinking_config(model: Model, options: RequestOptions, family: GoogleFamily) -> dict[str, Any] | None:
    """``generationConfig.thinkingConfig``, or None for models without reasoning."""
    if not model.get("reasoning"):
        return None
    level = clamp_thinking_level(model, options.reasoning) if options.reasoning else "off"
    if level == "off":
        return _disabled_thinking_config(model)
    google_level = resolve_google_level(model, level)
    if uses_thinking_level(model):
        return {"includeThoughts": True, "thinkingLevel": google_level.upper()}
    return {
        "includeThoughts": True,
        "thinkingBudget": _budget(model, google_level, options.thinking_budgets, family),
    }


# --- output cap -----------------------------------------------------------------------------


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
    return math.ceil(js_length(js_stringify(list(tools))) / CHARS_PER_TOKEN)


def _message_tokens(message: Mapping[str, Any]) -> int:
    role = message["role"]
    if role == "system":
        return (
            math.ceil(js_length(system_message_text(message)) / CHARS_PER_TOKEN)  # type: ignore[arg-type]
            + _tools_tokens(message.get("toolsAdded"))
            + _tools_tokens(message.get("toolsRemoved"))
        )
    content = message.get("content") or []
    if role in ("user", "toolResult"):
        return math.ceil(_content_chars(content) / CHARS_PER_TOKEN)
    chars = 0
    for block in content:
        kind = block.get("type")
        if kind == "text":
            chars += js_length(block["text"])
        elif kind == "thinking":
            chars += js_length(block["thinking"])
        else:
            chars += js_length(block["name"]) + js_length(js_stringify(block.get("arguments")))
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
    """Last trustworthy reported usage plus an estimate of everything after it (``estimate.ts``)."""
    latest_prefix = -math.inf
    usage_index: int | None = None
    for index, message in enumerate(messages):
        timestamp = message.get("timestamp")
        if (
            message["role"] == "assistant"
            # A prefix message newer than this response (e.g. a compaction summary) means its
            # usage no longer describes the current prefix. NaN compares false, as in JS.
            and timestamp is not None
            and timestamp >= latest_prefix
            and message.get("stopReason") not in ("aborted", "error")
            and _usage_tokens(message["usage"]) > 0
        ):
            usage_index = index
        if timestamp is None or math.isnan(latest_prefix):
            latest_prefix = math.nan
        elif timestamp > latest_prefix:
            latest_prefix = timestamp
    if usage_index is not None:
        tokens = _usage_tokens(messages[usage_index]["usage"])
        return tokens + sum(_message_tokens(m) for m in messages[usage_index + 1 :])
    return sum(_message_tokens(m) for m in messages)


def max_output_tokens(model: Model, messages: Sequence[Mapping[str, Any]], options: RequestOptions) -> int:
    """``options.maxTokens ?? model.maxTokens`` clamped to the context room left."""
    requested = options.max_tokens if options.max_tokens is not None else model["maxTokens"]
    if model["contextWindow"] <= 0:
        return max(MIN_MAX_TOKENS, requested)
    available = model["contextWindow"] - estimate_context_tokens(messages) - CONTEXT_SAFETY_TOKENS
    return min(requested, max(MIN_MAX_TOKENS, available))
