"""Bedrock ``converse-stream`` events in AWS event-stream frames.

The events and payloads are those Bedrock sends (``messageStart`` … ``messageStop``, then
``metadata`` with usage and metrics). Usage follows the explicit-``cachePoint`` accounting
(see ``desktop.emulator.provider_cache``): ``inputTokens`` is the uncached rest, cache reads and
writes are reported apart, ``totalTokens`` counts all of them plus the output, and
``cacheDetails`` lists writes by TTL.
"""

from __future__ import annotations

from typing import Any

import orjson

from desktop.emulator.script import Reply
from desktop.emulator.wire.common import ARGS_PIECE, StreamContext, dumps, pieces
from desktop.pi.streaming.eventstream import event_frame

CONTENT_TYPE = "application/vnd.amazon.eventstream"
_STOP = {"stop": "end_turn", "length": "max_tokens", "toolUse": "tool_use"}
_ERROR_TYPES = {
    400: "ValidationException",
    401: "UnrecognizedClientException",
    403: "AccessDeniedException",
    429: "ThrottlingException",
    503: "ServiceUnavailableException",
}


def _event(kind: str, payload: dict[str, Any]) -> bytes:
    return event_frame(kind, orjson.dumps(payload))


def usage(ctx: StreamContext) -> dict[str, Any]:
    cache = ctx.cache
    out: dict[str, Any] = {
        "inputTokens": cache.fresh,
        "outputTokens": ctx.output_tokens,
        "totalTokens": cache.total + ctx.output_tokens,
        "cacheReadInputTokens": cache.read,
        "cacheWriteInputTokens": cache.written,
    }
    if cache.written:
        details = []
        if cache.written - cache.written_1h:
            details.append({"ttl": "5m", "inputTokens": cache.written - cache.written_1h})
        if cache.written_1h:
            details.append({"ttl": "1h", "inputTokens": cache.written_1h})
        out["cacheDetails"] = details
    return out


def encode(reply: Reply, ctx: StreamContext) -> list[bytes]:
    events = [_event("messageStart", {"role": "assistant"})]
    index = 0

    def block(deltas: list[dict[str, Any]], start: dict[str, Any] | None = None) -> None:
        nonlocal index
        if start is not None:
            events.append(_event("contentBlockStart", {"contentBlockIndex": index, "start": start}))
        for delta in deltas:
            events.append(_event("contentBlockDelta", {"contentBlockIndex": index, "delta": delta}))
        events.append(_event("contentBlockStop", {"contentBlockIndex": index}))
        index += 1

    if reply.thinking:
        deltas = [{"reasoningContent": {"text": p}} for p in pieces(reply.thinking)]
        deltas.append({"reasoningContent": {"signature": f"emu-sig-{ctx.seq}"}})
        block(deltas)
    if reply.text:
        block([{"text": p} for p in pieces(reply.text)])
    for n, call in enumerate(reply.calls):
        start = {"toolUse": {"toolUseId": f"tooluse_emu_{ctx.seq:06d}_{n}", "name": call.name}}
        block([{"toolUse": {"input": p}} for p in pieces(dumps(call.arguments), ARGS_PIECE)], start)
    events.append(_event("messageStop", {"stopReason": _STOP[reply.stop]}))
    events.append(_event("metadata", {"usage": usage(ctx), "metrics": {"latencyMs": 1}}))
    return events


def error_body(status: int, message: str) -> tuple[dict[str, Any], dict[str, str]]:
    """The JSON body and the ``x-amzn-ErrorType`` header AWS sends with an HTTP error."""
    kind = _ERROR_TYPES.get(status, "InternalServerException")
    return {"message": message}, {"x-amzn-errortype": kind}


def corrupt(frame: bytes) -> bytes:
    """The frame with one payload byte changed, so its message CRC no longer matches."""
    if len(frame) <= 17:
        return frame
    position = len(frame) - 5  # the last payload byte (before the 4-byte message CRC)
    return frame[:position] + bytes([frame[position] ^ 0x20]) + frame[position + 1 :]
