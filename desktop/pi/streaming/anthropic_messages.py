"""Anthropic Messages SSE (``/v1/messages``, ``stream: true``) to the neutral event stream.

Mirrors pi-ai 1.0.3 ``anthropic-messages.ts``: usage starts from ``message_start`` (so an
early abort still knows the input size) and is overwritten field by field by
``message_delta``. ``input`` is ``input_tokens`` as reported: Anthropic already excludes
cache reads (``cache_read_input_tokens``) and writes (``cache_creation_input_tokens``)
from it, so nothing is subtracted; ``totalTokens`` is the sum of the four.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import orjson

from desktop.pi.cost import calculate_cost
from desktop.pi.streaming.base import StreamFailure, StreamParser
from desktop.pi.streaming.partial_json import StreamingJson, parse_json_with_repair
from desktop.pi.streaming.sse import SseEvent

_MESSAGE_EVENTS = frozenset(
    {
        "message_start",
        "message_delta",
        "message_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
    }
)


def map_stop_reason(reason: str, details: Mapping[str, Any] | None = None) -> tuple[str, str | None]:
    """pi-ai's mapping of Anthropic ``stop_reason`` to a neutral stop reason and error text."""
    if reason in ("end_turn", "pause_turn", "stop_sequence"):
        return "stop", None
    if reason == "max_tokens":
        return "length", None
    if reason == "tool_use":
        return "toolUse", None
    if reason == "refusal":
        explanation = (details or {}).get("explanation")
        return "error", explanation or "The model refused to complete the request"
    if reason == "sensitive":
        return "error", "Provider stopped with: sensitive"
    raise StreamFailure(f"Unhandled stop reason: {reason}")


