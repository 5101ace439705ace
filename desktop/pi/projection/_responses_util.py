"""Small pi-ai utilities the Responses projections need to reproduce pi-ai's bytes.

These mirror JavaScript semantics where they leak into the wire format: string lengths
count UTF-16 code units, ``shortHash`` mixes UTF-16 code units with 32-bit multiplies, and
``JSON.stringify`` prints integral numbers without a fraction. Nothing here is specific to
the Responses family; other projections may reuse it (see the module names in the report).
"""

from __future__ import annotations

import gc
import math
import platform
import sys
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache, wraps
from itertools import accumulate
from typing import Any, ParamSpec, TypeVar

from desktop.pi.projection._js import js_length as utf16_len
from desktop.pi.projection._js import js_stringify
from desktop.pi.text import system_message_text
from desktop.pi.types import Model

THINKING_LEVELS: tuple[str, ...] = ("off", "minimal", "low", "medium", "high", "xhigh", "max")


def supported_thinking_levels(model: Model) -> list[str]:
    if not model.get("reasoning"):
        return ["off"]
    mapping = model.get("thinkingLevelMap") or {}
    levels = []
    for level in THINKING_LEVELS:
        if level in mapping and mapping[level] is None:
            continue
        if level in ("xhigh", "max") and level not in mapping:
            continue
        levels.append(level)
    return levels


def clamp_thinking_level(model: Model, level: str) -> str:
    """pi-ai ``clampThinkingLevel``: the nearest supported level, preferring higher ones."""
    available = supported_thinking_levels(model)
    if level in available:
        return level
    if level not in THINKING_LEVELS:
        return available[0] if available else "off"
    index = THINKING_LEVELS.index(level)
    for candidate in THINKING_LEVELS[index:]:
        if candidate in available:
            return candidate
    for candidate in reversed(THINKING_LEVELS[:index]):
        if candidate in available:
            return candidate
    return available[0] if available else "off"


def resolve_sampling_params(
    model: Model, thinking_level: str, request_params: Mapping[str, Any] | None
) -> dict[str, Any] | None:
    """Model defaults, then per-thinking-level overrides, then the caller's parameters."""
    level = clamp_thinking_level(model, thinking_level)
    base = model.get("samplingParams")
    by_level = (model.get("samplingParamsByThinkingLevel") or {}).get(level)
    if not base and not by_level and not request_params:
        return None
    return {**(base or {}), **(by_level or {}), **(request_params or {})}


# ---------------------------------------------------------------------------
# Context estimate (pi-ai utils/estimate.ts), for clampMaxTokensToContext.
# ---------------------------------------------------------------------------

_CHARS_PER_TOKEN = 4
_IMAGE_CHARS = 4800
_CONTEXT_SAFETY_TOKENS = 4096


