"""One pooled HTTP client per session, with cancellation of the request in flight (design D2).

A fresh client per request pays a TCP (and TLS) handshake every time; a session sends its
requests one after another to one endpoint, so it keeps one ``httpx.Client`` with keep-alive
connections instead.

Cancellation works at any moment, also while waiting for the first byte on a reused
connection: every socket the client opens is remembered as it connects (and again once TLS
wraps it) by the network backend of the session's connection pool, and one watcher thread per
client shuts those sockets down when the ``cancel`` of the request in flight is set. That wakes the blocked read at once; the reading thread then closes the
response, and the pool drops the connection. A session sends one request at a time, so the
sockets of its pool are the request's.

Starting a request costs the watcher nothing: the request only publishes its ``cancel``
(an attribute write), and the watcher, which looks every ``CANCEL_POLL_SECONDS`` while the
client is in use, picks it up. No thread starts and none is woken per request; the watcher
starts with the client's first request and ends after ``IDLE_SECONDS`` without one. Nor is
anything called per request to learn the sockets: the backend hears of a socket once, when it
connects. A client built elsewhere (``SessionHttp(client)``) has no such backend; its
requests carry httpcore's trace hook instead (``trace``), which httpcore calls about ten
times per request.

A request of a client ``create`` built goes straight to the client's transport (``open``):
what ``httpx.Client.send`` adds on top of it is for features a session does not use
(redirects are off, no auth or event hooks) and a cookie jar, which would send a provider's
cookies back with the next request where pi-ai's ``fetch`` keeps none. Skipping that layer
(URL and header merging, the cookie jar's reading of every response) is about a sixth of a
short streamed request's CPU time.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import httpcore
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
        #: A ``time.monotonic()`` after which the watcher shuts the sockets down as if
        #: cancelled (``expire_after``), or None.
        self._deadline: float | None = None
        #: httpx extensions for each request: the trace hook, unless the client's own pool
        #: reports its sockets (``create``).
        self.extensions: dict[str, Any] = {"trace": self.trace}
        #: The client's transport when ``create`` built both: ``open`` sends to it directly.
        self._transport: httpx.BaseTransport | None = None
        #: ``create``'s proxy choice, TLS context and keep-alive; the transports of the
        #: proxies in use by proxy URL, and of each origin seen (scheme://host:port).
        self._proxy_for: Callable[[str], str | None] | None = None
        self._ssl_context: ssl.SSLContext | None = None
        self._keepalive = 0
        self._proxies: dict[str, httpx.BaseTransport] = {}
        self._routes: dict[str, httpx.BaseTransport] = {}
        #: The client's own headers (``Accept``, ``User-Agent``, ...) as (lower-case name,
        #: name, value), which a request's headers of the same name replace.
        self._default_headers = [
            (name.decode().lower(), name.decode(), value.decode()) for name, value in client.headers.raw
        ]

    @classmethod
    def create(
        cls,
        *,
        verify: Any = True,
        keepalive: int = 4,
        proxy_for: Callable[[str], str | None] | None = None,
    ) -> SessionHttp:
        """A client with keep-alive and ``TCP_NODELAY``: a request is written as headers then
        body, and without it the body waits for the peer's delayed acknowledgement of the
        headers (about 40 ms on Linux) whenever a connection is reused. ``keepalive=0``
        keeps no connection (a client for one request). ``proxy_for(url)`` names the proxy
        a request goes through (None: direct); each proxy gets a pool of its own, with the
        same socket reporting, so cancelling works through a proxy too (design W3)."""
        ssl_context = (
            verify if isinstance(verify, ssl.SSLContext) else httpx.create_ssl_context(verify=verify)
        )
        transport = httpx.HTTPTransport(verify=ssl_context)
        session = cls(httpx.Client(transport=transport, follow_redirects=False))
        session.extensions = {}
        session._transport = transport
        session._proxy_for = proxy_for
        session._ssl_context = ssl_context
        session._keepalive = keepalive
        # httpx offers no way to give its pool a network backend: the pool it built (no
        # connection yet) is replaced by the same pool with the backend that reports sockets.
        transport._pool = httpcore.ConnectionPool(**session._pool_options())
        return session

    def _pool_options(self) -> dict[str, Any]:
        return {
            "ssl_context": self._ssl_context,
            "max_connections": None,
            "max_keepalive_connections": self._keepalive,
            "keepalive_expiry": 60.0,
            "socket_options": NO_DELAY,
            "network_backend": _ReportingBackend(self),
        }

    def _transport_for(self, url: str, direct: httpx.BaseTransport) -> httpx.BaseTransport:
        """The transport of ``url``'s origin: direct, or the pool of the proxy it goes through."""
        origin = url.split("/", 3)[:3]
        key = "/".join(origin)
        transport = self._routes.get(key)
        if transport is None:
            proxy_url = self._proxy_for(url) if self._proxy_for is not None else None
            transport = direct if proxy_url is None else self._proxy_transport(proxy_url)
            self._routes[key] = transport
        return transport

    def _proxy_transport(self, proxy_url: str) -> httpx.BaseTransport:
        transport = self._proxies.get(proxy_url)
        if transport is not None:
            return transport
        proxy = httpx.Proxy(proxy_url)
        transport = httpx.HTTPTransport(verify=self._ssl_context or True)
        transport._pool = httpcore.HTTPProxy(
            proxy_url=httpcore.URL(
                scheme=proxy.url.raw_scheme,
                host=proxy.url.raw_host,
                port=proxy.url.port,
                target=proxy.url.raw_path,
            ),
            proxy_auth=proxy.raw_auth,
            proxy_headers=proxy.headers.raw,
            proxy_ssl_context=self._ssl_context if proxy.url.scheme == "https" else None,
            **self._pool_options(),
        )
        self._proxies[proxy_url] = transport
        return transport

    def open(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes, timeout: Mapping[str, Any]
    ) -> httpx.Response:
        """Send a request and return its response with the body still to be read; the caller
        closes it. ``timeout`` is in httpcore's form (``httpx.Timeout.as_dict()``). The same
        request on the wire as ``client.stream`` sends (the client's headers first, those
        ``headers`` replace dropped), without the client's layer when the transport is the
        session's own (see the module docstring)."""
        if self._transport is None:
            extensions = {**self.extensions, "timeout": timeout}
            request = self.client.build_request(
                method, url, headers=headers, content=body, extensions=extensions
            )
            return self.client.send(request, stream=True)
        if self._closed:
            raise RuntimeError("Cannot send a request, as the client has been closed.")
        names = {name.lower() for name in headers}
        merged = [(name, value) for lower, name, value in self._default_headers if lower not in names]
        merged += headers.items()
        request = httpx.Request(method, url, headers=merged, content=body, extensions={"timeout": timeout})
        transport = self._transport if self._proxy_for is None else self._transport_for(url, self._transport)
        response = transport.handle_request(request)
        response.request = request
        return response

    def trace(self, name: str, info: Mapping[str, Any]) -> None:
        """httpcore trace hook (a client built elsewhere): remember each socket as soon as its
        connection exists."""
        if name.endswith(_CONNECTED):
            stream = info.get("return_value")
            if stream is not None:
                self.connected(stream)

    def connected(self, stream: httpcore.NetworkStream) -> None:
        """Remember the socket of a stream that just connected (or started TLS); shut it down
        at once when the request in flight is already cancelled."""
        sock = stream.get_extra_info("socket")
        if isinstance(sock, socket.socket):
            with self._lock:
                self._sockets = [s for s in self._sockets if s.fileno() != -1]
                self._sockets.append(sock)
            if self._due(self._cancel):
                self._shutdown()

    def _due(self, cancel: threading.Event | None) -> bool:
        """A request is in flight and cancelled, or past its ``expire_after`` deadline."""
        deadline = self._deadline
        return cancel is not None and (
            cancel.is_set() or (deadline is not None and time.monotonic() >= deadline)
        )

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
            self._deadline = None

    def expire_after(self, seconds: float | None) -> None:
        """Within a ``watching`` block: shut the sockets down ``seconds`` from now, as a
        cancel would, unless called again with None first. The client reads what follows
        a stream's end event this way: a server that ends the body at once keeps its
        connection for the next request, one that holds it open is cut off (design W1)."""
        self._deadline = None if seconds is None else time.monotonic() + seconds

    def _watch(self) -> None:
        requests, quiet = -1, 0
        while True:
            time.sleep(CANCEL_POLL_SECONDS)  # a plain sleep: the cheapest wait there is
            cancel = self._cancel
            if self._closed:
                break
            if self._due(cancel):
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
        for transport in self._proxies.values():
            transport.close()


class _ReportingBackend(httpcore.NetworkBackend):
    """httpcore's own sync backend, telling the session of each socket as it connects."""

    def __init__(self, session: SessionHttp) -> None:
        self._backend = httpcore.SyncBackend()
        self._session = session

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        stream = self._backend.connect_tcp(host, port, timeout, local_address, socket_options)
        self._session.connected(stream)
        return _ReportingStream(stream, self._session)

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


class _ReportingStream(httpcore.NetworkStream):
    """A connected stream that reports the socket TLS wraps it in (the plain socket is
    detached then). Reads and writes go straight to the stream's own methods: they are bound
    to this object once, so no call is added per read."""

    def __init__(self, stream: httpcore.NetworkStream, session: SessionHttp) -> None:
        self._stream = stream
        self._session = session
        self.read = stream.read  # type: ignore[method-assign]
        self.write = stream.write  # type: ignore[method-assign]
        self.close = stream.close  # type: ignore[method-assign]
        self.get_extra_info = stream.get_extra_info  # type: ignore[method-assign]

    def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        tls = self._stream.start_tls(ssl_context, server_hostname, timeout)
        self._session.connected(tls)
        return tls
