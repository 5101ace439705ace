"""Anthropic Messages streaming events (``message_start`` ... ``message_stop``)."""

from __future__ import annotations

from typing import Any

from desktop.emulator.script import Reply
from desktop.emulator.wire.common import ARGS_PIECE, StreamContext, dumps, pieces, sse

_STOP = {"stop": "end_turn", "length": "max_tokens", "toolUse": "tool_use"}


def usage(ctx: StreamContext, output_tokens: int) -> dict[str, Any]:
    cache = ctx.cache
    return {
        "input_tokens": cache.fresh,
        "cache_creation_input_tokens": cache.written,
        "cache_read_input_tokens": cache.read,
        "cache_creation": {
            "ephemeral_5m_input_tokens": cache.written - cache.written_1h,
            "ephemeral_1h_input_tokens": cache.written_1h,
        },
        "output_tokens": output_tokens,
    }


def encode(reply: Reply, ctx: StreamContext) -> list[bytes]:
    message: dict[str, Any] = {
        "id": f"msg_emu_{ctx.seq:06d}",
        "type": "message",
        "role": "assistant",
        "model": ctx.model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage(ctx, 1),
    }
    events: list[bytes] = []

    def event(kind: str, **fields: Any) -> None:
        events.append(sse({"type": kind, **fields}, kind))

    event("message_start", message=message)
    index = 0

    def block(start: dict[str, Any], deltas: list[dict[str, Any]]) -> None:
        nonlocal index
        event("content_block_start", index=index, content_block=start)
        if index == 0:
            event("ping")
        for delta in deltas:
            event("content_block_delta", index=index, delta=delta)
        event("content_block_stop", index=index)
        index += 1

    if reply.thinking:
        deltas = [{"type": "thinking_delta", "thinking": p} for p in pieces(reply.thinking)]
        deltas.append({"type": "signature_delta", "signature": f"emu-sig-{ctx.seq}"})
        block({"type": "thinking", "thinking": "", "signature": ""}, deltas)
    if reply.text:
        block({"type": "text", "text": ""}, [{"type": "text_delta", "text": p} for p in pieces(reply.text)])
    for n, call in enumerate(reply.calls):
        start = {"type": "tool_use", "id": f"toolu_emu_{ctx.seq:06d}_{n}", "name": call.name, "input": {}}
        args = pieces(dumps(call.arguments), ARGS_PIECE)
        block(start, [{"type": "input_json_delta", "partial_json": p} for p in args])
    final_usage = usage(ctx, ctx.output_tokens)
    delta = {"stop_reason": _STOP[reply.stop], "stop_sequence": None}
    event("message_delta", delta=delta, usage=final_usage)
    event("message_stop")
    return events


def error_body(status: int, message: str) -> dict[str, Any]:
    kind = {429: "rate_limit_error", 401: "authentication_error", 400: "invalid_request_error"}.get(
        status, "api_error"
    )
    return {"type": "error", "error": {"type": kind, "message": message}}
