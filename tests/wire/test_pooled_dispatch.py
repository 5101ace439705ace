"""One pooled client per session: keep-alive between requests, cancellation still immediate (design D2)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any
from unittest.mock import Mock

import pytest

from desktop.emulator import Emulator
from desktop.emulator.faults import Fault
from desktop.host.providers import pool
from desktop.pi.projection import ProviderRequest
from desktop.session.dispatch import HttpDispatcher
from tests.wire.families import FAMILIES

ANTHROPIC = next(f for f in FAMILIES if f.api == "anthropic-messages")


#: Seconds each slowed event waits: a cancel that does not interrupt the blocked read waits as
#: long, one that does returns in a fraction of it however busy the machine.
STALL = 5.0


def _request(emu: Emulator, text: str) -> tuple[ProviderRequest, dict[str, Any]]:
    wire = ANTHROPIC.request(emu, "system", [("user", text)])
    body: dict[str, Any] = __import__("orjson").loads(wire.body)
    return ProviderRequest("POST", wire.url, dict(wire.headers), body), ANTHROPIC.model(emu)


@pytest.fixture
def dispatcher() -> Iterator[HttpDispatcher]:
    dispatcher = HttpDispatcher(lambda: None)
    try:
        yield dispatcher
    finally:
        dispatcher.close()


def _ask(dispatcher: HttpDispatcher, emu: Emulator, text: str, cancel: threading.Event | None = None) -> str:
    """Send one request; its stop reason."""
    request, model = _request(emu, text)
    message = dispatcher(request, model, on_event=lambda _e: None, cancel=cancel or threading.Event())
    return str(message["stopReason"])


def _sockets(dispatcher: HttpDispatcher) -> list[Any]:
    assert dispatcher._pool is not None
    return [s for s in dispatcher._pool._sockets if s.fileno() != -1]


def test_requests_share_one_connection(emulator: Emulator, dispatcher: HttpDispatcher) -> None:
    for turn in range(3):
        assert _ask(dispatcher, emulator, f"hello {turn}") == "stop"
    assert len(_sockets(dispatcher)) == 1  # one connection, kept alive and reused


def test_cancel_while_waiting_on_a_reused_connection(emulator: Emulator, dispatcher: HttpDispatcher) -> None:
    assert _ask(dispatcher, emulator, "warm the pool") == "stop"
    emulator.inject(Fault("slow_first_byte", delay=60), times=1)
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    # Not after the 60 s stall: the socket was shut down.
    assert _ask(dispatcher, emulator, "this one stalls", cancel) == "aborted"
    assert _ask(dispatcher, emulator, "and the session goes on") == "stop"


def _cancel_mid_stream(dispatcher: HttpDispatcher, emu: Emulator) -> tuple[dict[str, Any], float]:
    """A long answer whose events wait ``STALL`` seconds each after the first delta; cancel 50 ms
    after that delta."""
    emu.inject(Fault("slow_stream", delay=STALL, at_event=6), times=1)
    cancel = threading.Event()
    cancelled_at: list[float] = []

    def fire() -> None:
        cancelled_at.append(time.monotonic())
        cancel.set()

    def on_event(event: Any) -> None:
        if event["event"]["type"].endswith("_delta") and not cancelled_at:
            threading.Timer(0.05, fire).start()

    request, model = _request(emu, "tell me [[words:60]]")
    message = dispatcher(request, model, on_event=on_event, cancel=cancel)
    return dict(message), time.monotonic() - cancelled_at[0]


def test_cancel_mid_stream_closes_the_pooled_response(emulator: Emulator, dispatcher: HttpDispatcher) -> None:
    message, latency = _cancel_mid_stream(dispatcher, emulator)
    assert message["stopReason"] == "aborted"
    assert latency < STALL / 2, f"the blocked read was not interrupted ({latency:.3f}s)"
    assert _ask(dispatcher, emulator, "next turn") == "stop"


def test_one_watcher_thread_serves_every_request(emulator: Emulator, dispatcher: HttpDispatcher) -> None:
    """No thread is started per request (design D2): the client's one watcher serves them all."""
    _ask(dispatcher, emulator, "first")
    assert dispatcher._pool is not None
    watcher = dispatcher._pool._watcher
    assert watcher is not None and watcher.is_alive()
    for turn in range(10):
        _ask(dispatcher, emulator, f"turn {turn}")
        assert dispatcher._pool._watcher is watcher
    dispatcher.close()
    watcher.join(timeout=2)
    assert not watcher.is_alive()  # closing the session ends its watcher


