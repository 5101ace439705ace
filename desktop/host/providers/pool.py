"""One pooled HTTP client per session, with cancellation of the request in flight (design D2).

A fresh client per request pays a TCP (and TLS) handshake every time; a session sends its
requests one after another to one endpoint, so it keeps one ``httpx.Client`` with keep-alive
connections instead.

Cancellation works at any moment, also while waiting for the first byte on a reused
connection: every socket the client opens is remembered (httpcore's connect trace), and one
watcher thread per client shuts those sockets down when the ``cancel`` of the request in
flight is set. That wakes the blocked read at once; the reading thread then closes the
response, and the pool drops the connection. A session sends one request at a time, so the
sockets of its pool are the request's.

Starting a request costs the watcher nothing: the request only publishes its ``cancel``
(an attribute write), and the watcher, which looks every ``CANCEL_POLL_SECONDS`` while the
client is in use, picks it up. No thread starts and none is woken per request; the watcher
starts with the client's first request and ends after ``IDLE_SECONDS`` without one.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any

import httpx

#: Send small writes at once (see ``SessionHttp.create``).
NO_DELAY = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
#: How often the watcher looks at the cancel flag of the request in flight.
CANCEL_POLL_SECONDS = 0.02
#: A watcher with no request for this long ends; the next request starts another.
IDLE_SECONDS = 10.0
_IDLE_POLLS = round(IDLE_SECONDS / CANCEL_POLL_SECONDS)
#: The names of the connect steps after which httpcore's stream has its socket.
_CONNECTED = (".connect_tcp.complete", ".start_tls.complete")


class SessionHttp:
    """A client and the one watcher that cancels its request in flight."""

    def __init__(self, client: httpx.Client, *, owns_client: bool = True) -> None:
        self.client = client
        self._owns_client = owns_client
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        #: The ``cancel`` of the request in flight, read by the watcher on each poll.
        self._cancel: threading.Event | None = None
        #: Counts requests, so the watcher can tell a busy client from an idle one.
        self._requests = 0
        self._watcher: threading.Thread | None = None
        self._closed = False

    @classmethod
    def create(cls, *, verify: Any = True, keepalive: int = 4) -> SessionHttp:
        """A client with keep-alive and ``TCP_NODELAY``: a request is written as headers then
        body, and without it the body waits for the peer's delayed acknowledgement of the
        headers (about 40 ms on Linux) whenever a connection is reused. ``keepalive=0``
        keeps no connection (a client for one request)."""
        limits = httpx.Limits(max_keepalive_connections=keepalive, keepalive_expiry=60.0)
        transport = httpx.HTTPTransport(verify=verify, limits=limits, socket_options=NO_DELAY)
        return cls(httpx.Client(transport=transport, follow_redirects=False))

    def trace(self, name: str, info: Mapping[str, Any]) -> None:
        """httpcore trace hook: remember each socket as soon as its connection exists."""
        if name.endswith(_CONNECTED):
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
        """While the block runs, setting ``cancel`` shuts the client's sockets down."""
        if cancel is None:
            yield
            return
        with self._lock:
            self._cancel = cancel
            self._requests += 1
            if self._watcher is None:
                self._watcher = threading.Thread(target=self._watch, name="pi-cancel-watch", daemon=True)
                self._watcher.start()
        try:
            yield
        finally:
            self._cancel = None

    def _watch(self) -> None:
        requests, quiet = -1, 0
        while True:
            time.sleep(CANCEL_POLL_SECONDS)  # a plain sleep: the cheapest wait there is
            cancel = self._cancel
            if self._closed:
                break
            if cancel is not None and cancel.is_set():
                self._shutdown()
                while self._cancel is cancel and not self._closed:
                    time.sleep(CANCEL_POLL_SECONDS)  # once per request: the reader is closing the response
                continue
            if cancel is not None or self._requests != requests:
                requests, quiet = self._requests, 0
                continue
            quiet += 1
            if quiet >= _IDLE_POLLS:
                with self._lock:
                    if self._requests == requests:  # no request started meanwhile
                        self._watcher = None
                        return
        with self._lock:
            self._watcher = None

    def _shutdown(self) -> None:
        with self._lock:
            sockets = list(self._sockets)
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        """Close the client's connections (the client too, if owned); the watcher ends at
        its next look."""
        self._closed = True
        if self._owns_client:
            self.client.close()
