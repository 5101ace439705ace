"""Small real servers on loopback sockets for the wire tests: a scripted HTTP/1.1 server
(optionally TLS) whose replies can end the body, hold the connection open forever, or drop
it mid-body, and a CONNECT proxy that tunnels to it.

Nothing is mocked: the client under test opens real TCP (and TLS) connections.
"""

from __future__ import annotations

import contextlib
import queue
import socket
import ssl
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, Self

import orjson

#: What the server does once the reply's chunks are written.
After = Literal["end", "hold", "drop"]


@dataclass
class Reply:
    """One scripted response. ``after``: ``end`` sends the terminal chunk (the body ends,
    the connection stays open for the next request); ``hold`` sends nothing more and never
    closes; ``drop`` closes the connection without ending the body."""

    status: int = 200
    chunks: list[bytes] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)
    after: After = "end"
    content_type: str = "text/event-stream"


@dataclass
class Seen:
    """A request as the server read it."""

    method: str
    target: str
    headers: dict[str, str]
    body: bytes


_REASONS = {200: "OK", 429: "Too Many Requests", 500: "Internal Server Error", 503: "Service Unavailable"}


def _read_head(conn: socket.socket, buffer: bytearray) -> bytes | None:
    while b"\r\n\r\n" not in buffer:
        data = conn.recv(65536)
        if not data:
            return None
        buffer += data
    head, _, rest = bytes(buffer).partition(b"\r\n\r\n")
    buffer[:] = rest
    return head


def _read_exact(conn: socket.socket, buffer: bytearray, size: int) -> bytes:
    while len(buffer) < size:
        data = conn.recv(65536)
        if not data:
            break
        buffer += data
    body = bytes(buffer[:size])
    del buffer[:size]
    return body


def _headers(lines: list[bytes]) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in lines:
        name, _, value = line.decode("latin-1").partition(":")
        out[name.strip().lower()] = value.strip()
    return out


class _Loopback:
    """A listener on a free loopback port, one thread a connection (``_handle``); leaving the
    ``with`` block closes the listener and every socket still open."""

    def __init__(self) -> None:
        self.connections = 0
        self._stop = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._open: list[socket.socket] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept
        with contextlib.suppress(OSError):
            self._listener.close()
        for conn in list(self._open):
            with contextlib.suppress(OSError):
                conn.close()
        self._thread.join(timeout=5)

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        raise NotImplementedError


