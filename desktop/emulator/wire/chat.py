"""Chat-completions chunks for OpenAI, DeepSeek and Mistral (``data: [DONE]`` terminated).

The three differ only in usage: OpenAI reports ``prompt_tokens_details.cached_tokens``,
DeepSeek ``prompt_cache_hit_tokens``/``prompt_cache_miss_tokens``, Mistral
``prompt_tokens_details.cached_tokens`` without completion details. Thinking is streamed as
``reasoning_content`` (DeepSeek style) and, for Mistral, as ``thinking`` content chunks.
"""

from __future__ import annotations

from typing import Any

from desktop.emulator.script import Reply
from desktop.emulator.wire.common import ARGS_PIECE, StreamContext, dumps, pieces, sse

_FINISH = {"stop": "stop", "length": "length", "toolUse": "tool_calls"}


def usage(ctx: StreamContext, flavor: str) -> dict[str, Any]:
    cache = ctx.cache
    base: dict[str, Any] = {
        "prompt_tokens": cache.total,
        "completion_tokens": ctx.output_tokens,
        "total_tokens": cache.total + ctx.output_tokens,
    }
    if flavor == "deepseek":
        base["prompt_cache_hit_tokens"] = cache.read
        base["prompt_cache_miss_tokens"] = cache.total - cache.read
    elif flavor == "mistral":
        base["prompt_tokens_details"] = {"cached_tokens": cache.read}
    else:
        base["prompt_tokens_details"] = {"cached_tokens": cache.read, "audio_tokens": 0}
        base["completion_tokens_details"] = {"reasoning_tokens": 0, "audio_tokens": 0}
    return base


def encode(reply: Reply, ctx: StreamContext, *, flavor: str, include_usage: bool) -> list[bytes]:
    body = {
        "id": f"chatcmpl-emu-{ctx.seq:06d}",
        "object": "chat.completion.chunk",
        "created": ctx.created,
        "model": ctx.model,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return sse({**body, "choices": [choice], **extra})

    events = [chunk({"role": "assistant", "content": ""})]
    for piece in pieces(reply.thinking):
        if flavor == "mistral":
            events.append(
                chunk({"content": [{"type": "thinking", "thinking": [{"type": "text", "text": piece}]}]})
            )
        else:
            events.append(chunk({"reasoning_content": piece}))
    for piece in pieces(reply.text):
        events.append(chunk({"content": piece}))
    for n, call in enumerate(reply.calls):
        call_id = f"{n}{ctx.seq:08d}"[-9:] if flavor == "mistral" else f"call_emu_{ctx.seq:06d}_{n}"
        args = pieces(dumps(call.arguments), ARGS_PIECE) or ["{}"]
        whole = "".join(args) if flavor == "mistral" else ""  # Mistral sends each call whole
        function = {"name": call.name, "arguments": whole}
        first = {"index": n, "id": call_id, "type": "function", "function": function}
        events.append(chunk({"tool_calls": [first]}))
        for piece in [] if flavor == "mistral" else args:
            events.append(chunk({"tool_calls": [{"index": n, "function": {"arguments": piece}}]}))
    finish = _FINISH[reply.stop]
    if flavor == "mistral":
        events.append(chunk({}, finish, usage=usage(ctx, flavor)))
    else:
        events.append(chunk({}, finish))
        if include_usage:
            events.append(sse({**body, "choices": [], "usage": usage(ctx, flavor)}))
    events.append(sse("[DONE]"))
    return events


def error_body(status: int, message: str, *, flavor: str) -> dict[str, Any]:
    if flavor == "mistral":
        return {"object": "error", "message": message, "type": "invalid_request_error", "code": status}
    kind = {429: "rate_limit_exceeded", 401: "invalid_api_key"}.get(status, "server_error")
    return {"error": {"message": message, "type": kind, "param": None, "code": kind}}
