"""Amazon Bedrock: event-stream framing, the Converse normalizer, SigV4/bearer auth, whole turns.

Frames are cross-checked against botocore's own event-stream parser, signatures are
recomputed with an independent SigV4 implementation (``sigv4_check``), and turns run
through the real session runtime against the loopback emulator.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desktop.emulator import Emulator, Fault
from desktop.host.providers import WireRequest, send_streaming
from desktop.host.providers.aws_sigv4 import SigV4Signer, signing_region, static_credentials
from desktop.host.providers.cloud_auth import CloudAuth, projection_env
from desktop.host.providers.extras import AuthUnavailable, MissingExtra
from desktop.host.providers.retry import RetryPolicy
from desktop.pi.projection import CREDENTIAL_PLACEHOLDER, RequestOptions, project
from desktop.pi.routes import emulator_route, resolve_model
from desktop.pi.streaming import parser_for
from desktop.pi.streaming.bedrock_converse import BedrockConverseParser
from desktop.pi.streaming.eventstream import (
    EventStreamDecoder,
    EventStreamError,
    Timestamp,
    encode_message,
    event_frame,
)
from desktop.session.dispatch import HttpDispatcher
from tests.session.support import config, open_
from tests.wire.sigv4_check import AMZ_DATE, expected_signature, parse_authorization
from tests.wire.test_pi_ai_conformance import parse_in_chunks

MODEL_ID = "anthropic.claude-sonnet-4-5-20250929-v1:0"  # Pi-published, with prompt caching
ROUTE = f"amazon-bedrock/{MODEL_ID}"
URL = "https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse-stream"
ACCESS_KEY = "AKIDPIDESKTOPTEST"
SECRET_KEY = "pi-desktop-test-secret/K7MDENG+bPxRfiCY"
MODEL: dict[str, Any] = {
    "id": MODEL_ID,
    "api": "bedrock-converse-stream",
    "provider": "amazon-bedrock",
    "cost": {"input": 1.0, "output": 5.0, "cacheRead": 0.1, "cacheWrite": 1.25},
}


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """botocore's default chain sees only what a test sets: no files, no instance metadata."""
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


def frames(*events: tuple[str, dict[str, Any]]) -> bytes:
    return b"".join(event_frame(kind, orjson.dumps(payload)) for kind, payload in events)


def exception_frame(kind: str, payload: bytes) -> bytes:
    """A modeled mid-stream exception (``throttlingException``...), as Bedrock sends it."""
    headers = {":exception-type": kind, ":content-type": "application/json", ":message-type": "exception"}
    return encode_message(headers, payload)


def run(data: bytes, *, chunk: int = 7, model: dict[str, Any] = MODEL) -> tuple[dict[str, Any], list[Any]]:
    return parse_in_chunks(model, data, chunk)


# -- framing -----------------------------------------------------------------------------

header_names = st.text(
    st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=20
).filter(lambda s: len(s.encode()) < 256)
header_values = st.one_of(
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.binary(max_size=64),
    st.text(max_size=64),
    st.builds(Timestamp, st.integers(min_value=-(2**63), max_value=2**63 - 1)),
    st.uuids(),
)
messages = st.tuples(st.dictionaries(header_names, header_values, max_size=6), st.binary(max_size=300))


def _botocore_view(value: Any) -> Any:
    if isinstance(value, Timestamp):
        return value.millis
    if isinstance(value, uuid.UUID):
        return value.bytes
    return value


@settings(max_examples=150, deadline=None)
@given(st.lists(messages, min_size=1, max_size=5), st.integers(min_value=1, max_value=64))
def test_frames_round_trip_in_any_chunking_and_agree_with_botocore(
    items: list[tuple[dict[str, Any], bytes]], chunk: int
) -> None:
    from botocore.eventstream import EventStreamBuffer

    data = b"".join(encode_message(headers, payload) for headers, payload in items)
    decoder = EventStreamDecoder()
    decoded = [m for i in range(0, len(data), chunk) for m in decoder.feed(data[i : i + chunk])]
    decoder.close()
    assert [(m.headers, m.payload) for m in decoded] == items

    reference = EventStreamBuffer()
    reference.add_data(data)
    theirs = [(dict(m.headers), m.payload) for m in reference]
    assert theirs == [({k: _botocore_view(v) for k, v in h.items()}, p) for h, p in items]


