"""Mistral chat-completions SSE to the neutral event stream.

Mirrors pi-ai 1.0.3 ``mistral-conversations.ts``: text and thinking chunks open a new block
whenever the kind changes, empty deltas open nothing, tool calls close the current block
and are finished (arguments parsed) at the end of the stream. ``input`` is
``prompt_tokens`` minus the cached prompt tokens (``prompt_tokens_details.cached_tokens``
or one of its spellings), cache writes are always 0, ``totalTokens`` is the provider's
``total_tokens`` when given.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

import orjson

from desktop.pi.cost import calculate_cost
from desktop.pi.projection.mistral import derive_tool_call_id
from desktop.pi.streaming.base import StreamFailure, StreamParser
from desktop.pi.streaming.partial_json import StreamingJson
from desktop.pi.streaming.sse import SseEvent

_SURROGATE = re.compile(r"[\ud800-\udfff]")


def cached_prompt_tokens(usage: Mapping[str, Any], prompt_tokens: int) -> int:
    for outer, inner in (
        ("promptTokensDetails", "cachedTokens"),
        ("prompt_tokens_details", "cached_tokens"),
        ("promptTokenDetails", "cachedTokens"),
        ("prompt_token_details", "cached_tokens"),
    ):
        details = usage.get(outer)
        if isinstance(details, dict) and details.get(inner) is not None:
            raw: Any = details[inner]
            break
    else:
        raw = usage.get("numCachedTokens")
        if raw is None:
            raw = usage.get("num_cached_tokens")
    cached = raw if isinstance(raw, int | float) and not isinstance(raw, bool) and math.isfinite(raw) else 0
    return int(min(prompt_tokens, max(0, cached)))


def map_finish_reason(reason: str | None) -> tuple[str, str | None]:
    if reason is None or reason == "stop":
        return "stop", None
    if reason in ("length", "model_length"):
        return "length", None
    if reason == "tool_calls":
        return "toolUse", None
    if reason == "error":
        return "error", "Provider stopped with: error"
    return "error", f"Provider stopped with: {reason}"


def _sanitize(text: str) -> str:
    """Drop lone surrogates (pi-ai ``sanitizeSurrogates``); Python strings hold no valid pairs."""
    return _SURROGATE.sub("", text) if _SURROGATE.search(text) else text


class MistralConversationsParser(StreamParser):
    api = "mistral-conversations"

    def __init__(self, model: Mapping[str, Any], *, timestamp: int | None = None) -> None:
        super().__init__(model, timestamp=timestamp)
        self._current: int | None = None
        self._tools: dict[Any, int] = {}
        self._partial_args: dict[int, StreamingJson] = {}

    def on_sse(self, sse: SseEvent) -> None:
        data = "\n".join(line.lstrip() for line in sse.data.split("\n")).strip()
        if not data:
            return
        if data == "[DONE]":
            self._stream_closed = True
            return
        try:
            chunk = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise StreamFailure(f"Could not parse Mistral stream event: {exc}") from exc
        if not isinstance(chunk, dict) or not isinstance(chunk.get("choices"), list):
            raise StreamFailure("Invalid Mistral streaming event")
        self._chunk(chunk)

    def _chunk(self, chunk: Mapping[str, Any]) -> None:
        out = self.output
        if not out.get("responseId") and chunk.get("id"):
            out["responseId"] = chunk["id"]
        raw = chunk.get("usage")
        if raw:
            usage = out["usage"]
            prompt = raw.get("prompt_tokens") or 0
            cached = cached_prompt_tokens(raw, prompt)
            usage["input"] = max(0, prompt - cached)
            usage["output"] = raw.get("completion_tokens") or 0
            usage["cacheRead"] = cached
            usage["cacheWrite"] = 0
            usage["totalTokens"] = raw.get("total_tokens") or (
                usage["input"] + usage["output"] + usage["cacheRead"] + usage["cacheWrite"]
            )
            calculate_cost(self.model, usage)
        choices = chunk["choices"]
        if not choices:
            return
        choice = choices[0]
        if choice.get("finish_reason"):
            out["rawStopReason"] = choice["finish_reason"]
            stop, error = map_finish_reason(choice["finish_reason"])
            out["stopReason"] = stop
            if error:
                out["errorMessage"] = error
        delta = choice.get("delta") or {}
        text = delta.get("content")
        if text is not None:
            for item in [text] if isinstance(text, str) else text:
                if isinstance(item, str):
                    self._append("text", _sanitize(item))
                elif item.get("type") == "thinking":
                    parts = [part.get("text") or "" for part in item.get("thinking") or ()]
                    self._append("thinking", _sanitize("".join(parts)))
                elif item.get("type") == "text":
                    self._append("text", _sanitize(item.get("text") or ""))
        for call in delta.get("tool_calls") or ():
            self._tool_call(call)

    def _append(self, kind: str, piece: str) -> None:
        if not piece:
            return
        content = self.output["content"]
        if self._current is None or content[self._current]["type"] != kind:
            self.end_open_block()
            content.append({"type": kind, kind: ""})
            self._current = len(content) - 1
            self.emit_block(f"{kind}_start", self._current)
        content[self._current][kind] += piece
        self.emit_block(f"{kind}_delta", self._current, delta=piece)

    def _tool_call(self, call: Mapping[str, Any]) -> None:
        self.end_open_block()
        function = call.get("function") or {}
        raw_id = call.get("id")
        call_id = (
            raw_id
            if raw_id and raw_id != "null"
            else derive_tool_call_id(f"toolcall:{call.get('index') or 0}")
        )
        key = call.get("index") if call.get("index") is not None else call_id
        content = self.output["content"]
        index = self._tools.get(key)
        if index is None:
            content.append({"type": "toolCall", "id": call_id, "name": function.get("name"), "arguments": {}})
            index = len(content) - 1
            self._tools[key] = index
            self._partial_args[index] = StreamingJson()
            self.emit_block("toolcall_start", index)
        arguments = function.get("arguments")
        piece = arguments if isinstance(arguments, str) else orjson.dumps(arguments or {}).decode()
        content[index]["arguments"] = self._partial_args.setdefault(index, StreamingJson()).append(piece)
        self.emit_delta("toolcall_delta", index, piece)

    def on_end(self) -> None:
        self.end_open_block()
        for index in self._tools.values():
            self.end_block(index, self._partial_args)

    def missing_stop_message(self) -> str:
        return "Mistral stream ended without a finish reason"
