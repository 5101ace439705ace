"""The shared shape of every per-API stream normalizer.

A normalizer owns one response: the caller calls ``start()`` once the HTTP response is
accepted, ``feed(chunk)`` with each body chunk, and ``finish()`` when the body ends (or
``abort()``/``fail()`` when it cannot continue). Each call returns the neutral pi-ai
events it produced (``AssistantMessageEvent`` JSON shapes); after a terminal ``done`` or
``error`` event later calls return nothing.

As in pi-ai, ``partial`` in every event is the one live message being built, not a
snapshot; the terminal event carries that same message. A body that ends before the
API's terminal event never becomes ``done``: it is an ``error`` stop with a message
naming what was missing. The API's end event itself ends the message inside ``feed``
(``terminal`` is set there), so the caller stops reading even when the server keeps the
connection open (design W1).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, ClassVar

from desktop.pi.cost import zero_cost
from desktop.pi.streaming.partial_json import StreamingJson, parse_streaming_json
from desktop.pi.streaming.sse import _WHOLE_EVENT, SseDecoder, SseEvent, _new

#: A neutral pi-ai AssistantMessage in its JSON shape.
AssistantMessage = dict[str, Any]
#: A neutral pi-ai AssistantMessageEvent in its JSON shape.
StreamEvent = dict[str, Any]

ABORTED_MESSAGE = "Request was aborted"


class StreamFailure(Exception):
    """The provider stream cannot be turned into a complete message; the text is user-facing."""


_EMPTY_USAGE: dict[str, Any] = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0}


def empty_usage() -> dict[str, Any]:
    """Fresh zero usage with its own zero cost (copies of made dicts: cheaper than building them)."""
    usage = _EMPTY_USAGE.copy()
    usage["cost"] = zero_cost()
    return usage


def now_ms() -> int:
    return int(time.time() * 1000)


def new_output(
    model: Mapping[str, Any], *, api: str | None = None, timestamp: int | None = None
) -> AssistantMessage:
    """The empty assistant message every adapter starts from (stopReason ``pending``)."""
    return {
        "role": "assistant",
        "content": [],
        "api": api or model["api"],
        "provider": model["provider"],
        "model": model["id"],
        "usage": empty_usage(),
        "stopReason": "pending",
        "timestamp": now_ms() if timestamp is None else timestamp,
    }


class StreamParser:
    """Base class: SSE decoding, the start/terminal protocol and error conversion."""

    #: The pi-ai API name this parser reads (``anthropic-messages``, ...).
    api: ClassVar[str] = ""
    #: Fixed ``api`` value written into the message (Google's adapter hard-codes its own).
    output_api: ClassVar[str | None] = None
    #: When set, a body ending inside an event fails with this text instead of delivering it.
    unterminated_error: ClassVar[str | None] = None

    #: The body is SSE, read by this class's ``ingest`` (binary framings override it).
    _sse_framing: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._sse_framing = cls.ingest is StreamParser.ingest

    def __init__(self, model: Mapping[str, Any], *, timestamp: int | None = None) -> None:
        self.model = model
        self.output: AssistantMessage = new_output(model, api=self.output_api, timestamp=timestamp)
        self._sse = SseDecoder()
        self._events: list[StreamEvent] = []
        self._started = False
        #: A terminal event (``done`` or ``error``) was emitted; read after every chunk, so a
        #: plain attribute rather than a property.
        self.terminal = False
        #: Set by a subclass when it reads the API's end event (``message_stop``, a terminal
        #: response event, ``[DONE]``, Bedrock's ``metadata``): ``feed`` then ends the
        #: message at once (``terminal``), so the caller stops reading although the server
        #: may keep the connection open; anything after the end event is ignored (design W1).
        self._stream_closed = False

    # -- protocol ---------------------------------------------------------------------
    def start(self) -> list[StreamEvent]:
        self._ensure_started()
        return self._drain()

    def _ensure_started(self) -> None:
        if not self._started and not self.terminal:
            self._started = True
            self._emit({"type": "start", "partial": self.output})

    def feed(self, chunk: bytes) -> list[StreamEvent]:
        if self.terminal:
            return []
        if not self._started:
            self._ensure_started()
        try:
            if self._sse_framing:  # ``ingest`` inlined: this runs for every chunk
                decoder = self._sse
                # The decoder's own first step inlined for the usual chunk (one whole event,
                # ASCII-ended, LF only, nothing held): one call fewer per event.
                if not decoder._pending and not decoder._held and not decoder._crlf and chunk[-1:] < b"\x80":
                    text = chunk.decode("utf-8", "replace")
                    whole = _WHOLE_EVENT(text) if "\r" not in text else None
                    if whole is not None:
                        if not self._stream_closed:
                            self.on_sse(_new(SseEvent, whole.groups()))
                            if self._stream_closed:
                                self._end()
                        events, self._events = self._events, []
                        return events
                for sse in decoder.feed(chunk):
                    if self._stream_closed:
                        break
                    self.on_sse(sse)
            else:
                self.ingest(chunk)
        except (StreamFailure, ValueError) as exc:
            self._error(str(exc), aborted=False)
        if self._stream_closed and not self.terminal:
            self._end()
        events, self._events = self._events, []
        return events

    def finish(self) -> list[StreamEvent]:
        """The body ended: flush, then ``done`` if the provider finished properly, else ``error``."""
        if self.terminal:
            return []
        self._ensure_started()
        self._end()
        return self._drain()

    def _end(self) -> None:
        """The stream is over, by its end event or by the body's end: ``done`` or ``error``.
        Bytes after the end event are never read (``ingest_end`` would judge them)."""
        try:
            if not self._stream_closed:
                self.ingest_end()
            self.on_end()
            self.validate()
        except (StreamFailure, ValueError) as exc:
            self._error(str(exc), aborted=False)
            return
        self.terminal = True
        self._emit({"type": "done", "reason": self.output["stopReason"], "message": self.output})

    def abort(self) -> list[StreamEvent]:
        """The caller cancelled: the message so far ends as ``aborted``, never as complete."""
        if not self.terminal:
            self._error(ABORTED_MESSAGE, aborted=True)
        return self._drain()

    def fail(self, message: str) -> list[StreamEvent]:
        """The transport failed (connection reset, read timeout): an ``error`` stop."""
        if not self.terminal:
            self._error(message, aborted=False)
        return self._drain()

    def result(self) -> AssistantMessage:
        """The final message; only meaningful once ``terminal`` is true."""
        return self.output

    # -- framing (SSE here; binary framings override both) ---------------------------------
    def ingest(self, chunk: bytes) -> None:
        """Decode ``chunk`` into events and handle each; raise StreamFailure on bad framing."""
        for sse in self._sse.feed(chunk):
            if self._stream_closed:
                break
            self.on_sse(sse)

    def ingest_end(self) -> None:
        """The body ended: handle what the decoder still holds, or fail on a cut-off event."""
        trailing = self._sse.close()
        if self.unterminated_error and self._sse.unterminated and not self._stream_closed:
            raise StreamFailure(self.unterminated_error)
        for sse in trailing:
            if self._stream_closed:
                break
            self.on_sse(sse)

    # -- subclass hooks -------------------------------------------------------------------
    def on_sse(self, sse: SseEvent) -> None:
        raise NotImplementedError

    def on_end(self) -> None:
        """Close open blocks at the end of the body (APIs without explicit block ends)."""

    def validate(self) -> None:
        """Raise StreamFailure unless the stream reached a usable stop reason."""
        stop = self.output["stopReason"]
        if stop == "pending":
            raise StreamFailure(self.missing_stop_message())
        if stop in ("aborted", "error"):
            raise StreamFailure(self.output.get("errorMessage") or "An unknown error occurred")

    def missing_stop_message(self) -> str:
        return "Stream ended without a stop reason"

    # -- helpers --------------------------------------------------------------------------
    def _emit(self, event: StreamEvent) -> None:
        self._events.append(event)

    def _drain(self) -> list[StreamEvent]:
        events, self._events = self._events, []
        return events

    def _error(self, message: str, *, aborted: bool) -> None:
        self._started = True
        self.before_error()
        self.terminal = True
        reason = "aborted" if aborted else "error"
        self.output["stopReason"] = reason
        self.output["errorMessage"] = message
        self._emit({"type": "error", "reason": reason, "error": self.output})

    def before_error(self) -> None:
        """Hook: settle in-flight state (e.g. final tool-call arguments) before an error stop."""

    #: The text or thinking block still growing, for APIs whose blocks have no explicit end event.
    _current: int | None = None

    def end_open_block(self) -> None:
        """Close the growing text/thinking block (its ``*_end`` event) before another starts."""
        if self._current is None:
            return
        block = self.output["content"][self._current]
        kind = block["type"]
        self.emit_block(f"{kind}_end", self._current, content=block[kind])  # type: ignore[literal-required]
        self._current = None

    def end_block(self, index: int, partials: dict[int, StreamingJson], empty: str | None = "") -> None:
        """Content block ``index``'s ``*_end`` event; a tool call's arguments are first parsed
        from all of its streamed JSON (taken out of ``partials``; ``empty`` when none came)."""
        block = self.output["content"][index]
        kind = block["type"]
        if kind == "toolCall":
            partial = partials.pop(index, None)
            block["arguments"] = parse_streaming_json(partial.text if partial else empty)
            self.emit_block("toolcall_end", index, toolCall=block)
        elif kind in ("text", "thinking"):
            self.emit_block(f"{kind}_end", index, content=block[kind])  # type: ignore[literal-required]

    def emit_block(self, kind: str, index: int, **fields: Any) -> None:
        self._events.append({"type": kind, "contentIndex": index, **fields, "partial": self.output})

    def emit_delta(self, kind: str, index: int, delta: str) -> None:
        """``emit_block`` for the most frequent event, without the keyword packing."""
        self._events.append({"type": kind, "contentIndex": index, "delta": delta, "partial": self.output})
