"""Output-token ceilings and thinking budgets (pi-ai ``simple-options.ts`` + ``utils/estimate.ts``).

pi-ai caps the output tokens to what the context window has left after a rough estimate of
the prompt (4 characters per token, an image 1200 tokens, counting from the last reported
usage that still describes the prefix). The estimate decides a number in the request body,
so it is reproduced exactly, JavaScript string lengths and ``JSON.stringify`` included.
Thinking budgets share that ceiling on the budget-based APIs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import TYPE_CHECKING, Any

from desktop.pi.projection._facts import TranscriptFacts
from desktop.pi.projection._js import js_length, js_stringify
from desktop.pi.text import system_message_text
from desktop.pi.types import Model

if TYPE_CHECKING:
    from desktop.pi.projection import RequestOptions

CONTEXT_SAFETY_TOKENS = 4096
MIN_MAX_TOKENS = 1
#: Tokens always left for the answer when a thinking budget shares the response ceiling.
MIN_ANSWER_TOKENS = 1024
CHARS_PER_TOKEN = 4
ESTIMATED_IMAGE_CHARS = 4800
DEFAULT_THINKING_BUDGETS: dict[str, int] = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}

_FAILED_TURNS = ("aborted", "error")


def _tokens(chars: int) -> int:
    return -(-chars // CHARS_PER_TOKEN)


def _json_length(value: Any) -> int:
    """``safeJsonStringify(value).length``."""
    try:
        return js_length(js_stringify(value))
    except TypeError:  # orjson's JSONEncodeError: what JSON.stringify would throw on
        return len("[unserializable]")


def _content_chars(content: str | Sequence[Mapping[str, Any]]) -> int:
    if isinstance(content, str):
        return js_length(content)
    chars = 0
    for block in content:
        chars += js_length(block["text"]) if block.get("type") == "text" else ESTIMATED_IMAGE_CHARS
    return chars


def _tools_tokens(tools: Sequence[Any] | None) -> int:
    return _tokens(_json_length(tools)) if tools else 0


def estimate_message_tokens(message: Mapping[str, Any]) -> int:
    """pi-ai ``estimateMessageTokens``."""
    role = message["role"]
    if role == "system":
        return (
            _tokens(js_length(system_message_text(message)))  # type: ignore[arg-type]
            + _tools_tokens(message.get("toolsAdded"))
            + _tools_tokens(message.get("toolsRemoved"))
        )
    content = message.get("content") or ()
    if role in ("user", "toolResult"):
        return _tokens(_content_chars(content))
    chars = 0
    for block in content:
        kind = block.get("type")
        if kind == "text":
            chars += js_length(block["text"])
        elif kind == "thinking":
            chars += js_length(block["thinking"])
        else:
            # JSON.stringify(undefined) is undefined, which pi-ai counts as the string "undefined".
            arguments = _json_length(block["arguments"]) if "arguments" in block else len("undefined")
            chars += js_length(block["name"]) + arguments
    return _tokens(chars)


def usage_tokens(usage: Mapping[str, Any] | None) -> int:
    """``calculateContextTokens``; a missing count makes JavaScript's sum NaN, which never applies."""
    if not usage:
        return 0
    tokens: int = usage.get("totalTokens") or 0
    if tokens:
        return tokens
    try:
        tokens = usage["input"] + usage["output"] + usage["cacheRead"] + usage["cacheWrite"]
    except (KeyError, TypeError):
        return 0
    return tokens


def _last_usage(messages: Sequence[Mapping[str, Any]]) -> tuple[int, int] | None:
    """(index, tokens) of the last assistant usage that still describes its prefix.

    A usage stops applying when an earlier-positioned message is newer than the response
    (e.g. an inserted compaction summary). Timestamps are scanned once at C speed and the
    candidate is searched from the end, so a long transcript costs two cheap passes.
    """
    stamps: list[Any] = [message.get("timestamp") for message in messages]
    if None in stamps:
        return _last_usage_with_gaps(messages)
    prefix_max = list(accumulate(stamps, max))
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message["role"] != "assistant":
            continue
        if index and stamps[index] < prefix_max[index - 1]:
            continue
        if message.get("stopReason") in _FAILED_TURNS:
            continue
        tokens = usage_tokens(message.get("usage"))
        if tokens > 0:
            return index, tokens
    return None


def _last_usage_with_gaps(messages: Sequence[Mapping[str, Any]]) -> tuple[int, int] | None:
    # A missing timestamp makes pi-ai's running maximum NaN, and every later comparison false.
    latest_prefix = -math.inf
    found: tuple[int, int] | None = None
    for index, message in enumerate(messages):
        timestamp = message.get("timestamp")
        if (
            message["role"] == "assistant"
            and timestamp is not None
            and timestamp >= latest_prefix  # False once latest_prefix is NaN
            and message.get("stopReason") not in _FAILED_TURNS
        ):
            tokens = usage_tokens(message.get("usage"))
            if tokens > 0:
                found = (index, tokens)
        if timestamp is None or math.isnan(latest_prefix):
            latest_prefix = math.nan
        elif timestamp > latest_prefix:
            latest_prefix = timestamp
    return found


def estimate_context_tokens(messages: Sequence[Mapping[str, Any]]) -> int:
    """pi-ai ``estimateContextTokens``: last trustworthy usage plus an estimate of what follows."""
    if isinstance(messages, TranscriptFacts) and messages.context_tokens is not None:
        return messages.context_tokens  # the incremental projection's estimate of the full history
    last = _last_usage(messages)
    if last is None:
        return sum(estimate_message_tokens(m) for m in messages)
    index, tokens = last
    return tokens + sum(estimate_message_tokens(messages[i]) for i in range(index + 1, len(messages)))


def clamp_max_tokens_to_context(model: Model, messages: Sequence[Mapping[str, Any]], max_tokens: int) -> int:
    """pi-ai ``clampMaxTokensToContext``: leave room for the prompt plus a safety margin."""
    window = model.get("contextWindow") or 0
    if window <= 0:
        return max(MIN_MAX_TOKENS, max_tokens)
    available = window - estimate_context_tokens(messages) - CONTEXT_SAFETY_TOKENS
    return min(max_tokens, max(MIN_MAX_TOKENS, available))


def base_max_tokens(model: Model, messages: Sequence[Mapping[str, Any]], options: RequestOptions) -> int:
    """``buildBaseOptions``' ``maxTokens``: the caller's value or the model cap, clamped to the context."""
    requested = options.max_tokens if options.max_tokens is not None else model["maxTokens"]
    return clamp_max_tokens_to_context(model, messages, requested)


def clamp_reasoning(level: str) -> str:
    """Budget-based thinking has no levels above "high"."""
    return "high" if level in ("xhigh", "max") else level


def thinking_budget_for_level(level: str, custom: Mapping[str, int] | None = None) -> int:
    budgets = {**DEFAULT_THINKING_BUDGETS, **(custom or {})}
    return budgets[clamp_reasoning(level)]


def clamp_thinking_budget_to_answer_room(budget: int, ceiling: int) -> int:
    """Cap a thinking budget so at least ``MIN_ANSWER_TOKENS`` remain under a shared ceiling."""
    return min(budget, max(0, ceiling - MIN_ANSWER_TOKENS))


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
        budget = clamp_thinking_budget_to_answer_room(budget, max_tokens)
    return ThinkingAllowance(max_tokens, budget)
