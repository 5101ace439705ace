"""Incremental Server-Sent Events decoding: feed bytes as they arrive, get whole events.

Pure: no sockets, no clocks. Chunk boundaries may fall anywhere (inside a UTF-8 sequence,
between ``\\r`` and ``\\n``); the result is the same as decoding the whole body at once.
Field handling follows pi-ai's Anthropic decoder (the WHATWG rules restricted to what
providers send): ``event`` and ``data`` fields, ``:`` comments, a blank line dispatches,
and a final event without its blank line is still delivered when the body ends.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
#: One decoder class for every stream (the codec lookup is done once, not per request).
_UTF8 = codecs.getincrementaldecoder("utf-8")


def _split_lines(text: str) -> list[str]:
    """``text`` split at CRLF, CR or LF; providers send LF only, so the common case skips the regex."""
    return text.split("\n") if "\r" not in text else _LINE_BREAK.split(text)


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One dispatched event: its ``event:`` name (or None) and its ``data:`` lines joined by newlines."""

    event: str | None
    data: str


class SseDecoder:
    """Turns a byte stream into SseEvents; call ``feed`` per chunk and ``close`` at the end."""

    __slots__ = ("_data", "_decoder", "_event", "_pending", "bytes_in", "events_out", "unterminated")

    def __init__(self) -> None:
        self._decoder = _UTF8(errors="replace")
        #: The unfinished last line, in pieces: a long line (a whole tool call in one event)
        #: arrives over many chunks and is joined once, when its line break comes.
        self._pending: list[str] = []
        self._event: str | None = None
        self._data: list[str] = []
        self.bytes_in = 0
        self.events_out = 0
        #: Set by ``close``: the body ended inside an event (no blank line after it).
        self.unterminated = False

    def feed(self, chunk: bytes) -> list[SseEvent]:
        self.bytes_in += len(chunk)
        decoded = self._decoder.decode(chunk)
        if not decoded:
            return []
        pending = self._pending
        if "\n" not in decoded and "\r" not in decoded and not (pending and pending[-1].endswith("\r")):
            pending.append(decoded)  # still inside one line
            return []
        text = "".join(pending) + decoded
        # A trailing CR may be the first half of CRLF: keep it until the next chunk decides.
        hold_cr = text.endswith("\r")
        lines = _split_lines(text[:-1] if hold_cr else text)
        rest = lines.pop() + ("\r" if hold_cr else "")
        self._pending = [rest] if rest else []
        return self._lines(lines)

    def close(self) -> list[SseEvent]:
        """End of body: decode what is left and deliver a final unterminated event."""
        text = "".join(self._pending) + self._decoder.decode(b"", final=True)
        self._pending = []
        lines = _split_lines(text)
        last = lines.pop()  # never followed by a line break
        events = self._lines(lines)
        if last:
            self._lines([last])
        self.unterminated = self._event is not None or bool(self._data)
        trailing = self._flush()
        if trailing is not None:
            events.append(trailing)
        return events

    def _lines(self, lines: list[str]) -> list[SseEvent]:
        events: list[SseEvent] = []
        for line in lines:
            if not line:
                if self._event is not None or self._data:
                    events.append(self._dispatch())
                continue
            if line.startswith("data: "):  # the usual spelling, without the general split
                self._data.append(line[6:])
                continue
            if line[0] == ":":
                continue
            name, sep, value = line.partition(":")
            if sep and value[:1] == " ":
                value = value[1:]
            if name == "data":
                self._data.append(value)
            elif name == "event":
                self._event = value
        return events

    def _flush(self) -> SseEvent | None:
        if self._event is None and not self._data:
            return None
        return self._dispatch()

    def _dispatch(self) -> SseEvent:
        data = self._data
        event = SseEvent(self._event, data[0] if len(data) == 1 else "\n".join(data))
        self._event = None
        self._data = []
        self.events_out += 1
        return event
