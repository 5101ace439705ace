"""OpenAI Responses streaming events (also served for Azure and Codex paths)."""

from __future__ import annotations

from typing import Any

from desktop.emulator.script import Reply
from desktop.emulator.wire.common import ARGS_PIECE, StreamContext, dumps, pieces, sse


def usage(ctx: StreamContext) -> dict[str, Any]:
    cache = ctx.cache
    return {
        "input_tokens": cache.total,
        "input_tokens_details": {"cached_tokens": cache.read},
        "output_tokens": ctx.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": cache.total + ctx.output_tokens,
    }


def encode(reply: Reply, ctx: StreamContext) -> list[bytes]:
    seq = 0
    events: list[bytes] = []

    def emit(kind: str, **fields: Any) -> None:
        nonlocal seq
        events.append(sse({"type": kind, "sequence_number": seq, **fields}, kind))
        seq += 1

    response: dict[str, Any] = {
        "id": f"resp_emu_{ctx.seq:06d}",
        "object": "response",
        "created_at": ctx.created // 1000,
        "status": "in_progress",
        "model": ctx.model,
        "output": [],
        "usage": None,
    }
    emit("response.created", response=response)
    emit("response.in_progress", response=response)
    output: list[dict[str, Any]] = []
    if reply.thinking:
        item_id = f"rs_emu_{ctx.seq:06d}"
        index = len(output)
        at = {"item_id": item_id, "output_index": index, "summary_index": 0}
        emit(
            "response.output_item.added",
            output_index=index,
            item={"id": item_id, "type": "reasoning", "summary": []},
        )
        emit("response.reasoning_summary_part.added", **at, part={"type": "summary_text", "text": ""})
        for piece in pieces(reply.thinking):
            emit("response.reasoning_summary_text.delta", **at, delta=piece)
        emit("response.reasoning_summary_text.done", **at, text=reply.thinking)
        done_part = {"type": "summary_text", "text": reply.thinking}
        emit("response.reasoning_summary_part.done", **at, part=done_part)
        item = {"id": item_id, "type": "reasoning", "summary": [done_part]}
        emit("response.output_item.done", output_index=index, item=item)
        output.append(item)
    if reply.text:
        item_id = f"msg_emu_{ctx.seq:06d}"
        index = len(output)
        at = {"item_id": item_id, "output_index": index, "content_index": 0}
        added = {
            "id": item_id,
            "type": "message",
            "status": "in_progress",
            "content": [],
            "role": "assistant",
        }
        emit("response.output_item.added", output_index=index, item=added)
        emit("response.content_part.added", **at, part={"type": "output_text", "annotations": [], "text": ""})
        for piece in pieces(reply.text):
            emit("response.output_text.delta", **at, delta=piece)
        emit("response.output_text.done", **at, text=reply.text)
        text_part = {"type": "output_text", "annotations": [], "text": reply.text}
        emit("response.content_part.done", **at, part=text_part)
        item = {**added, "status": "completed", "content": [text_part]}
        emit("response.output_item.done", output_index=index, item=item)
        output.append(item)
    for n, call in enumerate(reply.calls):
        item_id = f"fc_emu_{ctx.seq:06d}_{n}"
        index = len(output)
        arguments = dumps(call.arguments)
        added = {
            "id": item_id,
            "type": "function_call",
            "status": "in_progress",
            "arguments": "",
            "call_id": f"call_emu_{ctx.seq:06d}_{n}",
            "name": call.name,
        }
        emit("response.output_item.added", output_index=index, item=added)
        for piece in pieces(arguments, ARGS_PIECE):
            emit("response.function_call_arguments.delta", item_id=item_id, output_index=index, delta=piece)
        emit(
            "response.function_call_arguments.done", item_id=item_id, output_index=index, arguments=arguments
        )
        item = {**added, "status": "completed", "arguments": arguments}
        emit("response.output_item.done", output_index=index, item=item)
        output.append(item)
    final = {**response, "output": output, "usage": usage(ctx)}
    if reply.stop == "length":
        final.update(status="incomplete", incomplete_details={"reason": "max_output_tokens"})
        emit("response.incomplete", response=final)
    else:
        final["status"] = "completed"
        emit("response.completed", response=final)
    return events


def error_body(status: int, message: str) -> dict[str, Any]:
    kind = {429: "rate_limit_exceeded", 401: "invalid_api_key"}.get(status, "server_error")
    return {"error": {"message": message, "type": kind, "param": None, "code": kind}}
