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
from typing import NamedTuple

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
#: One decoder class for every stream (the codec lookup is done once, not per request).
_UTF8 = codecs.getincrementaldecoder("utf-8")


def _split_lines(text: str) -> list[str]:
    """``text`` split at CRLF, CR or LF; providers send LF only, so the common case skips the regex."""
    return text.split("\n") if "\r" not in text else _LINE_BREAK.split(text)


class SseEvent(NamedTuple):
    """One dispatched event: its ``event:`` name (or None) and its ``data:`` lines joined by newlines."""

    event: str | None
    data: str


#: The usual event of an LF-only stream: an ``event: `` line then one ``data: `` line, or the
#: ``data: `` line alone, then the blank line; its groups are the SseEvent's two fields.
_USUAL_EVENT = re.compile(r"(?:event: (.*)\n)?data: (.*)\n\n").match
#: The same event as the whole of a chunk.
_WHOLE_EVENT = re.compile(r"(?:event: (.*)\n)?data: (.*)\n\n").fullmatch
#: Makes an SseEvent without the named tuple's Python-level ``__new__`` (a third of the cost
#: of reading a one-line event).
_new = tuple.__new__


class SseDecoder:
    """Turns a byte stream into SseEvents; call ``feed`` per chunk and ``close`` at the end.

    Providers send LF-only streams whose events are an ``event:`` line and one ``data:``
    line, or a single ``data:`` line. For those the decoder keeps the text since the last
    blank line as it came and, once a chunk completes events, reads each such event with
    one regular-expression match; anything else in an event (comments, several data
    lines, fields without the space) goes through the general field rules. The first CR
    seen switches the stream to the general line-by-line decoding for good.
    """

    __slots__ = ("_crlf", "_data", "_decoder", "_event", "_held", "_pending", "unterminated")

    def __init__(self) -> None:
        #: Made on the first chunk that ends inside a multi-byte character.
        self._decoder: codecs.IncrementalDecoder | None = None
        #: The incremental decoder holds the start of a character.
        self._held = False
        #: LF-only streams: the text since the last blank line. Otherwise: the unfinished
        #: last line. In pieces either way: a long line (a whole tool call in one event)
        #: arrives over many chunks and is joined once, when its end comes.
        self._pending: list[str] = []
        self._crlf = False
        self._event: str | None = None
        self._data: list[str] = []
        #: Set by ``close``: the body ended inside an event (no blank line after it).
        self.unterminated = False

    def _decode(self, chunk: bytes) -> str:
        """UTF-8 text of a chunk that ends inside a character or follows one that did (a chunk
        ending in ASCII after a whole character decodes the same on its own, in ``feed``)."""
        if self._decoder is None:
            self._decoder = _UTF8(errors="replace")
        text = self._decoder.decode(chunk)
        self._held = bool(self._decoder.getstate()[0])
        return text

    def feed(self, chunk: bytes) -> list[SseEvent]:
        if not self._held and chunk and chunk[-1] < 0x80:
            decoded = chunk.decode("utf-8", "replace")
        elif not chunk:
            return []
        else:
            decoded = self._decode(chunk)
            if not decoded:
                return []
        if self._crlf or "\r" in decoded:
            self._crlf = True
            return self._feed_lines(decoded)
        pending = self._pending
        if not pending:
            whole = _WHOLE_EVENT(decoded)
            if whole is not None:  # the chunk is one whole event, as providers flush them
                return [_new(SseEvent, whole.groups())]
        if pending:
            if "\n\n" not in decoded and not (decoded[0] == "\n" and pending[-1][-1] == "\n"):
                pending.append(decoded)  # no event ends in this chunk
                return []
            text = "".join(pending) + decoded
        else:
            text = decoded
        match = _USUAL_EVENT(text)
        events: list[SseEvent] = []
        start = 0
        while True:
            if match is not None:  # one step: both fields, the end of the event
                events.append(_new(SseEvent, match.groups()))
                start = match.end()
                match = _USUAL_EVENT(text, start)
                continue
            end = text.find("\n\n", start)
            if end < 0:
                break
            if end > start:  # any other shape: the general field rules
                events += self._lines(text[start:end].split("\n"))
                last = self._flush()
                if last is not None:
                    events.append(last)
            start = end + 2
            match = _USUAL_EVENT(text, start)
        rest = text[start:] if start else text
        self._pending = [rest] if rest else []
        return events

    def _feed_lines(self, decoded: str) -> list[SseEvent]:
        """The general decoding: CRLF, CR or LF line breaks, field by field."""
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
        if not self._pending and self._decoder is None and self._event is None and not self._data:
            return []  # the body ended with its last event: the usual end
        tail = self._decoder.decode(b"", final=True) if self._decoder is not None else ""
        text = "".join(self._pending) + tail
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
        return event
