"""One pooled client per session: keep-alive between requests, cancellation still immediate (design D2)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from desktop.emulator import Emulator
from desktop.emulator.faults import Fault
from desktop.pi.projection import ProviderRequest
from desktop.session.dispatch import HttpDispatcher
from tests.wire.families import FAMILIES

ANTHROPIC = next(f for f in FAMILIES if f.api == "anthropic-messages")


@pytest.fixture
def emulator() -> Iterator[Emulator]:
    with Emulator() as emu:
        yield emu


def _request(emu: Emulator, text: str) -> tuple[ProviderRequest, dict[str, Any]]:
    wire = ANTHROPIC.request(emu, "system", [("user", text)])
    body: dict[str, Any] = __import__("orjson").loads(wire.body)
    return ProviderRequest("POST", wire.url, dict(wire.headers), body), ANTHROPIC.model(emu)


def _sockets(dispatcher: HttpDispatcher) -> list[Any]:
    assert dispatcher._pool is not None
    return [s for s in dispatcher._pool._sockets if s.fileno() != -1]


def test_requests_share_one_connection(emulator: Emulator) -> None:
    dispatcher = HttpDispatcher(lambda: None)
    try:
        for turn in range(3):
            request, model = _request(emulator, f"hello {turn}")
            message = dispatcher(request, model, on_event=lambda _e: None, cancel=threading.Event())
            assert message["stopReason"] == "stop"
        assert len(_sockets(dispatcher)) == 1  # one connection, kept alive and reused
    finally:
        dispatcher.close()


def test_cancel_while_waiting_on_a_reused_connection(emulator: Emulator) -> None:
    dispatcher = HttpDispatcher(lambda: None)
    try:
        request, model = _request(emulator, "warm the pool")
        assert (
            dispatcher(request, model, on_event=lambda _e: None, cancel=threading.Event())["stopReason"]
            == "stop"
        )
        emulator.inject(Fault("slow_first_byte", delay=60), times=1)
        cancel = threading.Event()
        threading.Timer(0.3, cancel.set).start()
        request, model = _request(emulator, "this one stalls")
        message = dispatcher(request, model, on_event=lambda _e: None, cancel=cancel)
        assert message["stopReason"] == "aborted"  # not after the 60 s stall: the socket was shut down
        request, model = _request(emulator, "and the session goes on")
        assert (
            dispatcher(request, model, on_event=lambda _e: None, cancel=threading.Event())["stopReason"]
            == "stop"
        )
    finally:
        dispatcher.close()