class ScriptedServer(_Loopback):
    """Answers each request with the next ``Reply`` (or ``respond(seen)``); records what it saw."""

    def __init__(
        self,
        replies: list[Reply] | None = None,
        *,
        respond: Callable[[Seen], Reply] | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self._replies: queue.Queue[Reply] = queue.Queue()
        for reply in replies or ():
            self._replies.put(reply)
        self._respond = respond
        self._tls = tls
        self.seen: list[Seen] = []
        super().__init__()

    @property
    def base_url(self) -> str:
        return f"{'https' if self._tls else 'http'}://127.0.0.1:{self.port}"

    def _handle(self, raw: socket.socket) -> None:
        conn = raw
        try:
            if self._tls is not None:
                conn = self._tls.wrap_socket(raw, server_side=True)
            self._open.append(conn)
            buffer = bytearray()
            while not self._stop.is_set():
                head = _read_head(conn, buffer)
                if head is None:
                    return
                request_line, *lines = head.split(b"\r\n")
                method, target, _ = request_line.decode("latin-1").split(" ", 2)
                headers = _headers(lines)
                body = _read_exact(conn, buffer, int(headers.get("content-length", "0")))
                seen = Seen(method, target, headers, body)
                self.seen.append(seen)
                reply = self._respond(seen) if self._respond else self._replies.get_nowait()
                if not self._write(conn, reply):
                    return
        except (OSError, ssl.SSLError, queue.Empty):
            return
        finally:
            if conn in self._open:
                self._open.remove(conn)
            with contextlib.suppress(OSError):
                conn.close()

    def _write(self, conn: socket.socket, reply: Reply) -> bool:
        """Write ``reply``; False when the connection is over (dropped or held to the end)."""
        head = f"HTTP/1.1 {reply.status} {_REASONS.get(reply.status, 'Status')}\r\n"
        head += f"content-type: {reply.content_type}\r\ntransfer-encoding: chunked\r\n"
        for name, value in reply.headers.items():
            head += f"{name}: {value}\r\n"
        conn.sendall(head.encode("latin-1") + b"\r\n")
        for chunk in reply.chunks:
            conn.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
        if reply.after == "end":
            conn.sendall(b"0\r\n\r\n")
            return True
        if reply.after == "hold":
            self._stop.wait()  # never ends the body, never closes: until the test is over
            return False
        with contextlib.suppress(OSError):
            conn.shutdown(socket.SHUT_RDWR)
        return False


class ConnectProxy(_Loopback):
    """An HTTP proxy that only tunnels (``CONNECT host:port``) and records each target.
    ``upstream``: the loopback port every tunnel goes to, whatever host it names (so a
    request for a name no resolver knows can only arrive through the proxy); ``refuse``:
    answer every CONNECT with this status instead."""

    def __init__(self, upstream: int | None = None, refuse: int | None = None) -> None:
        self.upstream = upstream
        self.refuse = refuse
        self.targets: list[str] = []
        super().__init__()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _handle(self, client: socket.socket) -> None:
        self._open.append(client)
        buffer = bytearray()
        head = _read_head(client, buffer)
        if head is None:
            client.close()
            return
        method, target, _ = head.split(b"\r\n")[0].decode("latin-1").split(" ", 2)
        self.targets.append(f"{method} {target}")
        if method != "CONNECT":
            client.sendall(b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\n\r\n")
            client.close()
            return
        if self.refuse is not None:
            client.sendall(f"HTTP/1.1 {self.refuse} Refused\r\ncontent-length: 0\r\n\r\n".encode())
            client.close()
            return
        host, _, port = target.rpartition(":")
        if self.upstream is not None:
            host, port = "127.0.0.1", str(self.upstream)
        upstream = socket.create_connection((host, int(port)))
        self._open.append(upstream)
        client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        if buffer:
            upstream.sendall(bytes(buffer))
        threading.Thread(target=_pipe, args=(upstream, client), daemon=True).start()
        _pipe(client, upstream)


def _pipe(source: socket.socket, target: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := source.recv(65536):
            target.sendall(data)
    with contextlib.suppress(OSError):
        target.shutdown(socket.SHUT_WR)


def sse(*events: tuple[str | None, str]) -> list[bytes]:
    """SSE chunks, one event each: ``(name or None, data)``."""
    out = []
    for name, data in events:
        text = (f"event: {name}\n" if name else "") + f"data: {data}\n\n"
        out.append(text.encode())
    return out


def event_json(value: Any) -> str:
    return orjson.dumps(value).decode()


#: A complete Anthropic Messages answer: "Hello", 5 tokens in, 2 out.
ANTHROPIC = sse(
    (
        "message_start",
        event_json(
            {
                "type": "message_start",
                "message": {"id": "msg_1", "model": "m-1", "usage": {"input_tokens": 5, "output_tokens": 1}},
            }
        ),
    ),
    (
        "content_block_start",
        event_json(
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
        ),
    ),
    (
        "content_block_delta",
        event_json(
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hello"}}
        ),
    ),
    ("content_block_stop", event_json({"type": "content_block_stop", "index": 0})),
    (
        "message_delta",
        event_json(
            {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}}
        ),
    ),
    ("message_stop", event_json({"type": "message_stop"})),
)


@contextlib.contextmanager
def serving(*replies: Reply, tls: ssl.SSLContext | None = None) -> Iterator[ScriptedServer]:
    with ScriptedServer(list(replies), tls=tls) as server:
        yield server
