"""AWS event-stream framing (``application/vnd.amazon.eventstream``), decoded incrementally.

Bedrock's ``converse-stream`` answers in binary frames rather than SSE. Each frame is::

    total length (u32) | headers length (u32) | prelude CRC32 (u32)
    headers (headers length bytes) | payload | message CRC32 (u32)

all big-endian; the prelude CRC covers the first 8 bytes and the message CRC every byte
before it. A header is ``name length (u8) | name | type (u8) | value``. A frame that fails a
CRC or has impossible lengths is not something to skip over: the stream is corrupt from
there on, so the decoder raises and the parser ends the message with an error. The
encoder exists for the emulator and tests; it writes only the header types Bedrock uses
plus the rest of the specification's scalars so round trips cover them all.
"""

from __future__ import annotations

import struct
import uuid
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

PRELUDE_LENGTH = 12
CRC_LENGTH = 4
#: The smallest frame: a prelude and a message CRC, no headers, no payload.
MIN_FRAME_LENGTH = PRELUDE_LENGTH + CRC_LENGTH
#: AWS caps a frame at 16 MiB (headers at 128 KiB); larger lengths mean a corrupt prelude.
MAX_FRAME_LENGTH = 16 * 1024 * 1024
MAX_HEADERS_LENGTH = 128 * 1024

HeaderValue = bool | int | bytes | str | uuid.UUID

# Header value type codes (the specification's numbering).
_TRUE, _FALSE, _BYTE, _SHORT, _INT, _LONG, _BYTES, _STRING, _TIMESTAMP, _UUID = range(10)
_FIXED = {_BYTE: ">b", _SHORT: ">h", _INT: ">i", _LONG: ">q", _TIMESTAMP: ">q"}


class EventStreamError(ValueError):
    """The byte stream is not valid event-stream framing; the text says where and why."""


@dataclass(frozen=True)
class Timestamp:
    """A header of type timestamp: milliseconds since the epoch (kept apart from plain longs)."""

    millis: int


@dataclass(frozen=True)
class EventMessage:
    headers: dict[str, HeaderValue | Timestamp]
    payload: bytes

    def header(self, name: str) -> str | None:
        value = self.headers.get(name)
        return value if isinstance(value, str) else None


def _crc(data: bytes | memoryview) -> int:
    return zlib.crc32(data) & 0xFFFFFFFF


def _parse_headers(raw: bytes, frame_offset: int) -> dict[str, HeaderValue | Timestamp]:
    headers: dict[str, HeaderValue | Timestamp] = {}
    pos, end = 0, len(raw)

    def take(count: int, what: str) -> bytes:
        nonlocal pos
        if pos + count > end:
            raise EventStreamError(
                f"event-stream frame at byte {frame_offset}: header {what} runs past the headers section"
            )
        piece = raw[pos : pos + count]
        pos += count
        return piece

    while pos < end:
        name_length = take(1, "name length")[0]
        if name_length == 0:
            raise EventStreamError(f"event-stream frame at byte {frame_offset}: a header has an empty name")
        name = take(name_length, "name").decode("utf-8", errors="replace")
        kind = take(1, f"{name!r} type")[0]
        value: HeaderValue | Timestamp
        if kind == _TRUE:
            value = True
        elif kind == _FALSE:
            value = False
        elif kind in _FIXED:
            fmt = _FIXED[kind]
            number = struct.unpack(fmt, take(struct.calcsize(fmt), f"{name!r} value"))[0]
            value = Timestamp(number) if kind == _TIMESTAMP else int(number)
        elif kind in (_BYTES, _STRING):
            (length,) = struct.unpack(">H", take(2, f"{name!r} length"))
            data = take(length, f"{name!r} value")
            value = data if kind == _BYTES else data.decode("utf-8", errors="replace")
        elif kind == _UUID:
            value = uuid.UUID(bytes=take(16, f"{name!r} value"))
        else:
            raise EventStreamError(
                f"event-stream frame at byte {frame_offset}: header {name!r} has unknown type {kind}"
            )
        headers[name] = value
    return headers