@settings(max_examples=200, deadline=None)
@given(messages, st.data())
def test_any_changed_byte_is_a_crc_error(item: tuple[dict[str, Any], bytes], data: st.DataObject) -> None:
    frame = encode_message(*item)
    position = data.draw(st.integers(min_value=0, max_value=len(frame) - 1))
    flip = data.draw(st.integers(min_value=1, max_value=255))
    broken = frame[:position] + bytes([frame[position] ^ flip]) + frame[position + 1 :]
    decoder = EventStreamDecoder()
    with pytest.raises(EventStreamError, match=r"CRC32 mismatch|impossible total length|does not fit"):
        list(decoder.feed(broken))
        decoder.close()


@settings(max_examples=100, deadline=None)
@given(messages, st.data())
def test_a_frame_cut_short_is_a_truncation_error(
    item: tuple[dict[str, Any], bytes], data: st.DataObject
) -> None:
    frame = encode_message(*item)
    cut = data.draw(st.integers(min_value=1, max_value=len(frame) - 1))
    decoder = EventStreamDecoder()
    assert list(decoder.feed(frame[:cut])) == []
    with pytest.raises(EventStreamError, match="truncated"):
        decoder.close()


# -- the normalizer (pi-ai 1.0.3 bedrock-converse-stream.ts; its recorded streams, reused block
# indices, redacted reasoning and the error starts among them, are in test_bedrock_pi_ai) ------


def test_text_thinking_and_tool_call_with_cache_usage() -> None:
    data = frames(
        ("messageStart", {"role": "assistant", "p": "abcdef"}),
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "Let me "}}}),
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "think."}}}),
        (
            "contentBlockDelta",
            {"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": "sig-1"}}},
        ),
        ("contentBlockStop", {"contentBlockIndex": 0}),
        ("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"text": "Reading "}}),
        ("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"text": "it."}}),
        ("contentBlockStop", {"contentBlockIndex": 1}),
        (
            "contentBlockStart",
            {"contentBlockIndex": 2, "start": {"toolUse": {"toolUseId": "tu_1", "name": "read"}}},
        ),
        ("contentBlockDelta", {"contentBlockIndex": 2, "delta": {"toolUse": {"input": '{"path": "no'}}}),
        ("contentBlockDelta", {"contentBlockIndex": 2, "delta": {"toolUse": {"input": 'tes.txt"}'}}}),
        ("contentBlockStop", {"contentBlockIndex": 2}),
        ("messageStop", {"stopReason": "tool_use"}),
        (
            "metadata",
            {
                "usage": {
                    "inputTokens": 100,
                    "outputTokens": 20,
                    "totalTokens": 3120,
                    "cacheReadInputTokens": 2000,
                    "cacheWriteInputTokens": 1000,
                    "cacheDetails": [{"ttl": "5m", "inputTokens": 400}, {"ttl": "1h", "inputTokens": 600}],
                },
                "metrics": {"latencyMs": 12},
            },
        ),
    )
    message, events = run(data)
    assert message["api"] == "bedrock-converse-stream" and message["stopReason"] == "toolUse"
    assert message["rawStopReason"] == "tool_use"
    assert message["content"] == [
        {"type": "thinking", "thinking": "Let me think.", "thinkingSignature": "sig-1"},
        {"type": "text", "text": "Reading it."},
        {"type": "toolCall", "id": "tu_1", "name": "read", "arguments": {"path": "notes.txt"}},
    ]
    usage = message["usage"]
    assert (usage["input"], usage["output"], usage["cacheRead"], usage["cacheWrite"]) == (100, 20, 2000, 1000)
    assert usage["cacheWrite1h"] == 600 and usage["totalTokens"] == 3120
    # cost: 100*1 + 20*5 + 2000*0.1 + (400*1.25 + 600*1*2) per million
    assert usage["cost"]["total"] == pytest.approx((100 + 100 + 200 + 500 + 1200) / 1e6)
    kinds = [e["type"] for e in events]
    assert kinds == [
        "start",
        "thinking_start",
        "thinking_delta",
        "thinking_delta",
        "thinking_end",
        "text_start",
        "text_delta",
        "text_delta",
        "text_end",
        "toolcall_start",
        "toolcall_delta",
        "toolcall_delta",
        "toolcall_end",
        "done",
    ]
    assert [e["delta"] for e in events if e["type"] == "toolcall_delta"] == ['{"path": "no', 'tes.txt"}']
    assert events[-1]["reason"] == "toolUse" and events[-1]["message"] is message


def test_tool_arguments_are_reparsed_after_each_piece() -> None:
    parser = parser_for(MODEL)
    parser.start()
    parser.feed(
        frames(
            ("messageStart", {"role": "assistant"}),
            (
                "contentBlockStart",
                {"contentBlockIndex": 0, "start": {"toolUse": {"toolUseId": "t", "name": "read"}}},
            ),
            ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": '{"path": "no'}}}),
        )
    )
    assert parser.result()["content"][0]["arguments"] == {"path": "no"}


@pytest.mark.parametrize(
    ("reason", "stop", "error"),
    [
        ("end_turn", "stop", None),
        ("stop_sequence", "stop", None),
        ("model_context_window_exceeded", "length", None),
        ("guardrail_intervened", "error", "Provider stopped with: guardrail_intervened"),
        ("content_filtered", "error", "Provider stopped with: content_filtered"),
    ],
)
def test_stop_reasons(reason: str, stop: str, error: str | None) -> None:
    message, events = run(
        frames(("messageStart", {"role": "assistant"}), ("messageStop", {"stopReason": reason}))
    )
    assert message["stopReason"] == stop
    assert message.get("errorMessage") == error
    assert events[-1]["type"] == ("error" if error else "done")


def test_modeled_and_unmodeled_exceptions() -> None:
    head = frames(
        ("messageStart", {"role": "assistant"}),
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "partial"}}),
    )
    throttled = exception_frame("throttlingException", b'{"message":"Too many requests, please wait."}')
    message, events = run(head + throttled)
    assert message["stopReason"] == "error"
    assert message["errorMessage"] == "Throttling error: Too many requests, please wait."
    assert message["content"] == [{"type": "text", "text": "partial"}]
    assert events[-1]["type"] == "error"

    retention = exception_frame(
        "validationException",
        b'{"message":"data retention mode \'default\' is not available for this model"}',
    )
    message, _ = run(head + retention)
    assert message["errorMessage"].startswith("Validation error: data retention mode")
    assert "data-retention.html" in message["errorMessage"]

    unknown = exception_frame("brandNewException", b"something odd")
    message, _ = run(head + unknown)
    assert message["errorMessage"] == "something odd"

    error = encode_message(
        {":message-type": "error", ":error-code": "X", ":error-message": "internal failure"}, b""
    )
    message, _ = run(head + error)
    assert message["errorMessage"] == "internal failure"


