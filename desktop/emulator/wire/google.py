"""Gemini ``streamGenerateContent?alt=sse`` chunks (CRLF-delimited, as Google sends them)."""

from __future__ import annotations

from typing import Any

from desktop.emulator.script import Reply
from desktop.emulator.wire.common import StreamContext, pieces, sse

_FINISH = {"stop": "STOP", "length": "MAX_TOKENS", "toolUse": "STOP"}


def usage(ctx: StreamContext) -> dict[str, Any]:
    cache = ctx.cache
    meta: dict[str, Any] = {
        "promptTokenCount": cache.total,
        "candidatesTokenCount": ctx.output_tokens,
        "totalTokenCount": cache.total + ctx.output_tokens,
    }
    if cache.read:
        meta["cachedContentTokenCount"] = cache.read
    return meta


def encode(reply: Reply, ctx: StreamContext) -> list[bytes]:
    response_id = f"emu-{ctx.seq:06d}"
    parts: list[dict[str, Any]] = [{"text": p, "thought": True} for p in pieces(reply.thinking)]
    parts += [{"text": p} for p in pieces(reply.text)]
    parts += [{"functionCall": {"name": call.name, "args": call.arguments}} for call in reply.calls]
    parts = parts or [{"text": ""}]
    events = []
    for n, part in enumerate(parts):
        last = n == len(parts) - 1
        candidate: dict[str, Any] = {"content": {"parts": [part], "role": "model"}, "index": 0}
        chunk: dict[str, Any] = {"candidates": [candidate]}
        if last:
            candidate["finishReason"] = _FINISH[reply.stop]
            chunk["usageMetadata"] = usage(ctx)
        else:
            chunk["usageMetadata"] = {"promptTokenCount": ctx.cache.total, "totalTokenCount": ctx.cache.total}
        chunk["modelVersion"] = ctx.model
        chunk["responseId"] = response_id
        events.append(sse(chunk, crlf=True))
    return events


def error_body(status: int, message: str) -> dict[str, Any]:
    names = {429: "RESOURCE_EXHAUSTED", 401: "UNAUTHENTICATED", 400: "INVALID_ARGUMENT", 500: "INTERNAL"}
    return {"error": {"code": status, "message": message, "status": names.get(status, "UNAVAILABLE")}}
