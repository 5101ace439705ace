"""Injected faults end in a successful retry or a clear error; cancellation is never 'complete'."""

from __future__ import annotations

import threading
import time
from typing import Any

import httpx
import pytest

from desktop.emulator import Emulator, Fault
from desktop.host.providers import RetryPolicy, Timeouts, WireRequest, send_streaming
from tests.wire.families import FAMILIES, FAMILY_IDS, Family

FAST = RetryPolicy(max_retries=2, base_delay=0.01, max_backoff=0.05)
ANTHROPIC, OPENAI_CHAT = FAMILIES[0], FAMILIES[1]
#: Seconds each slowed event waits: a cancel that does not interrupt the blocked read waits as
#: long, one that does returns in a fraction of it however busy the machine.
STALL = 5.0


def _send(
    emu: Emulator, family: Family, text: str = "hello", **kwargs: Any
) -> tuple[dict[str, Any], list[Any]]:
    events: list[dict[str, Any]] = []
    kwargs.setdefault("policy", FAST)
    message = send_streaming(
        family.request(emu, "system", [("user", text)]),
        model=family.model(emu),
        api_key="sk-secret-key-123456",
        on_event=events.append,
        **kwargs,
    )
    return message, events


def _assert_not_complete(message: dict[str, Any], events: list[dict[str, Any]], reason: str) -> None:
    assert message["stopReason"] == reason
    assert message["errorMessage"]
    assert all(e["type"] != "done" for e in events)
    assert events and events[-1]["type"] == "error" and events[-1]["reason"] == reason


@pytest.mark.parametrize("family", FAMILIES, ids=FAMILY_IDS)
def test_rate_limit_is_retried_after_retry_after(emu: Emulator, family: Family) -> None:
    emu.inject(Fault("rate_limit", retry_after=0.2), times=1)
    started = time.monotonic()
    message, events = _send(emu, family)

    assert message["stopReason"] == "stop", message.get("errorMessage")
    assert time.monotonic() - started >= 0.2, "Retry-After must be honoured"
    assert [r.status for r in emu.requests] == [429, 200]
    assert [e["type"] for e in events].count("start") == 1


def test_server_errors_are_retried_with_backoff(emu: Emulator) -> None:
    emu.inject(Fault("server_error", status=503), times=2)
    message, _ = _send(emu, OPENAI_CHAT)
    assert message["stopReason"] == "stop"
    assert [r.status for r in emu.requests] == [503, 503, 200]


@pytest.mark.parametrize("family", FAMILIES, ids=FAMILY_IDS)
def test_persistent_server_error_gives_a_clear_message(emu: Emulator, family: Family) -> None:
    emu.inject(Fault("server_error", status=500), times=10)
    message, events = _send(emu, family)

    _assert_not_complete(message, events, "error")
    text = message["errorMessage"]
    assert "(500)" in text and "Internal error (emulator fault 500)" in text and "after 3 attempts" in text
    assert len(emu.requests) == 3
    assert "sk-secret-key-123456" not in text


def test_non_retryable_status_fails_at_once(emu: Emulator) -> None:
    strict = Emulator(require_auth=True).start()
    try:
        family = OPENAI_CHAT
        request = family.request(strict, "system", [("user", "hi")])
        message = send_streaming(request, model=family.model(strict), api_key=None, policy=FAST)
    finally:
        strict.stop()
    assert message["stopReason"] == "error"
    assert "(401)" in message["errorMessage"] and "check the API key" in message["errorMessage"]
    assert len(strict.requests) == 1


def test_retry_after_beyond_the_cap_fails_immediately(emu: Emulator) -> None:
    emu.inject(Fault("rate_limit", retry_after=120), times=1)
    started = time.monotonic()
    message, _ = _send(emu, ANTHROPIC)
    assert time.monotonic() - started < 30  # not after the 60 s the cap allows
    assert message["stopReason"] == "error"
    assert "Server requested 120s retry delay (max: 60s)" in message["errorMessage"]
    assert "(429 rate_limit_error)" in message["errorMessage"]


@pytest.mark.parametrize(
    ("fault", "words"),
    [
        (Fault("cut", after_events=3), ("mid-stream",)),
        (Fault("truncate", after_events=3), ("ended", "incomplete", "finish")),
        (Fault("malformed", at_event=3), ("pars", "malformed", "json")),
    ],
    ids=["cut mid-way", "no terminal event", "malformed event JSON"],
)
@pytest.mark.parametrize("family", FAMILIES, ids=FAMILY_IDS)
def test_a_broken_stream_is_a_clear_error_not_a_message(
    emu: Emulator, family: Family, fault: Fault, words: tuple[str, ...]
) -> None:
    emu.inject(fault, times=1)
    message, events = _send(emu, family, "tell me [[words:40]]")
    _assert_not_complete(message, events, "error")
    assert any(word in message["errorMessage"].lower() for word in words)
    assert len(emu.requests) == 1, "bytes were consumed, so no retry"


