"""OpenAI Responses SSE to the neutral event stream (also Azure and Codex responses).

Mirrors pi-ai 1.0.3 ``processResponsesStream``: output items map to content blocks by
``output_index``; a block's final text/arguments come from ``response.output_item.done``;
usage, status and stop reason come from the terminal ``response.completed`` /
``response.incomplete`` event, and a stream without one is an error. ``input`` is
``input_tokens`` minus ``input_tokens_details.cached_tokens`` (and ``cache_write_tokens``
where a gateway reports them); ``totalTokens`` is the provider's ``total_tokens``.

The Codex variant (``openai-codex-responses``) reads its own SSE the way pi-ai's Codex
adapter does: ``response.done`` counts as completion and ends the stream, and ``error`` /
``response.failed`` events become "Codex error: ..." failures.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import orjson

from desktop.pi.cost import calculate_cost, zero_cost
from desktop.pi.streaming.base import StreamFailure, StreamParser
from desktop.pi.streaming.openai_common import MALFORMED_EVENT, decode_openai_event
from desktop.pi.streaming.partial_json import StreamingJson, parse_streaming_json
from desktop.pi.streaming.sse import SseEvent

_CODEX_STATUSES = frozenset({"completed", "incomplete", "failed", "cancelled", "queued", "in_progress"})


def _json(value: Any) -> str:
    return orjson.dumps(value).decode()


def text_signature_v1(item_id: str, phase: str | None) -> str:
    payload: dict[str, Any] = {"v": 1, "id": item_id}
    if phase:
        payload["phase"] = phase
    return _json(payload)


def map_status(status: str | None, incomplete_reason: str | None) -> tuple[str, str | None]:
    if not status or status in ("completed", "in_progress", "queued"):
        return "stop", None
    if status == "incomplete":
        if incomplete_reason == "max_output_tokens":
            return "length", None
        if incomplete_reason:
            return "error", f"Response incomplete: {incomplete_reason}"
        return "error", "Response incomplete without a provider reason"
    if status in ("failed", "cancelled"):
        return "error", None
    raise StreamFailure(f"Unhandled stop reason: {status}")


def service_tier_multiplier(model_id: str, tier: str | None) -> float:
    if tier == "flex":
        return 0.5
    if tier in ("priority", "fast"):
        return 2.5 if model_id == "gpt-5.5" else 2.0
    return 1.0


class OpenAIResponsesParser(StreamParser):
    api = "openai-responses"
    codex = False

    def __init__(
        self, model: Mapping[str, Any], *, timestamp: int | None = None, service_tier: str | None = None
    ) -> None:
        super().__init__(model, timestamp=timestamp)
        self._slots: dict[int, tuple[str, int]] = {}  # output_index -> (kind, content index)
        self._partial_json: dict[
            int, StreamingJson
        ] = {}  # content index -> arguments so far (until item done)
        self._reasoning_by_id: dict[str, int] = {}
        self._saw_terminal = False
        self._service_tier = service_tier

    # -- decoding ----------------------------------------------------------------------
    def on_sse(self, sse: SseEvent) -> None:
        if self.codex:
            event = self._decode_codex(sse)
            if event is None:
                return
        else:  # ``decode_openai_event`` for a usual event, without the call: this runs per event
            name, data = sse
            if data == "[DONE]":
                return
            try:
                event = orjson.loads(data)
            except orjson.JSONDecodeError as exc:
                raise StreamFailure(MALFORMED_EVENT) from exc
            if event.__class__ is not dict:  # orjson makes plain dicts, never subclasses
                if name == "error":
                    decode_openai_event(sse)
                return
            if name == "error" or event.get("error"):
                decode_openai_event(sse)  # raises the SDK's error for it
        kind = event.get("type")
        if kind.__class__ is str:
            handler = _HANDLERS.get(kind)
            if handler is not None:
                handler(self, event)

    def _decode_codex(self, sse: SseEvent) -> dict[str, Any] | None:
        """The event as pi-ai's Codex adapter reads it (a dict), or None for one it skips."""
        data = sse.data.strip()
        if not data or data == "[DONE]":
            return None
        try:
            event = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise StreamFailure(f"Invalid Codex SSE JSON: {exc}") from exc
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            return None
        kind = event["type"]
        if kind == "error":
            inner = event.get("error")
            error: dict[str, Any] = inner if isinstance(inner, dict) else event
            text = error.get("message") or error.get("code") or _json(event)
            raise StreamFailure(f"Codex error: {text}")
        if kind == "response.failed":
            error = (event.get("response") or {}).get("error") or {}
            raise StreamFailure(error.get("message") or "Codex response failed")
        if kind in ("response.done", "response.completed", "response.incomplete"):
            response = event.get("response")
            if isinstance(response, dict):
                if isinstance(response.get("end_turn"), bool):
                    self.output["endTurn"] = response["end_turn"]
                status = response.get("status")
                response = {**response, "status": status if status in _CODEX_STATUSES else None}
            self._stream_closed = True
            return {**event, "type": "response.completed", "response": response}
        return event

    # -- events --------------------------------------------------------------------------
    def _slot(self, output_index: Any, kind: str) -> int | None:
        slot = self._slots.get(output_index)
        return slot[1] if slot is not None and slot[0] == kind else None

    def _create_slot(self, output_index: int, item: Mapping[str, Any]) -> tuple[str, int] | None:
        content = self.output["content"]
        kind = item.get("type")
        if kind == "reasoning":
            content.append({"type": "thinking", "thinking": ""})
            slot, start = ("thinking", len(content) - 1), "thinking_start"
        elif kind == "message":
            self._phase_stop(item)
            content.append({"type": "text", "text": ""})
            slot, start = ("text", len(content) - 1), "text_start"
        elif kind == "function_call":
            block: dict[str, Any] = {
                "type": "toolCall",
                "id": f"{item.get('call_id')}|{item.get('id')}",
                "name": item.get("name"),
                "arguments": {},
            }
            if item.get("namespace") is not None:
                block["namespace"] = item["namespace"]
            content.append(block)
            slot, start = ("toolCall", len(content) - 1), "toolcall_start"
            self._partial_json[slot[1]] = StreamingJson(item.get("arguments") or "")
        else:
            return None
        self._slots[output_index] = slot
        self.emit_block(start, slot[1])
        return slot

    def _phase_stop(self, item: Mapping[str, Any]) -> None:
        if item.get("type") == "message" and item.get("phase") == "final_answer":
            self.output["stopReason"] = "stop"

    # One handler per event type (looked up once rather than compared in turn).
    def _created(self, event: Mapping[str, Any]) -> None:
        self.output["responseId"] = (event.get("response") or {}).get("id")

    def _item_added(self, event: Mapping[str, Any]) -> None:
        self._create_slot(event.get("output_index"), event.get("item") or {})  # type: ignore[arg-type]

    def _thinking_delta(self, event: Mapping[str, Any]) -> None:
        index = self._slot(event.get("output_index"), "thinking")
        if index is not None:
            self.output["content"][index]["thinking"] += event.get("delta", "")
            self.emit_delta("thinking_delta", index, event.get("delta", ""))

    def _summary_part_done(self, event: Mapping[str, Any]) -> None:
        index = self._slot(event.get("output_index"), "thinking")
        if index is not None:
            self.output["content"][index]["thinking"] += "\n\n"
            self.emit_delta("thinking_delta", index, "\n\n")

    def _text_delta(self, event: Mapping[str, Any]) -> None:
        # ``_slot`` and ``emit_delta`` inlined: the most frequent event of a long answer.
        slot = self._slots.get(event.get("output_index"))  # type: ignore[arg-type]
        if slot is not None and slot[0] == "text":
            index = slot[1]
            delta = event.get("delta", "")
            out = self.output
            out["content"][index]["text"] += delta
            self._events.append({"type": "text_delta", "contentIndex": index, "delta": delta, "partial": out})

    def _arguments_delta(self, event: Mapping[str, Any]) -> None:
        index = self._slot(event.get("output_index"), "toolCall")
        if index is not None and index in self._partial_json:
            self.output["content"][index]["arguments"] = self._partial_json[index].append(
                event.get("delta", "")
            )
            self.emit_delta("toolcall_delta", index, event.get("delta", ""))

    def _arguments_done(self, event: Mapping[str, Any]) -> None:
        index = self._slot(event.get("output_index"), "toolCall")
        if index is not None and index in self._partial_json:
            previous = self._partial_json[index].text
            final = event.get("arguments", "")
            self._partial_json[index] = StreamingJson(final)
            self.output["content"][index]["arguments"] = parse_streaming_json(final)
            if final.startswith(previous) and len(final) > len(previous):
                self.emit_delta("toolcall_delta", index, final[len(previous) :])

    def _error_event(self, event: Mapping[str, Any]) -> None:
        raise StreamFailure(f"Error Code {event.get('code')}: {event.get('message')}")

    def _failed(self, event: Mapping[str, Any]) -> None:
        self._saw_terminal = True
        response = event.get("response") or {}
        self.output["rawStopReason"] = response.get("status")
        error = response.get("error")
        details = response.get("incomplete_details") or {}
        if error:
            message = f"{error.get('code') or 'unknown'}: {error.get('message') or 'no message'}"
        elif details.get("reason"):
            message = f"incomplete: {details['reason']}"
        else:
            message = "Unknown error (no error details in response)"
        raise StreamFailure(message)

    def _item_done(self, event: Mapping[str, Any]) -> None:
        output_index: Any = event.get("output_index")
        item = event.get("item") or {}
        if item.get("type") == "message" and item.get("phase") == "final_answer":  # ``_phase_stop``
            self.output["stopReason"] = "stop"
        slot = self._slots.get(output_index) or self._create_slot(output_index, item)
        if slot is None:
            return
        kind, index = slot
        block = self.output["content"][index]
        item_type = item.get("type")
        if item_type == "reasoning" and kind == "thinking":
            summary = "\n\n".join(part.get("text", "") for part in item.get("summary") or ())
            text = "\n\n".join(part.get("text", "") for part in item.get("content") or ())
            block["thinking"] = summary or text or block["thinking"]
            block["thinkingSignature"] = _json(item)
            if item.get("id") is not None:
                self._reasoning_by_id[item["id"]] = index
            self.emit_block("thinking_end", index, content=block["thinking"])
        elif item_type == "message" and kind == "text":
            parts = item.get("content") or ()
            block["text"] = "".join(
                (part.get("text") if part.get("type") == "output_text" else part.get("refusal")) or ""
                for part in parts
            )
            block["textSignature"] = text_signature_v1(item.get("id", ""), item.get("phase"))
            self.emit_block("text_end", index, content=block["text"])
        elif item_type == "function_call" and kind == "toolCall" and index in self._partial_json:
            block["arguments"] = parse_streaming_json(
                item.get("arguments") or self._partial_json[index].text or "{}"
            )
            if item.get("namespace") is not None:
                block["namespace"] = item["namespace"]
            del self._partial_json[index]
            self.emit_block("toolcall_end", index, toolCall=block)
        else:
            return
        del self._slots[output_index]

    def _completed(self, event: Mapping[str, Any]) -> None:
        response = event.get("response") or {}
        out = self.output
        self._saw_terminal = True
        self._stream_closed = True  # the API's end event (design W1)
        if self._reasoning_by_id:  # only reasoning items seen in this stream get backfilled
            self._backfill_reasoning(response.get("output") or ())
        if response.get("id"):
            out["responseId"] = response["id"]
        raw = response.get("usage")
        if raw:
            details = raw.get("input_tokens_details") or {}
            cached = details.get("cached_tokens") or 0
            written = details.get("cache_write_tokens") or 0
            out["usage"] = {
                "input": max(0, (raw.get("input_tokens") or 0) - cached - written),
                "output": raw.get("output_tokens") or 0,
                "cacheRead": cached,
                "cacheWrite": written,
                "reasoning": (raw.get("output_tokens_details") or {}).get("reasoning_tokens") or 0,
                "totalTokens": raw.get("total_tokens") or 0,
                "cost": zero_cost(),
            }
        cost = calculate_cost(self.model, out["usage"])
        tier = response.get("service_tier") or self._service_tier
        multiplier = service_tier_multiplier(self.model["id"], tier) if tier else 1.0
        if multiplier != 1.0:
            for key in ("input", "output", "cacheRead", "cacheWrite"):
                cost[key] *= multiplier
            cost["total"] = cost["input"] + cost["output"] + cost["cacheRead"] + cost["cacheWrite"]
        status = response.get("status")
        reason = (response.get("incomplete_details") or {}).get("reason")
        reason = reason if isinstance(reason, str) else None
        out["rawStopReason"] = f"{status}.{reason}" if reason else status
        stop, error = map_status(status, reason)
        out["stopReason"] = stop
        if error is None:
            out.pop("errorMessage", None)
        else:
            out["errorMessage"] = error
        if stop == "stop":
            for block in out["content"]:
                if block["type"] == "toolCall":
                    out["stopReason"] = "toolUse"
                    break

    def _backfill_reasoning(self, items: Any) -> None:
        for item in items:
            if (
                not isinstance(item, dict)
                or item.get("type") != "reasoning"
                or not item.get("encrypted_content")
            ):
                continue
            index = self._reasoning_by_id.get(item.get("id", ""))
            if index is None:
                continue
            block = self.output["content"][index]
            if not block.get("thinkingSignature"):
                continue
            stored = orjson.loads(block["thinkingSignature"])
            if stored.get("encrypted_content"):
                continue
            block["thinkingSignature"] = _json({**stored, "encrypted_content": item["encrypted_content"]})

    def on_end(self) -> None:
        if not self._saw_terminal:
            raise StreamFailure("OpenAI Responses stream ended before a terminal response event")
        if self.output["stopReason"] == "toolUse":
            for index, block in enumerate(self.output["content"]):
                if block["type"] == "toolCall" and index in self._partial_json:
                    raise StreamFailure(
                        f"OpenAI Responses stream completed with an unfinished tool call: {block['name']} ({block['id']})"
                    )

    def missing_stop_message(self) -> str:
        return "OpenAI Responses stream ended without a stop reason"


