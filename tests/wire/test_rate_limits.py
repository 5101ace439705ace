"""Rate limits and overload against real loopback servers (design W4): ``Retry-After`` in
seconds or as a date and the providers' reset headers set the wait, announced as a
``retry_wait`` event; a 429/503/529 becomes one line naming the provider's reason; and a
response that has started is never sent again."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import orjson
import pytest

from desktop.host.providers import RetryPolicy, Timeouts, WireRequest, send_streaming
from tests.wire.loopback import ANTHROPIC, Reply, ScriptedServer, Seen, serving
from tests.wire.test_stream_end import BEDROCK, COMPLETIONS

POLICY = RetryPolicy(max_retries=2, base_delay=0.01, max_backoff=0.05)

ANTHROPIC_OVERLOADED = orjson.dumps(
    {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
)
ANTHROPIC_RATE_LIMITED = orjson.dumps(
    {
        "type": "error",
        "error": {
            "type": "rate_limit_error",
            "message": "Number of request tokens has exceeded your per-minute rate limit",
        },
    }
)
OPENAI_RATE_LIMITED = orjson.dumps(
    {
        "error": {
            "message": "Rate limit reached for gpt-4.1 in organization org-1 on requests per min (RPM): Limit 3, Used 3.",
            "type": "requests",
            "param": None,
            "code": "rate_limit_exceeded",
        }
    }
)


def _error(status: int, body: bytes, **headers: str) -> Reply:
    return Reply(status=status, chunks=[body], headers=headers, content_type="application/json")


def _send(
    server: ScriptedServer, api: str = "anthropic-messages", provider: str = "anthropic", **kwargs: Any
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    waits: list[dict[str, Any]] = []
    kwargs.setdefault("policy", POLICY)
    message = send_streaming(
        WireRequest(server.base_url + "/v1/stream", b"{}"),
        model={"id": "m-1", "api": api, "provider": provider},
        api_key="sk-secret-key-123456",
        on_wait=waits.append,
        timeouts=Timeouts(connect=5, read=30),
        **kwargs,
    )
    return message, waits


def test_retry_after_in_seconds_sets_the_announced_wait() -> None:
    with serving(
        _error(429, ANTHROPIC_RATE_LIMITED, **{"retry-after": "0.2"}), Reply(chunks=ANTHROPIC)
    ) as server:
        message, waits = _send(server)
        requests = len(server.seen)
    assert message["stopReason"] == "stop", message.get("errorMessage")
    assert requests == 2
    assert waits == [
        {
            "type": "retry_wait",
            "seconds": 0.2,
            "retry": 1,
            "retries": 2,
            "reason": "Anthropic API error (429 rate_limit_error): Number of request tokens has exceeded "
            "your per-minute rate limit — rate limited; wait and try again, or check the account's quota",
        }
    ]


def _then_answer(first: Callable[[], Reply]) -> Callable[[Seen], Reply]:
    """``first()`` for the first request (made when it arrives), the whole answer after."""
    replies: list[Reply] = []

    def respond(_seen: Seen) -> Reply:
        replies.append(first() if not replies else Reply(chunks=ANTHROPIC))
        return replies[-1]

    return respond


def test_retry_after_as_an_http_date() -> None:
    def overloaded() -> Reply:  # the date is written as the response is: 2 to 3 s ahead
        when = format_datetime(datetime.now(UTC) + timedelta(seconds=3), usegmt=True)
        return _error(503, ANTHROPIC_OVERLOADED, **{"retry-after": when})

    with ScriptedServer(respond=_then_answer(overloaded)) as server:
        message, waits = _send(server)
    assert message["stopReason"] == "stop", message.get("errorMessage")
    assert len(waits) == 1 and 0.05 < waits[0]["seconds"] <= 3  # the date, not the 0.01 s backoff


def test_openai_reset_header_of_the_exhausted_limit_sets_the_wait() -> None:
    headers = {
        "x-ratelimit-limit-requests": "3",
        "x-ratelimit-remaining-requests": "0",
        "x-ratelimit-reset-requests": "150ms",
        "x-ratelimit-remaining-tokens": "39000",
        "x-ratelimit-reset-tokens": "6m0s",  # not exhausted: no reason to wait for it
    }
    with serving(_error(429, OPENAI_RATE_LIMITED, **headers), Reply(chunks=COMPLETIONS)) as server:
        message, waits = _send(server, "openai-completions", "openai")
    assert message["stopReason"] == "stop", message.get("errorMessage")
    assert [w["seconds"] for w in waits] == [0.15]
    assert waits[0]["reason"].startswith(
        "OpenAI API error (429 rate_limit_exceeded): Rate limit reached for gpt-4.1 in organization org-1"
    )


def test_anthropic_reset_header_sets_the_wait() -> None:
    def limited() -> Reply:
        reset = (datetime.now(UTC) + timedelta(seconds=2)).isoformat().replace("+00:00", "Z")
        headers = {"anthropic-ratelimit-tokens-remaining": "0", "anthropic-ratelimit-tokens-reset": reset}
        return _error(429, ANTHROPIC_RATE_LIMITED, **headers)

    with ScriptedServer(respond=_then_answer(limited)) as server:
        message, waits = _send(server)
    assert message["stopReason"] == "stop", message.get("errorMessage")
    assert len(waits) == 1 and 0.05 < waits[0]["seconds"] <= 2


def test_a_reset_beyond_the_cap_fails_at_once_naming_both() -> None:
    headers = {"x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "1h0m0s"}
    with serving(_error(429, OPENAI_RATE_LIMITED, **headers)) as server:
        message, waits = _send(server, "openai-completions", "openai")
        requests = len(server.seen)
    assert waits == [] and requests == 1
    assert message["errorMessage"].startswith(
        "The rate limit resets in 3600s (max wait: 60s). OpenAI API error (429 rate_limit_exceeded): "
    )


def test_persistent_overload_is_one_line_with_the_providers_reason() -> None:
    replies = [_error(529, ANTHROPIC_OVERLOADED) for _ in range(3)]
    with serving(*replies) as server:
        message, waits = _send(server)
        requests = len(server.seen)
    assert requests == 3 and [w["retry"] for w in waits] == [1, 2]
    assert all(0 < w["seconds"] <= 0.05 for w in waits)  # backoff with jitter, within the bounds
    assert message["stopReason"] == "error"
    assert message["errorMessage"] == (
        "Anthropic API error (529 overloaded_error): Overloaded — the provider is overloaded; "
        "try again in a moment (after 3 attempts)"
    )
    assert "\n" not in message["errorMessage"]


@pytest.mark.parametrize(
    ("api", "provider", "reply", "line"),
    [
        (
            "google-generative-ai",
            "google",
            _error(
                429,
                orjson.dumps(
                    {
                        "error": {
                            "code": 429,
                            "message": "Resource has been exhausted (e.g. check quota).",
                            "status": "RESOURCE_EXHAUSTED",
                        }
                    }
                ),
            ),
            "Google API error (429 RESOURCE_EXHAUSTED): Resource has been exhausted (e.g. check quota).",
        ),
        (
            "bedrock-converse-stream",
            "amazon-bedrock",
            _error(
                429,
                b'{"message":"Too many requests, please wait before trying again."}',
                **{
                    "x-amzn-errortype": "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/"
                },
            ),
            "Amazon Bedrock API error (429 ThrottlingException): Too many requests, please wait before trying again.",
        ),
        (
            "mistral-conversations",
            "mistral",
            _error(
                429,
                orjson.dumps(
                    {
                        "object": "error",
                        "message": "Service tier capacity exceeded for this model.",
                        "type": "service_tier_capacity_exceeded",
                        "param": None,
                        "code": "3505",
                    }
                ),
            ),
            "Mistral API error (429 service_tier_capacity_exceeded): Service tier capacity exceeded for this model.",
        ),
        (
            "openai-responses",
            "openai",
            _error(
                503,
                orjson.dumps(
                    {"error": {"message": "The server is overloaded.", "type": "server_error", "code": None}}
                ),
            ),
            "OpenAI API error (503 server_error): The server is overloaded.",
        ),
    ],
)
def test_each_providers_reason_is_named(api: str, provider: str, reply: Reply, line: str) -> None:
    with serving(reply) as server:
        message, _ = _send(server, api, provider, policy=RetryPolicy(max_retries=0))
    assert message["errorMessage"].startswith(line + " — "), message["errorMessage"]


def test_a_started_response_is_never_sent_again() -> None:
    """The 200 arrived, then the connection dropped before any event: the provider may be
    generating the answer already, so the request is not sent a second time."""
    with serving(Reply(chunks=[], after="drop"), Reply(chunks=ANTHROPIC)) as server:
        message, waits = _send(server)
        requests = len(server.seen)
    assert requests == 1 and waits == []
    assert message["stopReason"] == "error"
    assert "was lost mid-stream" in message["errorMessage"]


def test_a_server_error_before_the_response_is_retried_with_a_wait_event() -> None:
    with serving(
        _error(500, b'{"type":"error","error":{"type":"api_error","message":"Internal"}}'),
        Reply(chunks=BEDROCK),
    ) as server:
        message, waits = _send(server, "bedrock-converse-stream", "amazon-bedrock")
    assert message["stopReason"] == "stop", message.get("errorMessage")
    assert [w["retry"] for w in waits] == [1]


def test_cancel_during_the_announced_wait_aborts_at_once() -> None:
    cancel = threading.Event()

    def on_wait(wait: dict[str, Any]) -> None:
        cancel.set()  # the window's Cancel, pressed while the countdown shows

    with serving(_error(429, ANTHROPIC_RATE_LIMITED, **{"retry-after": "50"})) as server:
        message = send_streaming(
            WireRequest(server.base_url + "/v1/stream", b"{}"),
            model={"id": "m-1", "api": "anthropic-messages", "provider": "anthropic"},
            cancel=cancel,
            on_wait=on_wait,
            policy=POLICY,
        )
        requests = len(server.seen)
    assert message["stopReason"] == "aborted" and requests == 1


def test_an_exhausted_quota_is_not_retried() -> None:
    """A wait does not lift a billing quota (pi-ai's non-retryable limits)."""
    body = orjson.dumps(
        {
            "error": {
                "message": "You exceeded your current quota, please check your plan and billing details.",
                "type": "insufficient_quota",
                "code": "insufficient_quota",
            }
        }
    )
    with serving(_error(429, body), Reply(chunks=COMPLETIONS)) as server:
        message, waits = _send(server, "openai-completions", "openai")
        requests = len(server.seen)
    assert requests == 1 and waits == []
    assert message["errorMessage"].startswith(
        "OpenAI API error (429 insufficient_quota): You exceeded your current quota"
    )
