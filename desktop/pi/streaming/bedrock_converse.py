"""Bedrock ``converse-stream`` (AWS event-stream frames) to the neutral event stream.

Mirrors pi-ai 1.0.3 ``bedrock-converse-stream.ts`` over the events the AWS SDK hands it:

* Text and reasoning blocks have no ``contentBlockStart``: the first delta for a provider
  index opens the block. A tool call opens on ``contentBlockStart.start.toolUse`` and its
  ``input`` deltas are re-parsed leniently after each piece. A stopped index is forgotten,
  so a later delta for the same index opens a new block.
* ``messageStop.stopReason`` sets the stop reason (unknown reasons are errors named
  ``Provider stopped with: …``); ``metadata.usage`` replaces usage. ``input`` is
  ``inputTokens`` as reported (Bedrock already excludes cache reads and writes), the cache
  fields are ``cacheReadInputTokens``/``cacheWriteInputTokens``, and ``totalTokens`` falls
  back to input + output when Bedrock sends none.
* Encrypted reasoning (``redactedContent``, base64 in the JSON payload) shows as
  ``[Reasoning redacted]``; its bytes are joined and re-encoded into ``thinkingSignature``
  when the block stops or the message ends.
* ``start`` is announced on ``messageStart``, not when the response arrives, as in pi-ai.
* Modeled exception frames end the message with pi-ai's prefixes (``Throttling error: …``)
  and a ``bedrock_response_failure`` diagnostic naming the exception (pi-ai also adds the
  response's request id, which a byte parser does not see); a frame failing its CRC or cut
  short ends it with an error naming the fault.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from typing import Any

import orjson

from desktop.pi.cost import calculate_cost
from desktop.pi.streaming.base import StreamFailure, StreamParser, now_ms
from desktop.pi.streaming.eventstream import EventMessage, EventStreamDecoder, EventStreamError
from desktop.pi.streaming.partial_json import StreamingJson

REDACTED_THINKING_PLACEHOLDER = "[Reasoning redacted]"
DATA_RETENTION_DOCS_URL = "https://docs.aws.amazon.com/bedrock/latest/userguide/data-retention.html"

#: pi-ai's human-readable prefixes for the modeled stream exceptions (retry logic matches them).
ERROR_PREFIXES = {
    "InternalServerException": "Internal server error",
    "ModelStreamErrorException": "Model stream error",
    "ValidationException": "Validation error",
    "ThrottlingException": "Throttling error",
    "ServiceUnavailableException": "Service unavailable",
}
_DATA_RETENTION = re.compile(r"data retention mode", re.IGNORECASE)


def map_stop_reason(reason: str | None) -> tuple[str, str | None]:
    """pi-ai's mapping of a Converse ``stopReason`` to a neutral stop reason and error text."""
    if reason in ("end_turn", "stop_sequence"):
        return "stop", None
    if reason in ("max_tokens", "model_context_window_exceeded"):
        return "length", None
    if reason == "tool_use":
        return "toolUse", None
    return "error", (f"Provider stopped with: {reason}" if reason else None)


def format_error(message: str, exception_type: str | None = None) -> str:
    """pi-ai ``formatBedrockError``: the modeled prefix (or the exception's own name)."""
    hint = (
        f" See {DATA_RETENTION_DOCS_URL} for supported data retention modes."
        if _DATA_RETENTION.search(message)
        else ""
    )
    if exception_type is None:
        return f"{message}{hint}"
    prefix = ERROR_PREFIXES.get(exception_type, exception_type)
    return f"{prefix}: {message}{hint}"


def _sdk_exception_name(event_type: str) -> str:
    """``throttlingException`` (the union member) -> ``ThrottlingException`` (the SDK class)."""
    return event_type[:1].upper() + event_type[1:]


def _json_payload(message: EventMessage, what: str) -> dict[str, Any]:
    try:
        value = orjson.loads(message.payload) if message.payload else {}
    except orjson.JSONDecodeError as exc:
        raise StreamFailure(f"Could not parse Bedrock {what} payload: {exc}") from exc
    if not isinstance(value, dict):
        raise StreamFailure(f"Could not parse Bedrock {what} payload: not a JSON object")
    return value