_HANDLERS: dict[str, Callable[[OpenAIResponsesParser, Mapping[str, Any]], None]] = {
    "response.created": OpenAIResponsesParser._created,
    "response.output_item.added": OpenAIResponsesParser._item_added,
    "response.reasoning_summary_text.delta": OpenAIResponsesParser._thinking_delta,
    "response.reasoning_text.delta": OpenAIResponsesParser._thinking_delta,
    "response.reasoning_summary_part.done": OpenAIResponsesParser._summary_part_done,
    "response.output_text.delta": OpenAIResponsesParser._text_delta,
    "response.refusal.delta": OpenAIResponsesParser._text_delta,
    "response.function_call_arguments.delta": OpenAIResponsesParser._arguments_delta,
    "response.function_call_arguments.done": OpenAIResponsesParser._arguments_done,
    "response.output_item.done": OpenAIResponsesParser._item_done,
    "response.completed": OpenAIResponsesParser._completed,
    "response.incomplete": OpenAIResponsesParser._completed,
    "error": OpenAIResponsesParser._error_event,
    "response.failed": OpenAIResponsesParser._failed,
}


class AzureOpenAIResponsesParser(OpenAIResponsesParser):
    api = "azure-openai-responses"


class OpenAICodexResponsesParser(OpenAIResponsesParser):
    api = "openai-codex-responses"
    codex = True