class EventStreamDecoder:
    """Feed body chunks, get complete messages; ``close()`` fails on a frame cut short."""

    __slots__ = ("_buffer", "_offset")

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._offset = 0  # stream offset of _buffer[0], for error messages

    def feed(self, chunk: bytes) -> Iterator[EventMessage]:
        self._buffer += chunk
        while len(self._buffer) >= PRELUDE_LENGTH:
            prelude = bytes(self._buffer[:PRELUDE_LENGTH])
            total, headers_length, prelude_crc = struct.unpack(">III", prelude)
            if _crc(prelude[:8]) != prelude_crc:
                raise EventStreamError(
                    f"event-stream frame at byte {self._offset}: prelude CRC32 mismatch "
                    f"(expected {prelude_crc:#010x}, computed {_crc(prelude[:8]):#010x}); the stream is corrupt"
                )
            if not MIN_FRAME_LENGTH <= total <= MAX_FRAME_LENGTH:
                raise EventStreamError(
                    f"event-stream frame at byte {self._offset}: impossible total length {total} "
                    f"(must be {MIN_FRAME_LENGTH}..{MAX_FRAME_LENGTH})"
                )
            if headers_length > min(MAX_HEADERS_LENGTH, total - MIN_FRAME_LENGTH):
                raise EventStreamError(
                    f"event-stream frame at byte {self._offset}: headers length {headers_length} "
                    f"does not fit a frame of {total} bytes"
                )
            if len(self._buffer) < total:
                return
            frame = memoryview(self._buffer)[:total]
            (message_crc,) = struct.unpack(">I", frame[total - CRC_LENGTH :])
            computed = _crc(frame[: total - CRC_LENGTH])
            if computed != message_crc:
                frame.release()
                raise EventStreamError(
                    f"event-stream frame at byte {self._offset}: message CRC32 mismatch "
                    f"(expected {message_crc:#010x}, computed {computed:#010x}); the stream is corrupt"
                )
            headers_end = PRELUDE_LENGTH + headers_length
            raw_headers = bytes(frame[PRELUDE_LENGTH:headers_end])
            payload = bytes(frame[headers_end : total - CRC_LENGTH])
            frame.release()
            offset = self._offset
            del self._buffer[:total]
            self._offset += total
            yield EventMessage(_parse_headers(raw_headers, offset), payload)

    def close(self) -> None:
        """The body ended: any bytes left over are a frame cut short."""
        if self._buffer:
            have = len(self._buffer)
            expected = f" of {struct.unpack('>I', bytes(self._buffer[:4]))[0]}" if have >= 4 else ""
            raise EventStreamError(
                f"event-stream ended inside a frame at byte {self._offset} "
                f"({have}{expected} bytes received); the response was truncated"
            )


# --- encoding (emulator, tests) ------------------------------------------------------------


def _encode_header(name: str, value: HeaderValue | Timestamp) -> bytes:
    raw_name = name.encode("utf-8")
    if not 0 < len(raw_name) < 256:
        raise ValueError(f"event-stream header names are 1..255 bytes, got {len(raw_name)} for {name!r}")
    head = bytes([len(raw_name)]) + raw_name
    if isinstance(value, bool):
        return head + bytes([_TRUE if value else _FALSE])
    if isinstance(value, Timestamp):
        return head + bytes([_TIMESTAMP]) + struct.pack(">q", value.millis)
    if isinstance(value, int):
        for kind in (_BYTE, _SHORT, _INT, _LONG):
            fmt = _FIXED[kind]
            bits = struct.calcsize(fmt) * 8
            if -(1 << (bits - 1)) <= value < (1 << (bits - 1)):
                return head + bytes([kind]) + struct.pack(fmt, value)
        raise ValueError(f"event-stream header {name!r}: integer {value} does not fit 64 bits")
    if isinstance(value, uuid.UUID):
        return head + bytes([_UUID]) + value.bytes
    data = value.encode("utf-8") if isinstance(value, str) else value
    if len(data) > 0xFFFF:
        raise ValueError(f"event-stream header {name!r}: value of {len(data)} bytes exceeds 65535")
    kind = _STRING if isinstance(value, str) else _BYTES
    return head + bytes([kind]) + struct.pack(">H", len(data)) + data


def encode_message(headers: Mapping[str, HeaderValue | Timestamp], payload: bytes) -> bytes:
    """One frame with ``headers`` (in order) and ``payload``, both CRCs filled in."""
    raw_headers = b"".join(_encode_header(name, value) for name, value in headers.items())
    total = PRELUDE_LENGTH + len(raw_headers) + len(payload) + CRC_LENGTH
    prelude = struct.pack(">II", total, len(raw_headers))
    prelude += struct.pack(">I", _crc(prelude))
    body = prelude + raw_headers + payload
    return body + struct.pack(">I", _crc(body))


def event_frame(event_type: str, payload: bytes) -> bytes:
    """A Bedrock-style ``event`` frame carrying a JSON payload."""
    return encode_message(
        {":event-type": event_type, ":content-type": "application/json", ":message-type": "event"}, payload
    )
