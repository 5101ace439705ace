"""A key never shows up in redacted headers, error messages or the recorded events."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from desktop.host.providers import RetryPolicy, WireRequest, send_streaming
from desktop.host.redaction import redact_text
from tests.wire.loopback import Reply, ScriptedServer, Seen

KEY = "sk-ant-api03-SECRETSECRETSECRET-0123456789"


def test_redact_text_scrubs_known_keys_url_keys_and_key_shapes() -> None:
    text = f"bad key {KEY} at https://host/v1?key=AIzaSyA1234567890abcdefghijk&alt=sse and sk-proj-ABCDEFGHIJKLMNOPQRST"
    cleaned = redact_text(text, [KEY])
    assert KEY not in cleaned and "AIzaSy" not in cleaned and "sk-proj-ABCD" not in cleaned
    assert "&alt=sse" in cleaned


@pytest.fixture
def echo_server() -> Iterator[str]:
    """A misbehaving provider that echoes the request headers back in its error body."""

    def echo(seen: Seen) -> Reply:
        body = orjson.dumps({"error": {"message": f"invalid credentials: {seen.headers}"}})
        return Reply(401, [body], content_type="application/json")

    with ScriptedServer(respond=echo) as server:
        yield server.base_url


@pytest.mark.parametrize("api", ["anthropic-messages", "openai-completions", "google-generative-ai"])
def test_a_key_echoed_by_the_provider_never_reaches_the_error_message(echo_server: str, api: str) -> None:
    model = {"id": "m", "api": api, "provider": "anthropic"}
    events: list[dict[str, Any]] = []
    message = send_streaming(
        WireRequest(echo_server + "/v1/messages", b"{}"),
        model=model,
        api_key=KEY,
        on_event=events.append,
        policy=RetryPolicy(max_retries=0),
    )
    assert message["stopReason"] == "error"
    assert "(401)" in message["errorMessage"] and "invalid credentials" in message["errorMessage"]
    assert KEY not in message["errorMessage"]
    assert KEY not in orjson.dumps(message).decode()
    assert KEY not in repr(events)
