"""The emulator answers bad requests with 4xx and keeps only its latest requests (design X25).

Before: ``Content-Length: abc`` raised in the handler (a traceback on the emulator's standard
error, the connection closed with no answer), a negative or huge length read until the client
gave up, a body of the wrong shape raised the same way, and every body sent stayed in
``emu.requests`` for the life of the process (the window's emulator runs for days).
Requests here are raw bytes on a real loopback socket.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

import orjson
import pytest

from desktop.emulator import Emulator

PATH = "/anthropic/v1/messages"
GOOD = orjson.dumps(
    {
        "model": "claude-opus-5-5",
        "stream": True,
        "max_tokens": 16,
        "messages": [{"role": "user", "content": "hi"}],
    }
)


@pytest.fixture
def emu(capsys: pytest.CaptureFixture[str]) -> Iterator[Emulator]:
    with Emulator() as emulator:
        yield emulator
    assert "Traceback" not in capsys.readouterr().err


def _exchange(emu: Emulator, head: str, body: bytes = b"") -> tuple[int, bytes]:
    """Send one request (head lines without the final blank line); (status, whole response)."""
    with socket.create_connection(("127.0.0.1", emu.port), timeout=60) as conn:
        conn.sendall(f"POST {PATH} HTTP/1.1\r\nHost: x\r\n{head}\r\n".encode() + body)
        received = b""
        while not _complete(received):
            chunk = conn.recv(65536)
            assert chunk, f"the emulator closed the connection without an answer: {received!r}"
            received += chunk
    return int(received.split(b" ", 2)[1]), received


def _complete(received: bytes) -> bool:
    head, separator, rest = received.partition(b"\r\n\r\n")
    if not separator:
        return False
    for line in head.lower().split(b"\r\n"):
        if line.startswith(b"content-length:"):
            return len(rest) >= int(line.split(b":")[1])
    return rest.endswith(b"0\r\n\r\n")  # chunked


@pytest.mark.parametrize(
    ("head", "status"),
    [
        ("Content-Length: abc\r\n", 400),
        ("Content-Length: -5\r\n", 400),
        ("", 411),
        ("Transfer-Encoding: chunked\r\n", 411),
        (f"Content-Length: {1 << 30}\r\n", 413),  # answered without waiting for a gigabyte
    ],
)
def test_a_bad_content_length_is_a_4xx_answer(emu: Emulator, head: str, status: int) -> None:
    code, response = _exchange(emu, head)
    assert code == status, response
    assert b'"type":"error"' in response  # the wire's own error body
    assert emu.requests == []


def test_a_body_of_the_wrong_shape_is_a_400(emu: Emulator) -> None:
    body = orjson.dumps({"model": "m", "stream": True, "messages": 5})
    code, response = _exchange(emu, f"Content-Length: {len(body)}\r\n", body)
    assert code == 400, response
    assert b"Request body is not a valid anthropic request" in response


def test_a_good_request_still_streams(emu: Emulator) -> None:
    code, response = _exchange(
        emu, f"Content-Length: {len(GOOD)}\r\nContent-Type: application/json\r\n", GOOD
    )
    assert code == 200, response
    assert len(emu.requests) == 1 and emu.requests[0].body == GOOD


def test_only_the_latest_requests_are_kept() -> None:
    with Emulator(history=3, history_bytes=10 * len(GOOD)) as emu:
        for n in range(8):
            body = GOOD.replace(b'"hi"', f'"hi {n}"'.encode())
            code, _ = _exchange(emu, f"Content-Length: {len(body)}\r\n", body)
            assert code == 200
        assert [r.seq for r in emu.requests] == [6, 7, 8]
    with Emulator(history=100, history_bytes=2 * len(GOOD) + 10) as emu:
        for _ in range(5):
            assert _exchange(emu, f"Content-Length: {len(GOOD)}\r\n", GOOD)[0] == 200
        assert len(emu.requests) == 2  # the byte budget, not the count, decides here
