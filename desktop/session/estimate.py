"""Context size estimation (pi-coding-agent's characters/4 rule, images counted).

Estimates decide *when* to compact and whether fixed declarations fit (design A3, C4), so
they err on the high side. While fixed declarations are active the full declared catalog
is sent on every request and is charged here in full, and once: a tool declared by a system
row and listed at request level is one tool in the request, not two.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import orjson

from desktop.pi.text import system_message_text
from desktop.pi.transcript import current_tools
from desktop.pi.types import Tool

IMAGE_CHARS = 4800


def _block_chars(block: Mapping[str, Any]) -> int:
    kind = block.get("type")
    if kind == "text":
        return len(block.get("text") or "")
    if kind == "thinking":
        return len(block.get("thinking") or "")
    if kind == "toolCall":
        return len(block.get("name", "")) + len(orjson.dumps(block.get("arguments", {})))
    if kind == "image":
        return IMAGE_CHARS
    return 0


def message_tokens(message: Mapping[str, Any], *, with_tools: bool = True) -> int:
    """chars/4 of a message; a system message's ``toolsAdded`` too unless ``with_tools=False``."""
    role = message.get("role")
    if role == "system":
        chars = len(system_message_text(message))  # type: ignore[arg-type]
        tools = tools_tokens(message.get("toolsAdded") or []) if with_tools else 0
        return math.ceil(chars / 4) + tools
    content = message.get("content")
    if isinstance(content, str):
        return math.ceil(len(content) / 4)
    if isinstance(content, list):
        return math.ceil(sum(_block_chars(block) for block in content) / 4)
    return 0


def tools_tokens(tools: Iterable[Tool]) -> int:
    return sum(math.ceil(len(orjson.dumps(tool)) / 4) for tool in tools)


def usage_tokens(usage: Mapping[str, Any]) -> int:
    total = int(usage.get("totalTokens") or 0)
    if total:
        return total
    return sum(int(usage.get(k) or 0) for k in ("input", "output", "cacheRead", "cacheWrite"))


def context_tokens(
    messages: Sequence[Mapping[str, Any]],
    *,
    request_tools: Sequence[Tool] = (),
    usage_from: int = 0,
) -> int:
    """Tokens the next request will carry: the last real usage plus estimates after it.

    ``request_tools`` is the request-level tool list (the full catalog under fixed
    declarations). Before the first usage figure every tool the request carries is charged
    once: the transcript's current tools and ``request_tools``, by name. After it, only tools
    declared since (in the system rows after that figure) are added. Usage figures before
    ``usage_from`` are not trusted: after a compaction the retained tail's figures measured
    the context that the summary replaced.
    """
    last_usage_index = None
    for index in range(len(messages) - 1, usage_from - 1, -1):
        message = messages[index]
        if message.get("role") == "assistant" and message.get("stopReason") not in ("error", "aborted"):
            usage = message.get("usage")
            if usage and usage_tokens(usage):
                last_usage_index = index
                break
    if last_usage_index is None:
        base = sum(message_tokens(m, with_tools=False) for m in messages)
        tools = {tool["name"]: tool for tool in current_tools(messages)}
        tools.update({tool["name"]: tool for tool in request_tools})
        return base + tools_tokens(tools.values())
    used = usage_tokens(messages[last_usage_index]["usage"])
    return used + sum(message_tokens(m) for m in messages[last_usage_index + 1 :])