def test_an_idle_watcher_ends_and_the_next_request_starts_one(
    emulator: Emulator, dispatcher: HttpDispatcher, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pool, "_IDLE_POLLS", 3)
    _ask(dispatcher, emulator, "first")
    assert dispatcher._pool is not None
    first = dispatcher._pool._watcher
    assert first is not None
    first.join(timeout=5)
    assert not first.is_alive() and dispatcher._pool._watcher is None
    message, latency = _cancel_mid_stream(dispatcher, emulator)
    assert dispatcher._pool._watcher not in (None, first)
    assert message["stopReason"] == "aborted" and latency < STALL / 2


class _PlainStream:
    """A connected stream whose TLS handshake hands back a stream on another socket, as
    ``SSLContext.wrap_socket`` does (it detaches the plain socket)."""

    def __init__(self, sock: Any, tls_sock: Any) -> None:
        self.sock, self.tls_sock = sock, tls_sock

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return b""

    def write(self, buffer: bytes, timeout: float | None = None) -> None: ...

    def close(self) -> None: ...

    def get_extra_info(self, info: str) -> Any:
        return self.sock if info == "socket" else None

    def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> Any:
        return _PlainStream(self.tls_sock, None)


def test_the_socket_tls_wraps_a_connection_in_is_cancelled_too() -> None:
    """The pool's backend reports the plain socket on connect and the TLS one after the
    handshake: a cancel set meanwhile shuts the TLS socket down at once."""
    import socket

    session = pool.SessionHttp.create(keepalive=0)
    plain, tls = socket.socketpair(), socket.socketpair()
    try:
        backend = pool._ReportingBackend(session)
        backend._backend = Mock(connect_tcp=Mock(return_value=_PlainStream(plain[0], tls[0])))
        stream = backend.connect_tcp("example.invalid", 443)
        assert session._sockets == [plain[0]]
        assert stream.read(10) == b""  # reads go straight to the connected stream
        cancel = threading.Event()
        cancel.set()
        with session.watching(cancel):
            wrapped = stream.start_tls(None, "example.invalid")  # type: ignore[arg-type]
        assert wrapped.get_extra_info("socket") is tls[0]
        assert tls[0] in session._sockets
        tls[1].settimeout(2)
        assert tls[1].recv(1) == b""  # the cancelled connection was shut down, not left open
    finally:
        session.close()
        for sock in (*plain, *tls):
            sock.close()


def _recording(session: pool.SessionHttp, set_cookie: bool) -> list[Any]:
    """Put a transport that records each request (and can answer with a cookie) where the
    session's own transport was."""
    import httpx

    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, headers={"set-cookie": "__cf_bm=abc; Path=/"} if set_cookie else {})

    session._transport = httpx.MockTransport(answer)
    return seen


def test_the_pooled_request_is_the_one_the_client_would_send() -> None:
    """The session's transport gets the request ``httpx.Client.stream`` would send: the
    client's own headers first, those the request replaces (in any case) dropped."""
    session = pool.SessionHttp.create(keepalive=0)
    seen = _recording(session, set_cookie=False)
    url = "https://example.invalid/openai/v1/responses?api-version=v1&q=a%2Fb c"
    headers = {"User-Agent": "pi (linux)", "x-api-key": "k", "accept": "text/event-stream"}
    timeout = {"connect": 1.0, "read": 2.0, "write": 3.0, "pool": 1.0}
    try:
        session.open("POST", url, headers, b'{"a":1}', timeout).close()
        expected = session.client.build_request(
            "POST", url, headers=headers, content=b'{"a":1}', extensions={"timeout": timeout}
        )
        (sent,) = seen
        assert sent.headers.raw == expected.headers.raw
        assert (sent.method, sent.url, sent.read()) == (expected.method, expected.url, b'{"a":1}')
        assert sent.extensions == {"timeout": timeout}
    finally:
        session.close()


def test_a_provider_cookie_is_not_sent_back() -> None:
    """No cookie jar: pi-ai's fetch keeps none, so a provider's cookie does not come back."""
    session = pool.SessionHttp.create(keepalive=0)
    seen = _recording(session, set_cookie=True)
    timeout = {"connect": 1.0, "read": 1.0, "write": 1.0, "pool": 1.0}
    try:
        for _ in range(2):
            session.open("POST", "https://example.invalid/v1/messages", {}, b"{}", timeout).close()
        assert "cookie" not in seen[1].headers
    finally:
        session.close()
