"""OpenAI Chat Completions SSE (``/chat/completions``) to the neutral event stream.

Mirrors pi-ai 1.0.3 ``openai-completions.ts``, used for OpenAI-compatible providers too
(DeepSeek, ...). One text block and one thinking block per response (reasoning arrives in
``reasoning_content``/``reasoning``/``reasoning_text``), tool calls keyed by their stream
index, and every block is closed only when the stream ends.

Usage: ``input`` is ``prompt_tokens`` minus cache reads minus cache writes. Cache reads
are ``prompt_tokens_details.cached_tokens`` (OpenAI), else ``prompt_cache_hit_tokens``
(DeepSeek), else a top-level ``cached_tokens`` (Kimi); writes are
``prompt_tokens_details.cache_write_tokens`` (OpenRouter-style) or 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from desktop.pi.cost import calculate_cost, zero_cost
from desktop.pi.streaming.base import StreamFailure, StreamParser
from desktop.pi.streaming.openai_common import DONE, decode_openai_event
from desktop.pi.streaming.partial_json import StreamingJson
from desktop.pi.streaming.sse import SseEvent

_REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")


def parse_chunk_usage(raw: Mapping[str, Any], model: Mapping[str, Any]) -> dict[str, Any]:
    """pi-ai ``parseChunkUsage``: neutral usage (with cost) from a chat-completions usage object."""
    prompt = raw.get("prompt_tokens") or 0
    details = raw.get("prompt_tokens_details") or {}
    cache_read = details.get("cached_tokens")
    if cache_read is None:
        cache_read = raw.get("prompt_cache_hit_tokens")
    if cache_read is None:
        cache_read = raw.get("cached_tokens")
    cache_read = cache_read or 0
    cache_write = details.get("cache_write_tokens") or 0
    fresh = max(0, prompt - cache_read - cache_write)
    output = raw.get("completion_tokens") or 0
    usage: dict[str, Any] = {
        "input": fresh,
        "output": output,
        "cacheRead": cache_read,
        "cacheWrite": cache_write,
        "reasoning": (raw.get("completion_tokens_details") or {}).get("reasoning_tokens") or 0,
        "totalTokens": fresh + output + cache_read + cache_write,
        "cost": zero_cost(),
    }
    calculate_cost(model, usage)
    return usage


def map_finish_reason(reason: str | None) -> tuple[str, str | None]:
    if reason is None or reason in ("stop", "end"):
        return "stop", None
    if reason == "length":
        return "length", None
    if reason in ("function_call", "tool_calls"):
        return "toolUse", None
    return "error", f"Provider finish_reason: {reason}"


class OpenAICompletionsParser(StreamParser):
    api = "openai-completions"

    def __init__(self, model: Mapping[str, Any], *, timestamp: int | None = None) -> None:
        super().__init__(model, timestamp=timestamp)
        self._text: int | None = None
        self._thinking: int | None = None
        self._tools_by_index: dict[int, int] = {}
        self._tools_by_id: dict[str, int] = {}
        self._partial_args: dict[int, StreamingJson] = {}
        self._has_finish_reason = False
        compat = model.get("compat") or {}
        self._supports_finish_reason = compat.get("supportsFinishReason", True) is not False

    def on_sse(self, sse: SseEvent) -> None:
        chunk = decode_openai_event(sse)
        if chunk is DONE:
            self._stream_closed = True
            return
        if not isinstance(chunk, dict):
            return
        out = self.output
        if not out.get("responseId") and chunk.get("id"):
            out["responseId"] = chunk["id"]
        response_model = chunk.get("model")
        if isinstance(response_model, str) and response_model and response_model != self.model["id"]:
            out.setdefault("responseModel", response_model)
        if chunk.get("usage"):
            out["usage"] = parse_chunk_usage(chunk["usage"], self.model)
        choices = chunk.get("choices")
        choice = choices[0] if isinstance(choices, list) and choices else None
        if not choice:
            return
        if not chunk.get("usage") and choice.get("usage"):
            out["usage"] = parse_chunk_usage(choice["usage"], self.model)
        if choice.get("finish_reason"):
            out["rawStopReason"] = choice["finish_reason"]
            stop, error = map_finish_reason(choice["finish_reason"])
            out["stopReason"] = stop
            if error:
                out["errorMessage"] = error
            self._has_finish_reason = True
        delta = choice.get("delta")
        if delta:
            self._delta(delta)

    def _delta(self, delta: Mapping[str, Any]) -> None:
        content = self.output["content"]
        text = delta.get("content")
        if isinstance(text, str) and text:
            if self._text is None:
                content.append({"type": "text", "text": ""})
                self._text = len(content) - 1
                self.emit_block("text_start", self._text)
            content[self._text]["text"] += text
            self.emit_delta("text_delta", self._text, text)
        field = None
        for name in _REASONING_FIELDS:  # the first with text (a plain loop: no generator per delta)
            value = delta.get(name)
            if isinstance(value, str) and value:
                field = name
                break
        if field is not None:
            piece = delta[field]
            if self._thinking is None:
                signature = (
                    "reasoning_content"
                    if self.model.get("provider") == "opencode-go" and field == "reasoning"
                    else field
                )
                content.append({"type": "thinking", "thinking": "", "thinkingSignature": signature})
                self._thinking = len(content) - 1
                self.emit_block("thinking_start", self._thinking)
            content[self._thinking]["thinking"] += piece
            self.emit_delta("thinking_delta", self._thinking, piece)
        for call in delta.get("tool_calls") or ():
            index = self._tool_block(call)
            block = content[index]
            function = call.get("function") or {}
            if not block["id"] and call.get("id"):
                block["id"] = call["id"]
                self._tools_by_id[call["id"]] = index
            if not block["name"] and function.get("name"):
                block["name"] = function["name"]
            piece = ""
            if function.get("arguments"):
                piece = function["arguments"]
                block["arguments"] = self._partial_args.setdefault(index, StreamingJson()).append(piece)
            self.emit_delta("toolcall_delta", index, piece)

    def _tool_block(self, call: Mapping[str, Any]) -> int:
        stream_index = call.get("index") if isinstance(call.get("index"), int) else None
        call_id = call.get("id")
        index = self._tools_by_index.get(stream_index) if stream_index is not None else None
        if index is None and call_id:
            index = self._tools_by_id.get(call_id)
        if index is None:
            content = self.output["content"]
            name = (call.get("function") or {}).get("name") or ""
            content.append({"type": "toolCall", "id": call_id or "", "name": name, "arguments": {}})
            index = len(content) - 1
            self._partial_args[index] = StreamingJson()
            self.emit_block("toolcall_start", index)
        if stream_index is not None:
            self._tools_by_index.setdefault(stream_index, index)
        if call_id:
            self._tools_by_id[call_id] = index
        return index

    def on_end(self) -> None:
        self._close_blocks()
        out = self.output
        if out["stopReason"] == "aborted":
            raise StreamFailure("Request was aborted")
        if not self._has_finish_reason and not self._supports_finish_reason:
            has_tool = any(block["type"] == "toolCall" for block in out["content"])
            out["stopReason"] = "toolUse" if has_tool else "stop"
        if out["stopReason"] == "error":
            raise StreamFailure(out.get("errorMessage") or "Provider returned an error stop reason")
        if (self._supports_finish_reason and not self._has_finish_reason) or out["stopReason"] == "pending":
            raise StreamFailure("Stream ended without finish_reason")

    def _close_blocks(self) -> None:
        for index in range(len(self.output["content"])):
            self.end_block(index, self._partial_args)
