"""One pooled HTTP client per session, with cancellation of the request in flight (design D2).

A fresh client per request pays a TCP (and TLS) handshake every time and a new cancel watcher
thread; a session sends its requests one after another to one endpoint, so it keeps one
``httpx.Client`` with keep-alive connections instead.

Cancellation still works at any moment, also while waiting for the first byte on a reused
connection: every socket the client opens is remembered (httpcore's connect trace), and one
watcher thread per session, started on demand and gone after a quiet spell, shuts those
sockets down when the request's ``cancel`` is set. That wakes the blocked read at once; the
reading thread then closes the response, and the pool drops the connection. A session sends
one request at a time, so the sockets of its pool are the request's.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator, Mapping
from typing import Any

import httpx

#: Send small writes at once (see ``SessionHttp.create``).
NO_DELAY = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
#: How often the watcher looks at the cancel flag of the request in flight.
CANCEL_POLL_SECONDS = 0.02
#: A watcher with no request for this long ends; the next request starts another.
IDLE_SECONDS = 10.0


class SessionHttp:
    """The session's pooled client and the watcher that cancels its request in flight."""

    def __init__(self, client: httpx.Client) -> None:
        self.client = client
        self._sockets: list[socket.socket] = []
        self._lock = threading.Condition()
        self._cancel: threading.Event | None = None
        self._watcher: threading.Thread | None = None
        self._closed = False

    @classmethod
    def create(cls, *, verify: Any = True, keepalive: int = 4) -> SessionHttp:
        """A client with keep-alive and ``TCP_NODELAY``: a request is written as headers then
        body, and without it the body waits for the peer's delayed acknowledgement of the
        headers (about 40 ms on Linux) whenever a connection is reused."""
        limits = httpx.Limits(max_keepalive_connections=keepalive, keepalive_expiry=60.0)
        transport = httpx.HTTPTransport(verify=verify, limits=limits, socket_options=NO_DELAY)
        return cls(httpx.Client(transport=transport, follow_redirects=False))

    def trace(self, name: str, info: Mapping[str, Any]) -> None:
        """httpcore trace hook: remember each socket as soon as its connection exists."""
        if name.endswith((".connect_tcp.complete", ".start_tls.complete")):
            stream = info.get("return_value")
            sock = stream.get_extra_info("socket") if stream is not None else None
            if isinstance(sock, socket.socket):
                with self._lock:
                    self._sockets = [s for s in self._sockets if s.fileno() != -1]
                    self._sockets.append(sock)
                    cancel = self._cancel
                if cancel is not None and cancel.is_set():
                    self._shutdown()

    @contextlib.contextmanager
    def watching(self, cancel: threading.Event | None) -> Iterator[None]:
        """While the block runs, setting ``cancel`` shuts the pool's sockets down."""
        if cancel is None:
            yield
            return
        with self._lock:
            self._cancel = cancel
            if self._watcher is None or not self._watcher.is_alive():
                self._watcher = threading.Thread(target=self._watch, name="pi-cancel-watch", daemon=True)
                self._watcher.start()
            self._lock.notify_all()
        try:
            yield
        finally:
            with self._lock:
                self._cancel = None

    def _watch(self) -> None:
        while True:
            with self._lock:
                if self._cancel is None and not self._closed:
                    self._lock.wait(IDLE_SECONDS)
                cancel = self._cancel
                if cancel is None or self._closed:
                    self._watcher = None
                    return
            if cancel.wait(CANCEL_POLL_SECONDS):
                self._shutdown()
                with self._lock:
                    while self._cancel is cancel and not self._closed:
                        self._lock.wait(CANCEL_POLL_SECONDS)

    def _shutdown(self) -> None:
        with self._lock:
            sockets = list(self._sockets)
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._lock.notify_all()
        self.client.close()