def test_corrupt_and_truncated_bodies_end_as_clear_errors() -> None:
    good = frames(
        ("messageStart", {"role": "assistant"}),
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "hello"}}),
        ("messageStop", {"stopReason": "end_turn"}),
    )
    corrupt = bytearray(good)
    corrupt[-6] ^= 0x01  # inside the last frame's payload
    message, events = run(bytes(corrupt))
    assert message["stopReason"] == "error" and "message CRC32 mismatch" in message["errorMessage"]
    assert message["errorMessage"].startswith("Bedrock event-stream frame at byte")
    assert [e["type"] for e in events].count("error") == 1

    message, _ = run(good[:-3])
    assert message["stopReason"] == "error" and "truncated" in message["errorMessage"]
    assert message["content"][0]["text"] == "hello"  # what arrived is kept


def test_registered_for_the_api() -> None:
    assert isinstance(parser_for(MODEL), BedrockConverseParser)


# -- SigV4 and bearer auth -------------------------------------------------------------------


def test_sigv4_from_environment_credentials(aws_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    url = f"https://bedrock-runtime.eu-west-3.amazonaws.com/model/{MODEL_ID.replace(':', '%3A')}/converse-stream"
    body = b'{"messages":[]}'
    signed = SigV4Signer().sign("POST", url, {"content-type": "application/json"}, body)
    auth = parse_authorization(signed["Authorization"])
    assert (auth["key"], auth["region"], auth["service"]) == (ACCESS_KEY, "eu-west-3", "bedrock")
    assert AMZ_DATE.match(signed["X-Amz-Date"]) and signed["X-Amz-Date"].startswith(auth["date"])
    assert "x-amz-date" in auth["signed"].split(";") and "content-type" in auth["signed"].split(";")
    assert "X-Amz-Security-Token" not in signed
    headers = {**signed, "host": "bedrock-runtime.eu-west-3.amazonaws.com"}
    path = url.split(".com", 1)[1]
    assert auth["signature"] == expected_signature(
        method="POST", raw_path=path, query="", headers=headers, body=body, secret_key=SECRET_KEY
    )
    # Any change to the signed bytes changes the signature.
    assert auth["signature"] != expected_signature(
        method="POST", raw_path=path, query="", headers=headers, body=body + b" ", secret_key=SECRET_KEY
    )


def test_session_token_is_sent_and_missing_credentials_are_explained(
    aws_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(AuthUnavailable, match="No AWS credentials were found for Amazon Bedrock"):
        SigV4Signer().sign("POST", URL, {}, b"")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    monkeypatch.setenv("AWS_SESSION_TOKEN", "session-token-value")
    signed = SigV4Signer().sign("POST", URL, {}, b"")
    assert signed["X-Amz-Security-Token"] == "session-token-value"
    assert "x-amz-security-token" in parse_authorization(signed["Authorization"])["signed"]


def test_signing_region() -> None:
    assert signing_region("https://bedrock-runtime-fips.us-gov-west-1.amazonaws.com/x", {}) == "us-gov-west-1"
    assert (
        signing_region("https://vpce-1.bedrock-runtime.example.internal/x", {"AWS_REGION": "ap-south-1"})
        == "ap-south-1"
    )
    assert signing_region("http://127.0.0.1:9/x", {"AWS_DEFAULT_REGION": "eu-north-1"}) == "eu-north-1"
    assert signing_region("http://127.0.0.1:9/x", {}) == "us-east-1"
    arn = "arn:aws:bedrock:ca-central-1:123456789012:application-inference-profile/abc"
    assert signing_region("http://127.0.0.1:9/x", {"AWS_REGION": "us-west-2"}, arn) == "ca-central-1"


def test_missing_botocore_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "botocore.auth", None)  # the import system's "not installed"
    signer = SigV4Signer(static_credentials(ACCESS_KEY, SECRET_KEY))
    with pytest.raises(MissingExtra, match=re.escape("pip install 'pi-desktop[bedrock]'")):
        signer.sign("POST", URL, {}, b"")


def test_which_requests_get_signed(aws_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    api = "bedrock-converse-stream"
    assert CloudAuth().authorizer(api, URL, {"authorization": "Bearer key"}) is None  # an API key
    assert CloudAuth.offline().authorizer(api, URL, {}) is None  # no ambient credentials offline
    assert CloudAuth().authorizer("anthropic-messages", URL, {}) is None
    monkeypatch.setenv("AWS_BEDROCK_SKIP_AUTH", "1")
    skip = CloudAuth.offline().authorizer(api, URL, {})
    assert skip is not None  # pi-ai signs with dummy keys for proxies that authenticate elsewhere
    assert "Credential=dummy-access-key/" in skip("POST", URL, {}, b"")["Authorization"]
    assert projection_env({"AWS_REGION": "x", "AWS_SECRET_ACCESS_KEY": "s", "GOOGLE_CLOUD_PROJECT": "p"}) == {
        "AWS_REGION": "x",
        "GOOGLE_CLOUD_PROJECT": "p",
    }


# -- through the emulator ------------------------------------------------------------------


@pytest.fixture
def auth_emu() -> Iterator[Emulator]:
    with Emulator(require_auth=True) as emulator:
        yield emulator


def _request(emu: Emulator, text: str) -> tuple[Any, dict[str, Any]]:
    resolved = resolve_model(emulator_route(ROUTE, emu.url, emulated=True))
    messages = [
        {"role": "system", "content": "You are a careful assistant. " * 200, "timestamp": 0},
        {"role": "user", "content": text, "timestamp": 1},
    ]
    return project(resolved.model, messages, RequestOptions(api_key=CREDENTIAL_PLACEHOLDER)), resolved.model


def test_bearer_key_replaces_signing(auth_emu: Emulator) -> None:
    request, model = _request(auth_emu, "hello")
    assert request.headers["authorization"] == f"Bearer {CREDENTIAL_PLACEHOLDER}"  # the preview holds no key
    dispatcher = HttpDispatcher(lambda: "bedrock-api-key-123", cloud=CloudAuth.offline())
    message = dispatcher(request, model, on_event=lambda e: None, cancel=threading.Event())
    assert message["stopReason"] == "stop", message.get("errorMessage")
    sent = auth_emu.requests[-1].headers
    assert sent["authorization"] == "Bearer bedrock-api-key-123" and "x-amz-date" not in sent


def test_unsigned_request_is_refused_when_auth_is_required(auth_emu: Emulator) -> None:
    request, model = _request(auth_emu, "hello")
    dispatcher = HttpDispatcher(lambda: None, cloud=CloudAuth.offline())
    message = dispatcher(request, model, on_event=lambda e: None, cancel=threading.Event())
    assert message["stopReason"] == "error"
    assert message["errorMessage"].startswith("Amazon Bedrock API error (401): No API key was sent")


def test_faults_over_the_event_stream(emu: Emulator) -> None:
    request, model = _request(emu, "hello [[words:30]]")
    wire = WireRequest(request.url, request.body_bytes, {"content-type": "application/json"})
    emu.inject(Fault("malformed", at_event=2))
    message = send_streaming(wire, model=model)
    assert message["stopReason"] == "error" and "CRC32 mismatch" in message["errorMessage"]
    emu.inject(Fault("truncate", after_events=4))
    message = send_streaming(wire, model=model)
    assert message["errorMessage"] == "Bedrock stream ended without a stop reason"
    emu.inject(Fault("rate_limit", retry_after=0), times=1)
    message = send_streaming(wire, model=model, policy=RetryPolicy(max_retries=2, base_delay=0))
    assert message["stopReason"] == "stop"
    assert [r.status for r in emu.requests[-2:]] == [429, 200]
    assert emu.requests[-2].fault == "rate_limit"


def test_signed_turns_through_the_session_runtime(tmp_path: Path, auth_emu: Emulator, aws_env: None) -> None:
    auth = CloudAuth(aws_credentials=static_credentials(ACCESS_KEY, SECRET_KEY), ambient=False)
    cfg = config(auth_emu, tmp_path / "ws", ROUTE, cloud_auth=auth)
    (cfg.workspace / "notes.txt").write_text("remember the milk", encoding="utf-8")
    path = tmp_path / "session.jsonl"
    with open_(path, cfg) as session:
        first = session.runtime.run_turn("hello there " + "padding " * 600)
        assert first.stopped == "stop", first.error
        assert first.assistant[-1]["content"][0]["text"].startswith("Echo: hello there")
        call = json.dumps({"path": "notes.txt"})
        second = session.runtime.run_turn(f"please read [[tool:read {call}]]")
        assert second.requests == 2 and second.stopped == "stop", second.error
        assert "remember the milk" in second.assistant[-1]["content"][0]["text"]

    assistants = [*first.assistant, *second.assistant]
    assert all(
        m["api"] == "bedrock-converse-stream" and m["provider"] == "amazon-bedrock" for m in assistants
    )
    usage = [m["usage"] for m in assistants]
    assert usage[0]["cacheRead"] == 0 and usage[0]["cacheWrite"] > 0  # written at the cache points
    assert usage[-1]["cacheRead"] > usage[0]["cacheWrite"] // 2 > 0  # and read back later
    assert all(u["totalTokens"] == u["input"] + u["output"] + u["cacheRead"] + u["cacheWrite"] for u in usage)

    recorded = [r for r in auth_emu.requests if r.wire == "bedrock"]
    assert len(recorded) == 3 and all(r.status == 200 for r in recorded)
    assert recorded[0].path == f"/amazon-bedrock/model/{MODEL_ID.replace(':', '%3A')}/converse-stream"
    for r in recorded:
        auth = parse_authorization(r.headers["authorization"])
        assert (auth["key"], auth["region"], auth["service"]) == (ACCESS_KEY, "us-east-1", "bedrock")
        assert auth["signature"] == expected_signature(
            method="POST",
            raw_path=r.path,
            query=r.query,
            headers=r.headers,
            body=r.body,
            secret_key=SECRET_KEY,
        )
    journal = path.read_text(encoding="utf-8")
    assert SECRET_KEY not in journal and "AWS4-HMAC-SHA256" not in journal


def test_no_credentials_ends_the_turn_before_any_request(aws_env: None, emu: Emulator) -> None:
    request, model = _request(emu, "hello")
    dispatcher = HttpDispatcher(lambda: None, cloud=CloudAuth())  # ambient: botocore's default chain
    message = dispatcher(request, model, on_event=lambda e: None, cancel=threading.Event())
    assert message["stopReason"] == "error"
    assert message["errorMessage"].startswith("Amazon Bedrock: No AWS credentials were found")
    assert emu.requests == []