class AnthropicMessagesParser(StreamParser):
    api = "anthropic-messages"

    def __init__(self, model: Mapping[str, Any], *, timestamp: int | None = None) -> None:
        super().__init__(model, timestamp=timestamp)
        self._by_index: dict[int, int] = {}  # provider block index -> content index
        self._partial_json: dict[int, StreamingJson] = {}  # content index -> tool-call JSON so far
        self._saw_start = False
        self._saw_stop = False

    def on_sse(self, sse: SseEvent) -> None:
        name, data = sse
        if name not in _MESSAGE_EVENTS:
            if name == "error":
                raise StreamFailure(data)
            return  # ping and events this API does not define
        try:
            event = orjson.loads(data)
        except orjson.JSONDecodeError:
            event = self._repaired(name, data)
        if not isinstance(event, dict):
            raise StreamFailure(f"Could not parse Anthropic SSE event {name}: not an object; data={data}")
        kind = event.get("type")
        if kind.__class__ is str:  # one lookup rather than comparing with each type in turn
            handler = _HANDLERS.get(kind)
            if handler is not None:
                handler(self, event)

    def _on_message_start(self, event: Mapping[str, Any]) -> None:
        self._saw_start = True
        self._message_start(event.get("message") or {})

    def _on_message_stop(self, event: Mapping[str, Any]) -> None:
        self._saw_stop = True
        self._stream_closed = True  # the API's end event (design W1)

    @staticmethod
    def _repaired(name: str, data: str) -> Any:
        """Data that is not strict JSON, read the way pi-ai repairs it."""
        try:
            return parse_json_with_repair(data)
        except ValueError as exc:
            raise StreamFailure(f"Could not parse Anthropic SSE event {name}: {exc}; data={data}") from exc

    def _message_start(self, message: Mapping[str, Any]) -> None:
        out = self.output
        if message.get("id") is not None:
            out["responseId"] = message["id"]
        response_model = message.get("model")
        if response_model is not None and response_model != self.model["id"]:
            out["responseModel"] = response_model
        raw = message.get("usage") or {}
        usage = out["usage"]
        usage["input"] = raw.get("input_tokens") or 0
        usage["output"] = raw.get("output_tokens") or 0
        usage["cacheRead"] = raw.get("cache_read_input_tokens") or 0
        usage["cacheWrite"] = raw.get("cache_creation_input_tokens") or 0
        usage["cacheWrite1h"] = (raw.get("cache_creation") or {}).get("ephemeral_1h_input_tokens") or 0
        self._total_and_cost()

    def _total_and_cost(self) -> None:
        usage = self.output["usage"]
        usage["totalTokens"] = usage["input"] + usage["output"] + usage["cacheRead"] + usage["cacheWrite"]
        calculate_cost(self.model, usage)

    def _block_start(self, event: Mapping[str, Any]) -> None:
        block = event.get("content_block") or {}
        kind = block.get("type")
        content = self.output["content"]
        new: dict[str, Any]
        if kind == "fallback":
            if content:
                raise StreamFailure("Anthropic performed an unsupported mid-output model fallback")
            return
        if kind == "text":
            new, start = {"type": "text", "text": block.get("text") or ""}, "text_start"
        elif kind == "thinking":
            new = {
                "type": "thinking",
                "thinking": block.get("thinking") or "",
                "thinkingSignature": block.get("signature") or "",
            }
            start = "thinking_start"
        elif kind == "redacted_thinking":
            new = {
                "type": "thinking",
                "thinking": "[Reasoning redacted]",
                "thinkingSignature": block.get("data"),
                "redacted": True,
            }
            start = "thinking_start"
        elif kind == "tool_use":
            arguments = block.get("input")
            new = {
                "type": "toolCall",
                "id": block.get("id"),
                "name": block.get("name"),
                "arguments": {} if arguments is None else arguments,
            }
            start = "toolcall_start"
        else:
            return
        content.append(new)
        index = len(content) - 1
        self._by_index[event.get("index", 0)] = index
        if kind == "tool_use":
            self._partial_json[index] = StreamingJson()
        self.emit_block(start, index)

    def _block_delta(self, event: Mapping[str, Any]) -> None:
        delta = event.get("delta") or {}
        index = self._by_index.get(event.get("index", 0))
        if index is None:
            return
        block = self.output["content"][index]
        kind = delta.get("type")
        if kind == "text_delta" and block["type"] == "text":
            block["text"] += delta.get("text", "")
            self.emit_delta("text_delta", index, delta.get("text", ""))
        elif kind == "thinking_delta" and block["type"] == "thinking":
            block["thinking"] += delta.get("thinking", "")
            self.emit_delta("thinking_delta", index, delta.get("thinking", ""))
        elif kind == "input_json_delta" and block["type"] == "toolCall" and index in self._partial_json:
            piece = delta.get("partial_json", "")
            block["arguments"] = self._partial_json[index].append(piece)
            self.emit_delta("toolcall_delta", index, piece)
        elif kind == "signature_delta" and block["type"] == "thinking":
            block["thinkingSignature"] = (block.get("thinkingSignature") or "") + delta.get("signature", "")

    def _block_stop(self, event: Mapping[str, Any]) -> None:
        index = self._by_index.pop(event.get("index", 0), None)
        if index is not None:
            self.end_block(index, self._partial_json)

    def _message_delta(self, event: Mapping[str, Any]) -> None:
        out = self.output
        delta = event.get("delta") or {}
        reason = delta.get("stop_reason")
        if reason:
            out["rawStopReason"] = reason
            stop, error = map_stop_reason(reason, delta.get("stop_details"))
            out["stopReason"] = stop
            if error:
                out["errorMessage"] = error
        raw = event.get("usage")
        if raw:
            usage = out["usage"]
            for source, target in (
                ("input_tokens", "input"),
                ("output_tokens", "output"),
                ("cache_read_input_tokens", "cacheRead"),
                ("cache_creation_input_tokens", "cacheWrite"),
            ):
                if raw.get(source) is not None:
                    usage[target] = raw[source]
            one_hour = (raw.get("cache_creation") or {}).get("ephemeral_1h_input_tokens")
            if one_hour is not None:
                usage["cacheWrite1h"] = one_hour
            thinking = (raw.get("output_tokens_details") or {}).get("thinking_tokens")
            if thinking is not None:
                usage["reasoning"] = thinking
        self._total_and_cost()

    def on_end(self) -> None:
        if self._saw_start and not self._saw_stop:
            raise StreamFailure("Anthropic stream ended before message_stop")

    def missing_stop_message(self) -> str:
        return "Anthropic stream ended without a stop reason"


_HANDLERS: dict[str, Callable[[AnthropicMessagesParser, Mapping[str, Any]], None]] = {
    "content_block_delta": AnthropicMessagesParser._block_delta,
    "content_block_start": AnthropicMessagesParser._block_start,
    "content_block_stop": AnthropicMessagesParser._block_stop,
    "message_start": AnthropicMessagesParser._on_message_start,
    "message_delta": AnthropicMessagesParser._message_delta,
    "message_stop": AnthropicMessagesParser._on_message_stop,
}
