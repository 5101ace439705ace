"""The Bedrock normalizer against pi-ai 1.0.3 itself, on the same recorded event-stream bytes.

``tests/fixtures/wire/bedrock_pi_ai_results.json`` holds what pi-ai's adapter (with the AWS
SDK's own event-stream reader) made of each body in ``bedrock_streams.json`` (see
``scripts/oracle/record_bedrock_streams.py`` and ``bedrock_streams.mjs``). Every case must give
the same final AssistantMessage and the same event types, whatever the chunking. Only the
wording of framing errors differs (ours names the byte offset): those compare by kind.
"""

from __future__ import annotations

import base64
import re
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.wire.test_pi_ai_conformance import _floats_close, case_model, parse_in_chunks

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "wire"
CASES = orjson.loads((FIXTURES / "bedrock_streams.json").read_bytes())
RESULTS = orjson.loads((FIXTURES / "bedrock_pi_ai_results.json").read_bytes())

_FRAMING = [
    (re.compile(r"CRC32 mismatch|checksum .* (?:did not|does not) match"), "<corrupt frame>"),
    (re.compile(r"truncated|Truncated event message"), "<truncated frame>"),
]


def _normalize(message: dict[str, Any]) -> dict[str, Any]:
    message = orjson.loads(orjson.dumps(message))
    message.pop("timestamp", None)
    for diagnostic in message.get("diagnostics", []):
        diagnostic.pop("timestamp", None)
    error = message.get("errorMessage", "")
    for pattern, kind in _FRAMING:
        if pattern.search(error):
            message["errorMessage"] = kind
    return message


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
@pytest.mark.parametrize("chunk", [5, 1 << 20])
def test_same_message_and_events_as_pi_ai(case: dict[str, Any], chunk: int) -> None:
    expected = RESULTS[case["name"]]
    message, events = parse_in_chunks(case_model(case), base64.b64decode(case["body"]), chunk)
    ours, theirs = _normalize(message), _normalize(expected["message"])
    assert _floats_close(ours, theirs), f"\nours:   {ours}\npi-ai:  {theirs}"
    assert [e["type"] for e in events] == expected["events"]


def test_fixtures_cover_the_outcomes() -> None:
    stops = {r["message"]["stopReason"] for r in RESULTS.values()}
    assert stops == {"stop", "toolUse", "length", "error"}
    errors = {_normalize(r["message"]).get("errorMessage") for r in RESULTS.values()}
    assert {"<corrupt frame>", "<truncated frame>", "Throttling error: Too many requests"} <= errors
