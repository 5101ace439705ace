"""Gemini ``streamGenerateContent?alt=sse`` to the neutral event stream.

Mirrors pi-ai 1.0.3 ``google-generative-ai.ts`` (through the @google/genai SDK's stream
reader): parts open a text or thinking block when the kind changes (``thought: true``
marks thinking), each ``functionCall`` part is a complete tool call, the candidate's
``finishReason`` sets the stop reason, and ``usageMetadata`` replaces usage wholesale.
``input`` is ``promptTokenCount`` minus ``cachedContentTokenCount``; ``output`` includes
``thoughtsTokenCount``. A body that ends inside an event is an error, as in the SDK.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import orjson

from desktop.pi.cost import calculate_cost, zero_cost
from desktop.pi.streaming.base import StreamFailure, StreamParser
from desktop.pi.streaming.sse import SseEvent

_ERROR_REASONS = frozenset(
    {
        "BLOCKLIST",
        "PROHIBITED_CONTENT",
        "SPII",
        "SAFETY",
        "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT",
        "IMAGE_RECITATION",
        "IMAGE_OTHER",
        "RECITATION",
        "FINISH_REASON_UNSPECIFIED",
        "OTHER",
        "LANGUAGE",
        "MALFORMED_FUNCTION_CALL",
        "UNEXPECTED_TOOL_CALL",
        "TOO_MANY_TOOL_CALLS",
        "NO_IMAGE",
    }
)


def map_finish_reason(reason: str) -> str:
    if reason == "STOP":
        return "stop"
    if reason == "MAX_TOKENS":
        return "length"
    if reason in _ERROR_REASONS:
        return "error"
    raise StreamFailure(f"Unhandled stop reason: {reason}")


def _retain(existing: str | None, incoming: Any) -> str | None:
    return incoming if isinstance(incoming, str) and incoming else existing


class GoogleGenerativeAIParser(StreamParser):
    api = "google-generative-ai"
    output_api = "google-generative-ai"
    unterminated_error = "Incomplete JSON segment at the end"
    missing_finish_error: ClassVar[str] = "Google stream ended without a finish reason"

    def __init__(self, model: Mapping[str, Any], *, timestamp: int | None = None) -> None:
        super().__init__(model, timestamp=timestamp)
        self._current: int | None = None
        self._tool_counter = 0

    def on_sse(self, sse: SseEvent) -> None:
        data = sse.data.strip()
        if not data:
            return
        try:
            chunk = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise StreamFailure(f"exception parsing stream chunk {data}. {exc}") from exc
        if not isinstance(chunk, dict):
            return
        if "error" in chunk:
            error = chunk["error"] if isinstance(chunk["error"], dict) else {}
            raise StreamFailure(f"got status: {error.get('status')}. {orjson.dumps(chunk).decode()}")
        self._chunk(chunk)

    def _chunk(self, chunk: Mapping[str, Any]) -> None:
        out = self.output
        if not out.get("responseId") and chunk.get("responseId"):
            out["responseId"] = chunk["responseId"]
        candidates = chunk.get("candidates") or []
        candidate = candidates[0] if candidates else None
        parts = ((candidate or {}).get("content") or {}).get("parts")
        for part in parts or ():
            if part.get("text") is not None:
                self._text_part(part)
            if part.get("functionCall"):
                self._function_call(part)
        if candidate and candidate.get("finishReason"):
            out["rawStopReason"] = candidate["finishReason"]
            out["stopReason"] = map_finish_reason(candidate["finishReason"])
            if out["stopReason"] == "stop" and any(b["type"] == "toolCall" for b in out["content"]):
                out["stopReason"] = "toolUse"
        meta = chunk.get("usageMetadata")
        if meta:
            cached = meta.get("cachedContentTokenCount") or 0
            thoughts = meta.get("thoughtsTokenCount") or 0
            out["usage"] = {
                "input": (meta.get("promptTokenCount") or 0) - cached,
                "output": (meta.get("candidatesTokenCount") or 0) + thoughts,
                "cacheRead": cached,
                "cacheWrite": 0,
                "reasoning": thoughts,
                "totalTokens": meta.get("totalTokenCount") or 0,
                "cost": zero_cost(),
            }
            calculate_cost(self.model, out["usage"])

    def _text_part(self, part: Mapping[str, Any]) -> None:
        content = self.output["content"]
        kind = "thinking" if part.get("thought") is True else "text"
        if self._current is None or content[self._current]["type"] != kind:
            self.end_open_block()
            block: dict[str, Any] = {"type": kind, kind: ""}
            content.append(block)
            self._current = len(content) - 1
            self.emit_block(f"{kind}_start", self._current)
        block = content[self._current]
        block[kind] += part["text"]
        signature_key = "thinkingSignature" if kind == "thinking" else "textSignature"
        signature = _retain(block.get(signature_key), part.get("thoughtSignature"))
        if signature is not None:
            block[signature_key] = signature
        self.emit_block(f"{kind}_delta", self._current, delta=part["text"])

    def _function_call(self, part: Mapping[str, Any]) -> None:
        self.end_open_block()
        call = part["functionCall"]
        content = self.output["content"]
        provided = call.get("id")
        taken = any(b["type"] == "toolCall" and b["id"] == provided for b in content)
        if not provided or taken:
            self._tool_counter += 1
            provided = f"{call.get('name')}_{self.output['timestamp']}_{self._tool_counter}"
        args = call.get("args")
        tool_call: dict[str, Any] = {
            "type": "toolCall",
            "id": provided,
            "name": call.get("name") or "",
            "arguments": {} if args is None else args,
        }
        if part.get("thoughtSignature"):
            tool_call["thoughtSignature"] = part["thoughtSignature"]
        content.append(tool_call)
        index = len(content) - 1
        self.emit_block("toolcall_start", index)
        self.emit_delta("toolcall_delta", index, orjson.dumps(tool_call["arguments"]).decode())
        self.emit_block("toolcall_end", index, toolCall=tool_call)

    def on_end(self) -> None:
        self.end_open_block()

    def validate(self) -> None:
        out = self.output
        if out["stopReason"] == "pending":
            raise StreamFailure(self.missing_finish_error)
        if out["stopReason"] in ("aborted", "error"):
            raw = out.get("rawStopReason")
            raise StreamFailure(f"Provider stopped with: {raw}" if raw else "An unknown error occurred")


class GoogleVertexParser(GoogleGenerativeAIParser):
    """Gemini on Vertex AI: the same SDK stream reader (pi-ai ``google-vertex.ts``), its own API name."""

    api = "google-vertex"
    output_api = "google-vertex"
    missing_finish_error = "Google Vertex stream ended without a finish reason"
