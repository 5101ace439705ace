"""pi-ai's recorded streams over a real connection the server never closes (design W1).

Every stream in ``streams.json`` that carries its API's end event is served by a loopback
server that then holds the connection open, without ending the body. Through the whole client
(``send_streaming``, with a 30 s read timeout) each must end as pi-ai 1.0.3 ended it when the
body ended there: the same message and the same events, because the end event ended it.
"""

from __future__ import annotations

from typing import Any

import pytest

from desktop.host.providers import RetryPolicy, Timeouts, WireRequest, send_streaming
from tests.wire.loopback import Reply, serving
from tests.wire.test_pi_ai_conformance import (
    CASES,
    LATER_PI_AI,
    RESULTS,
    _floats_close,
    _normalize,
    case_model,
)

#: The end events of each API with one (Gemini has none: its body's end is the end).
END_EVENTS = {
    "anthropic-messages": ("event: message_stop", "event: error"),
    "openai-completions": ("data: [DONE]",),
    "mistral-conversations": ("data: [DONE]",),
    "openai-responses": ("response.completed", "response.incomplete", "response.failed"),
    "azure-openai-responses": ("response.completed", "response.incomplete", "response.failed"),
    "openai-codex-responses": (
        "response.completed",
        "response.incomplete",
        "response.done",
        "response.failed",
    ),
}
HELD = [
    case
    for case in CASES
    if any(marker in case["sse"] for marker in END_EVENTS.get(case["api"], ()))
    and case["name"] not in LATER_PI_AI
    # An SSE event is complete at its blank line: a last event without one is only read when
    # the body ends, by pi-ai too, so it cannot end a stream whose connection stays open.
    and case["sse"].endswith(("\n\n", "\r\n\r\n"))
]


def test_most_recorded_streams_are_served_held_open() -> None:
    assert len(HELD) >= 40
    assert {case["api"] for case in HELD} == set(END_EVENTS)


@pytest.mark.parametrize("case", HELD, ids=[c["name"] for c in HELD])
def test_pi_ai_stream_held_open_ends_as_pi_ai_ended_it(case: dict[str, Any]) -> None:
    events: list[dict[str, Any]] = []
    with serving(Reply(chunks=[case["sse"].encode()], after="hold")) as server:
        message = send_streaming(
            WireRequest(server.base_url + "/stream", b"{}"),
            model=case_model(case),
            api_key="sk-test",
            on_event=events.append,
            timeouts=Timeouts(connect=5, read=30),
            policy=RetryPolicy(max_retries=0),
        )
    expected = RESULTS[case["name"]]
    ours, theirs = _normalize(dict(message)), _normalize(expected["message"])
    assert _floats_close(ours, theirs), f"\nours:   {ours}\npi-ai:  {theirs}"
    assert [e["type"] for e in events] == expected["events"]