def test_slow_first_byte_times_out_then_the_retry_succeeds(emu: Emulator) -> None:
    emu.inject(Fault("slow_first_byte", delay=1.0), times=1)
    message, _ = _send(emu, ANTHROPIC, timeouts=Timeouts(connect=2, read=0.3))
    assert message["stopReason"] == "stop", message.get("errorMessage")
    assert len(emu.requests) >= 1


def test_read_timeout_without_retries_names_the_timeout(emu: Emulator) -> None:
    emu.inject(Fault("slow_first_byte", delay=1.0), times=1)
    message, _ = _send(
        emu, ANTHROPIC, timeouts=Timeouts(connect=2, read=0.3), policy=RetryPolicy(max_retries=0)
    )
    assert message["stopReason"] == "error"
    assert "did not respond within 0.3s (read timeout)" in message["errorMessage"]


def test_connection_refused_is_retried_then_reported(emu: Emulator) -> None:
    with socket_port() as port:
        pass  # the port is now closed: nothing listens
    request = WireRequest(f"http://127.0.0.1:{port}/anthropic/v1/messages", b"{}")
    message = send_streaming(request, model=ANTHROPIC.model(emu), api_key="sk-secret-key-123456", policy=FAST)
    assert message["stopReason"] == "error"
    assert "Could not connect to Anthropic at 127.0.0.1" in message["errorMessage"]
    assert "after 3 attempts" in message["errorMessage"]


def test_fault_header_for_manual_use(emu: Emulator) -> None:
    family = OPENAI_CHAT
    base = family.request(emu, "system", [("user", "hi")])
    request = WireRequest(base.url, base.body, {"x-emulator-fault": "server_error;status=502"})
    message = send_streaming(request, model=family.model(emu), api_key="k", policy=RetryPolicy(max_retries=0))
    assert "(502)" in message["errorMessage"]


# -- cancellation ------------------------------------------------------------------------


@pytest.mark.parametrize("family", FAMILIES, ids=FAMILY_IDS)
def test_cancel_mid_stream_yields_aborted(emu: Emulator, family: Family) -> None:
    # Every family has streamed a delta by event 6; after that each event waits STALL seconds.
    emu.inject(Fault("slow_stream", delay=STALL, at_event=6), times=1)
    cancel = threading.Event()
    seen: list[dict[str, Any]] = []
    cancelled_at: list[float] = []

    def fire() -> None:
        cancelled_at.append(time.monotonic())
        cancel.set()

    def on_event(event: dict[str, Any]) -> None:
        seen.append(event)
        if event["type"].endswith("_delta") and not cancelled_at:
            threading.Timer(0.05, fire).start()

    message = send_streaming(
        family.request(emu, "system", [("user", "tell me [[words:60]]")]),
        model=family.model(emu),
        api_key="k",
        cancel=cancel,
        on_event=on_event,
    )
    latency = time.monotonic() - cancelled_at[0]

    _assert_not_complete(message, seen, "aborted")
    assert message["errorMessage"] == "Request was aborted"
    assert any(e["type"].endswith("_delta") for e in seen), (
        "the partial answer was streamed before the cancel"
    )
    assert latency < STALL / 2, (
        f"cancel must interrupt the blocked read, not wait for the next event ({latency:.3f}s)"
    )


@pytest.mark.parametrize(
    "fault",
    [Fault("slow_first_byte", delay=30), Fault("rate_limit", retry_after=30)],
    ids=["waiting for the first byte", "during the retry backoff"],
)
def test_cancel_while_waiting(emu: Emulator, fault: Fault) -> None:
    emu.inject(fault, times=1)
    cancel = threading.Event()
    threading.Timer(0.2, cancel.set).start()
    started = time.monotonic()
    message, events = _send(emu, ANTHROPIC, cancel=cancel)
    assert time.monotonic() - started < 15  # not after the fault's 30 s
    _assert_not_complete(message, events, "aborted")
    if fault.kind == "rate_limit":
        assert len(emu.requests) == 1  # no retry after the cancel


def test_cancel_before_sending_sends_nothing(emu: Emulator) -> None:
    cancel = threading.Event()
    cancel.set()
    message, events = _send(emu, ANTHROPIC, cancel=cancel)
    _assert_not_complete(message, events, "aborted")
    assert emu.requests == []


class socket_port:
    """A port that was free a moment ago (bound, then released)."""

    def __enter__(self) -> int:
        import socket

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        return int(self.sock.getsockname()[1])

    def __exit__(self, *exc: object) -> None:
        self.sock.close()


def test_httpx_client_can_be_supplied(emu: Emulator) -> None:
    with httpx.Client() as client:
        message, _ = _send(emu, OPENAI_CHAT, client=client)
    assert message["stopReason"] == "stop"
