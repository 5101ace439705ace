"""Every stream ends at its API's end event, whatever the connection does (design W1).

The servers here send a complete answer and then hold the connection open without ending
the body, as a proxy or a misbehaving gateway may. The client is given a 30 s read timeout:
each test finishes because the end event ended the stream, with pi-ai's stop reason, not
because a timeout fired (that would be an ``error`` naming the read timeout).
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from desktop.host.providers import RetryPolicy, Timeouts, WireRequest, send_streaming
from desktop.host.providers.pool import SessionHttp
from desktop.pi.streaming.eventstream import event_frame
from tests.wire.loopback import ANTHROPIC, Reply, ScriptedServer, event_json, serving, sse

PATIENT = Timeouts(connect=5, read=30)
NO_RETRY = RetryPolicy(max_retries=0)


def _model(api: str, provider: str, base_url: str) -> dict[str, Any]:
    return {"id": "m-1", "name": "m-1", "api": api, "provider": provider, "baseUrl": base_url}


COMPLETIONS = sse(
    (None, event_json({"id": "c1", "choices": [{"index": 0, "delta": {"content": "Hello"}}]})),
    (None, event_json({"id": "c1", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})),
    (None, event_json({"id": "c1", "choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 2}})),
    (None, "[DONE]"),
)

MISTRAL = sse(
    (None, event_json({"id": "c1", "choices": [{"index": 0, "delta": {"content": "Hello"}}]})),
    (
        None,
        event_json(
            {
                "id": "c1",
                "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
            }
        ),
    ),
    (None, "[DONE]"),
)


_ITEM = {"type": "message", "id": "msg_1", "role": "assistant", "content": []}
_USAGE = {"input_tokens": 5, "output_tokens": 2, "total_tokens": 7}
COMPLETED = sse(
    *(
        (event["type"], event_json(event))
        for event in (
            {"type": "response.created", "response": {"id": "resp_1"}},
            {"type": "response.output_item.added", "output_index": 0, "item": _ITEM},
            {"type": "response.output_text.delta", "output_index": 0, "delta": "Hello"},
            {
                "type": "response.output_item.done",
                "output_index": 0,
                "item": {**_ITEM, "content": [{"type": "output_text", "text": "Hello"}]},
            },
            {
                "type": "response.completed",
                "response": {"id": "resp_1", "status": "completed", "usage": _USAGE},
            },
        )
    )
)


BEDROCK = [
    event_frame("messageStart", b'{"role":"assistant"}'),
    event_frame("contentBlockDelta", b'{"contentBlockIndex":0,"delta":{"text":"Hello"}}'),
    event_frame("contentBlockStop", b'{"contentBlockIndex":0}'),
    event_frame("messageStop", b'{"stopReason":"end_turn"}'),
    event_frame("metadata", b'{"usage":{"inputTokens":5,"outputTokens":2,"totalTokens":7}}'),
]

#: The provider each API is sent as.
PROVIDERS = {
    "anthropic-messages": "anthropic",
    "openai-completions": "openai",
    "openai-responses": "openai",
    "azure-openai-responses": "azure",
    "openai-codex-responses": "openai-codex",
    "mistral-conversations": "mistral",
    "bedrock-converse-stream": "amazon-bedrock",
}
#: (api, body chunks, pi-ai's stop reason for the complete answer). Every SSE API's end events,
#: held open, are pi-ai's own recorded streams in ``test_pi_ai_held_open``.
HELD_OPEN = [
    pytest.param("anthropic-messages", ANTHROPIC, "stop", id="anthropic-message_stop"),
    pytest.param("openai-completions", COMPLETIONS, "stop", id="completions-DONE"),
    pytest.param("openai-responses", COMPLETED, "stop", id="responses-completed"),
    pytest.param("bedrock-converse-stream", BEDROCK, "stop", id="bedrock-metadata"),
]


def _send(server: ScriptedServer, api: str, **kwargs: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    events: list[dict[str, Any]] = []
    message = send_streaming(
        WireRequest(server.base_url + "/v1/stream", b"{}"),
        model=_model(api, PROVIDERS[api], server.base_url),
        api_key="k",
        on_event=events.append,
        timeouts=PATIENT,
        policy=NO_RETRY,
        **kwargs,
    )
    return message, events


def _text(message: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in message["content"] if block["type"] == "text")


@pytest.mark.parametrize(("api", "chunks", "stop"), HELD_OPEN)
def test_the_end_event_ends_the_stream_on_a_connection_held_open(
    api: str, chunks: list[bytes], stop: str
) -> None:
    with serving(Reply(chunks=chunks, after="hold")) as server:
        message, events = _send(server, api)
    assert message["stopReason"] == stop, message.get("errorMessage")
    assert "errorMessage" not in message
    assert _text(message) == "Hello"
    assert events[-1]["type"] == "done" and events[-1]["reason"] == stop


@pytest.mark.parametrize(("api", "chunks", "stop"), HELD_OPEN[:3])
def test_the_end_event_ends_the_stream_on_the_sessions_pooled_client(
    api: str, chunks: list[bytes], stop: str
) -> None:
    pool = SessionHttp.create()
    try:
        with serving(Reply(chunks=chunks, after="hold"), Reply(chunks=chunks, after="end")) as server:
            first, _ = _send(server, api, pool=pool, cancel=threading.Event())
            second, _ = _send(server, api, pool=pool, cancel=threading.Event())
            connections = server.connections
    finally:
        pool.close()
    assert first["stopReason"] == stop and second["stopReason"] == stop, (
        first.get("errorMessage"),
        second.get("errorMessage"),
    )
    assert connections == 2, "the held connection is not reused"


def test_a_body_that_ends_after_the_end_event_keeps_its_connection() -> None:
    pool = SessionHttp.create()
    try:
        with serving(Reply(chunks=ANTHROPIC), Reply(chunks=ANTHROPIC)) as server:
            for _ in range(2):
                message, _ = _send(server, "anthropic-messages", pool=pool, cancel=threading.Event())
                assert message["stopReason"] == "stop"
            assert server.connections == 1
    finally:
        pool.close()


def test_events_after_the_end_event_are_not_read() -> None:
    after = sse(
        ("error", event_json({"type": "error", "error": {"type": "overloaded_error", "message": "late"}}))
    )
    with serving(Reply(chunks=ANTHROPIC + after, after="hold")) as server:
        message, _ = _send(server, "anthropic-messages")
    assert message["stopReason"] == "stop", message.get("errorMessage")


#: A body that ends without its API's end event: pi-ai's error text for each.
MISSING_END = [
    pytest.param(
        "anthropic-messages", ANTHROPIC[:-1], "Anthropic stream ended before message_stop", id="anthropic"
    ),
    pytest.param(
        "openai-completions", COMPLETIONS[:1], "Stream ended without finish_reason", id="completions"
    ),
    pytest.param(
        "openai-responses",
        COMPLETED[:-1],
        "OpenAI Responses stream ended before a terminal response event",
        id="responses",
    ),
    pytest.param(
        "openai-codex-responses",
        COMPLETED[:-1],
        "OpenAI Responses stream ended before a terminal response event",
        id="codex",
    ),
    pytest.param(
        "mistral-conversations", MISTRAL[:1], "Mistral stream ended without a finish reason", id="mistral"
    ),
    pytest.param(
        "bedrock-converse-stream", BEDROCK[:3], "Bedrock stream ended without a stop reason", id="bedrock"
    ),
]


@pytest.mark.parametrize(("api", "chunks", "error"), MISSING_END)
def test_a_body_ending_without_its_end_event_is_an_error_saying_so(
    api: str, chunks: list[bytes], error: str
) -> None:
    with serving(Reply(chunks=chunks, after="end")) as server:
        message, events = _send(server, api)
    assert message["stopReason"] == "error"
    assert message["errorMessage"] == error
    assert events[-1]["type"] == "error"