class BedrockConverseParser(StreamParser):
    api = "bedrock-converse-stream"

    def __init__(self, model: Mapping[str, Any], *, timestamp: int | None = None) -> None:
        super().__init__(model, timestamp=timestamp)
        self._frames = EventStreamDecoder()
        self._open: dict[int, int] = {}  # provider contentBlockIndex -> content index
        self._json: dict[int, StreamingJson] = {}  # content index -> tool input so far
        self._redacted: dict[int, list[bytes]] = {}  # content index -> encrypted reasoning

    # -- framing ---------------------------------------------------------------------------
    def ingest(self, chunk: bytes) -> None:
        try:
            for message in self._frames.feed(chunk):
                if self._stream_closed:
                    break
                self.on_message(message)
        except EventStreamError as exc:
            raise StreamFailure(f"Bedrock {exc}") from exc

    def ingest_end(self) -> None:
        try:
            self._frames.close()
        except EventStreamError as exc:
            raise StreamFailure(f"Bedrock {exc}") from exc

    def on_message(self, message: EventMessage) -> None:
        kind = message.header(":message-type")
        if kind == "error":
            raise StreamFailure(format_error(message.header(":error-message") or "UnknownError"))
        if kind == "exception":
            code = message.header(":exception-type") or "UnknownException"
            name = _sdk_exception_name(code)
            if name in ERROR_PREFIXES:
                text = _json_payload(message, code).get("message") or ""
                self._diagnose(name)
                raise StreamFailure(format_error(str(text), name))
            # An unmodeled exception: the SDK throws the payload text, named by the event type.
            if code.endswith("Exception"):
                self._diagnose(code)
            raise StreamFailure(format_error(message.payload.decode("utf-8", errors="replace")))
        if kind != "event":
            return
        event_type = message.header(":event-type") or ""
        handler = {
            "messageStart": self._message_start,
            "contentBlockStart": self._block_start,
            "contentBlockDelta": self._block_delta,
            "contentBlockStop": self._block_stop,
            "messageStop": self._message_stop,
            "metadata": self._metadata,
        }.get(event_type)
        if handler is not None:
            handler(_json_payload(message, event_type))

    def _diagnose(self, error_code: str) -> None:
        """pi-ai ``appendBedrockFailureDiagnostic`` for a failure with a modeled error code."""
        diagnostic = {
            "type": "bedrock_response_failure",
            "timestamp": now_ms(),
            "details": {"errorCode": error_code},
        }
        self.output["diagnostics"] = [*self.output.get("diagnostics", []), diagnostic]

    # -- events ----------------------------------------------------------------------------
    def _ensure_started(self) -> None:
        """Nothing to announce until Bedrock's ``messageStart`` (see ``_message_start``)."""

    def _message_start(self, event: Mapping[str, Any]) -> None:
        if event.get("role") != "assistant":
            raise StreamFailure("Unexpected assistant message start but got user message start instead")
        self._started = True
        self._emit({"type": "start", "partial": self.output})

    def _block_start(self, event: Mapping[str, Any]) -> None:
        tool = (event.get("start") or {}).get("toolUse")
        if not isinstance(tool, Mapping):  # JavaScript truthiness: an empty object still opens
            return
        content = self.output["content"]
        content.append(
            {
                "type": "toolCall",
                "id": tool.get("toolUseId") or "",
                "name": tool.get("name") or "",
                "arguments": {},
            }
        )
        index = len(content) - 1
        self._open.setdefault(event.get("contentBlockIndex", 0), index)
        self._json[index] = StreamingJson()
        self.emit_block("toolcall_start", index)

    def _new_block(self, provider_index: int, block: dict[str, Any], start: str) -> int:
        content = self.output["content"]
        content.append(block)
        index = len(content) - 1
        self._open[provider_index] = index
        self.emit_block(start, index)
        return index

    def _block_delta(self, event: Mapping[str, Any]) -> None:
        provider_index = event.get("contentBlockIndex", 0)
        delta = event.get("delta") or {}
        index = self._open.get(provider_index)
        block = self.output["content"][index] if index is not None else None
        if "text" in delta:
            if index is None or block is None:
                block = {"type": "text", "text": ""}
                index = self._new_block(provider_index, block, "text_start")
            if block["type"] == "text":
                text = delta["text"] or ""
                block["text"] += text
                self.emit_delta("text_delta", index, text)
        elif isinstance(delta.get("toolUse"), Mapping) and block is not None and block["type"] == "toolCall":
            assert index is not None
            piece = delta["toolUse"].get("input") or ""
            block["arguments"] = self._json.setdefault(index, StreamingJson()).append(piece)
            self.emit_delta("toolcall_delta", index, piece)
        elif isinstance(delta.get("reasoningContent"), Mapping):
            self._reasoning_delta(provider_index, index, block, delta["reasoningContent"])

    def _reasoning_delta(
        self,
        provider_index: int,
        index: int | None,
        block: dict[str, Any] | None,
        reasoning: Mapping[str, Any],
    ) -> None:
        if index is None or block is None:
            block = {"type": "thinking", "thinking": "", "thinkingSignature": ""}
            index = self._new_block(provider_index, block, "thinking_start")
        if block["type"] != "thinking":
            return
        text = reasoning.get("text")
        if text:
            block["thinking"] += text
            self.emit_delta("thinking_delta", index, text)
        signature = reasoning.get("signature")
        # A signature and a redacted payload never mix in thinkingSignature.
        if signature and not block.get("redacted"):
            block["thinkingSignature"] = (block.get("thinkingSignature") or "") + signature
        redacted = reasoning.get("redactedContent")
        if redacted:
            try:
                raw = base64.b64decode(redacted, validate=True)
            except (ValueError, binascii.Error) as exc:
                raise StreamFailure(f"Bedrock redactedContent is not valid base64: {exc}") from exc
            if not raw:
                return
            if not block.get("redacted"):
                block["redacted"] = True
                block["thinkingSignature"] = ""
                block["thinking"] += REDACTED_THINKING_PLACEHOLDER
                self.emit_delta("thinking_delta", index, REDACTED_THINKING_PLACEHOLDER)
            self._redacted.setdefault(index, []).append(raw)

    def _flush_redacted(self, index: int) -> None:
        chunks = self._redacted.pop(index, None)
        if chunks is not None:
            self.output["content"][index]["thinkingSignature"] = base64.b64encode(b"".join(chunks)).decode()

    def _block_stop(self, event: Mapping[str, Any]) -> None:
        index = self._open.pop(event.get("contentBlockIndex", 0), None)
        if index is None:
            return
        if self.output["content"][index]["type"] == "thinking":
            self._flush_redacted(index)
        self.end_block(index, self._json, None)

    def _message_stop(self, event: Mapping[str, Any]) -> None:
        out = self.output
        reason = event.get("stopReason")
        if reason is not None:
            out["rawStopReason"] = reason
        stop, error = map_stop_reason(reason)
        out["stopReason"] = stop
        if error:
            out["errorMessage"] = error

    def _metadata(self, event: Mapping[str, Any]) -> None:
        # The last event of a Converse stream (after ``messageStop``): the end (design W1).
        self._stream_closed = True
        raw = event.get("usage")
        if not isinstance(raw, Mapping):
            return
        usage = self.output["usage"]
        usage["input"] = raw.get("inputTokens") or 0
        usage["output"] = raw.get("outputTokens") or 0
        usage["cacheRead"] = raw.get("cacheReadInputTokens") or 0
        usage["cacheWrite"] = raw.get("cacheWriteInputTokens") or 0
        details = raw.get("cacheDetails")
        if isinstance(details, list):
            usage["cacheWrite1h"] = sum(
                (d.get("inputTokens") or 0)
                for d in details
                if isinstance(d, Mapping) and d.get("ttl") == "1h"
            )
        else:
            usage.pop("cacheWrite1h", None)
        usage["totalTokens"] = raw.get("totalTokens") or usage["input"] + usage["output"]
        calculate_cost(self.model, usage)

    # -- ends ------------------------------------------------------------------------------
    def _finalize_blocks(self) -> None:
        """pi-ai strips streaming scratch state on every terminal path; here that is the
        redacted-reasoning buffers (tool input text lives outside the message)."""
        for index in list(self._redacted):
            self._flush_redacted(index)

    def on_end(self) -> None:
        self._finalize_blocks()

    def before_error(self) -> None:
        self._finalize_blocks()

    def missing_stop_message(self) -> str:
        return "Bedrock stream ended without a stop reason"