def _ceil_div(chars: int) -> int:
    return -(-chars // _CHARS_PER_TOKEN)


def _content_chars(content: Any) -> int:
    if isinstance(content, str):
        return utf16_len(content)
    return sum(utf16_len(block["text"]) if block.get("type") == "text" else _IMAGE_CHARS for block in content)


def _tools_tokens(tools: Sequence[Any] | None) -> int:
    if not tools:
        return 0
    return _ceil_div(utf16_len(js_stringify(tools)))


def estimate_message_tokens(message: Mapping[str, Any]) -> int:
    role = message["role"]
    if role == "system":
        return (
            _ceil_div(utf16_len(system_message_text(message)))  # type: ignore[arg-type]
            + _tools_tokens(message.get("toolsAdded"))
            + _tools_tokens(message.get("toolsRemoved"))
        )
    if role in ("user", "toolResult"):
        return _ceil_div(_content_chars(message["content"]))
    chars = 0
    for block in message.get("content") or ():
        kind = block.get("type")
        if kind == "text":
            chars += utf16_len(block["text"])
        elif kind == "thinking":
            chars += utf16_len(block["thinking"])
        else:
            arguments = block.get("arguments")
            # JSON.stringify(undefined) is undefined, which pi-ai counts as the string "undefined".
            encoded = (
                "undefined" if arguments is None and "arguments" not in block else js_stringify(arguments)
            )
            chars += utf16_len(block["name"]) + utf16_len(encoded)
    return _ceil_div(chars)


def _usage_tokens(usage: Mapping[str, Any]) -> int:
    total = usage.get("totalTokens") or 0
    if total:
        return int(total)
    return int(usage["input"] + usage["output"] + usage["cacheRead"] + usage["cacheWrite"])


def _last_usage(messages: Sequence[Mapping[str, Any]]) -> tuple[int, int] | None:
    """(index, tokens) of the last assistant usage that still describes its prefix.

    A usage stops applying when an earlier-positioned message is newer than the response
    (e.g. an inserted compaction summary). Timestamps are scanned once at C speed and the
    candidate is searched from the end, so a long transcript costs two cheap passes.
    """
    stamps: list[Any] = [message.get("timestamp") for message in messages]
    if None in stamps:
        return _last_usage_slow(messages)
    prefix_max = list(accumulate(stamps, max))
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message["role"] != "assistant":
            continue
        if index and stamps[index] < prefix_max[index - 1]:
            continue
        usage = message.get("usage")
        if message.get("stopReason") in ("aborted", "error") or not usage:
            continue
        tokens = _usage_tokens(usage)
        if tokens > 0:
            return index, tokens
    return None


def _last_usage_slow(messages: Sequence[Mapping[str, Any]]) -> tuple[int, int] | None:
    # A missing timestamp makes pi-ai's running maximum NaN, and every later comparison false.
    latest_prefix = -math.inf
    found: tuple[int, int] | None = None
    for index, message in enumerate(messages):
        timestamp = message.get("timestamp")
        if message["role"] == "assistant":
            usage = message.get("usage")
            applies = not math.isnan(latest_prefix) and timestamp is not None and timestamp >= latest_prefix
            if applies and message.get("stopReason") not in ("aborted", "error") and usage:
                tokens = _usage_tokens(usage)
                if tokens > 0:
                    found = (index, tokens)
        if timestamp is None or math.isnan(latest_prefix):
            latest_prefix = math.nan
        else:
            latest_prefix = max(latest_prefix, timestamp)
    return found


def estimate_context_tokens(messages: Sequence[Mapping[str, Any]]) -> int:
    """Last trustworthy reported usage plus an estimate of what came after it."""
    last = _last_usage(messages)
    if last is None:
        return sum(estimate_message_tokens(m) for m in messages)
    index, tokens = last
    return tokens + sum(estimate_message_tokens(m) for m in messages[index + 1 :])


def clamp_max_tokens_to_context(model: Model, messages: Sequence[Mapping[str, Any]], max_tokens: int) -> int:
    """pi-ai ``clampMaxTokensToContext``: leave room for the prompt plus a safety margin."""
    window = model.get("contextWindow") or 0
    if window <= 0:
        return max(1, max_tokens)
    available = window - estimate_context_tokens(messages) - _CONTEXT_SAFETY_TOKENS
    return min(max_tokens, max(1, available))


# ---------------------------------------------------------------------------
# Environment-derived values (passed in by the caller; never read from os.environ).
# ---------------------------------------------------------------------------


def provider_env_value(
    name: str, scoped: Mapping[str, Any] | None, process_env: Mapping[str, str]
) -> str | None:
    """pi-ai ``getProviderEnvValue``: scoped options env first, then the process env; empty is unset."""
    value = (scoped or {}).get(name) or process_env.get(name)
    return value or None


@lru_cache(maxsize=1)
def pi_user_agent() -> str:
    """pi-ai's ``User-Agent``: ``pi (<node platform> <os release>; <node arch>)``."""
    machine = platform.machine().lower()
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "i386": "ia32", "i686": "ia32"}.get(
        machine, machine
    )
    release = platform.version() if sys.platform == "win32" else platform.release()
    return f"pi ({sys.platform} {release}; {arch})"


# ---------------------------------------------------------------------------
# URLs as the JS SDKs build them (``new URL(base + path)``).
# ---------------------------------------------------------------------------

_PATH_ESCAPES = frozenset(' "<>`{}')


def _encode_path(path: str) -> str:
    out: list[str] = []
    for ch in path:
        if ch in _PATH_ESCAPES or ord(ch) < 0x21 or ord(ch) > 0x7E:
            out.extend(f"%{byte:02X}" for byte in ch.encode("utf-8"))
        else:
            out.append(ch)
    return "".join(out)


def join_url(base_url: str, path: str) -> str:
    """The OpenAI SDK's ``buildURL``: one slash between base and path, path characters escaped."""
    joined = base_url + (path[1:] if base_url.endswith("/") and path.startswith("/") else path)
    scheme, sep, rest = joined.partition("://")
    if not sep:
        return joined
    slash = rest.find("/")
    if slash < 0:
        return f"{scheme.lower()}://{rest.lower()}/"
    host, tail = rest[:slash], rest[slash:]
    cut = min((i for i in (tail.find("?"), tail.find("#")) if i >= 0), default=len(tail))
    tail, query = tail[:cut], tail[cut:]
    return f"{scheme.lower()}://{host.lower()}{_encode_path(tail)}{query}"


_P = ParamSpec("_P")
_R = TypeVar("_R")


def gc_paused(function: Callable[_P, _R]) -> Callable[_P, _R]:
    """Run a projection with the cyclic garbage collector paused.

    A projection allocates hundreds of thousands of small, acyclic JSON containers for a
    long transcript; every few hundred allocations CPython would otherwise traverse the
    young objects, and now and then the whole (long-lived) transcript, finding nothing to
    free. Pausing cuts projection time of a 50k-message transcript by about 40%. Reference
    counting still frees everything; the collector is re-enabled only if it was enabled.
    """

    @wraps(function)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        if not gc.isenabled():
            return function(*args, **kwargs)
        gc.disable()
        try:
            return function(*args, **kwargs)
        finally:
            gc.enable()

    return wrapper
