"""Record Bedrock event-stream bodies for the pi-ai conformance fixtures (dev-only; repo root).

    PYTHONPATH=. python scripts/oracle/record_bedrock_streams.py
    PI_AI_DIST=<pi-ai 1.0.3 dist dir> node scripts/oracle/bedrock_streams.mjs

The first writes ``tests/fixtures/wire/bedrock_streams.json`` (emulator streams for each
scenario, frames cut short or corrupted, and hand-built edge cases; bodies base64-encoded);
the second runs pi-ai's own ``bedrock-converse-stream`` adapter (the AWS SDK's event-stream
reader included) over the same bytes and writes ``bedrock_pi_ai_results.json``.
"""

from __future__ import annotations

import base64
import sys
from pathlib import Path
from typing import Any

import httpx
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from desktop.emulator import Emulator
from desktop.pi.projection import RequestOptions, project
from desktop.pi.routes import emulator_route, resolve_model
from desktop.pi.streaming.eventstream import encode_message, event_frame, exception_frame

OUT = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "wire" / "bedrock_streams.json"
MODEL = "anthropic.claude-sonnet-4-5-20250929-v1:0"
COST = {"input": 3.0, "output": 15.0, "cacheRead": 0.3, "cacheWrite": 3.75}
READ_TOOL = {
    "name": "read",
    "description": "Read a file",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
}
SCENARIOS = {
    "text": "Explain the parser [[think]] [[words:12]]",
    "tool": 'Read it [[tool:read {"path": "src/a.py", "lines": [1, 2, 3], "note": "caf\\u00e9 \\"q\\""}]]',
    "two_tools": '[[tool:read {"path": "a"}]] and [[tool:ls]]',
    "length": "Go on [[length]] [[words:5]]",
}


def ev(kind: str, payload: dict[str, Any]) -> bytes:
    return event_frame(kind, orjson.dumps(payload))


START = ev("messageStart", {"role": "assistant"})
TEXT = ev("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "partial answer"}})
HAND_BUILT: dict[str, bytes] = {
    "cache-usage-details": START
    + TEXT
    + ev("contentBlockStop", {"contentBlockIndex": 0})
    + ev("messageStop", {"stopReason": "end_turn"})
    + ev(
        "metadata",
        {
            "usage": {
                "inputTokens": 120,
                "outputTokens": 30,
                "totalTokens": 2150,
                "cacheReadInputTokens": 1500,
                "cacheWriteInputTokens": 500,
                "cacheDetails": [{"ttl": "5m", "inputTokens": 200}, {"ttl": "1h", "inputTokens": 300}],
            },
            "metrics": {"latencyMs": 5},
        },
    ),
    "usage-without-total": START
    + TEXT
    + ev("messageStop", {"stopReason": "stop_sequence"})
    + ev("metadata", {"usage": {"inputTokens": 9, "outputTokens": 4}}),
    "redacted-reasoning": START
    + ev(
        "contentBlockDelta",
        {
            "contentBlockIndex": 0,
            "delta": {
                "reasoningContent": {"redactedContent": base64.b64encode(b"\x00\x01\x02\x03\x04").decode()}
            },
        },
    )
    + ev(
        "contentBlockDelta", {"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": "ignored"}}}
    )
    + ev(
        "contentBlockDelta",
        {
            "contentBlockIndex": 0,
            "delta": {"reasoningContent": {"redactedContent": base64.b64encode(b"\xfe\xff").decode()}},
        },
    )
    + ev("contentBlockStop", {"contentBlockIndex": 0})
    + ev(
        "contentBlockDelta",
        {"contentBlockIndex": 1, "delta": {"reasoningContent": {"redactedContent": "AAEC"}}},
    )
    + ev("messageStop", {"stopReason": "end_turn"}),
    "reused-index": START
    + TEXT
    + ev("contentBlockStop", {"contentBlockIndex": 0})
    + ev("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "again"}})
    + ev("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "ignored"}}})
    + ev("messageStop", {"stopReason": "model_context_window_exceeded"}),
    "unfinished-tool": START
    + ev(
        "contentBlockStart",
        {"contentBlockIndex": 0, "start": {"toolUse": {"toolUseId": "t1", "name": "read"}}},
    )
    + ev("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": '{"path": "src/ma'}}})
    + ev("messageStop", {"stopReason": "tool_use"}),
    "guardrail": START + TEXT + ev("messageStop", {"stopReason": "guardrail_intervened"}),
    "no-stop": START + TEXT,
    "user-start": ev("messageStart", {"role": "user"}),
    "throttling": START + TEXT + exception_frame("throttlingException", b'{"message":"Too many requests"}'),
    "validation-retention": START
    + exception_frame(
        "validationException",
        b'{"message":"data retention mode \'default\' is not available for this model"}',
    ),
    "model-stream-error": START
    + exception_frame("modelStreamErrorException", b'{"message":"Model failed","originalStatusCode":500}'),
    "error-message": START
    + encode_message(
        {":message-type": "error", ":error-code": "Boom", ":error-message": "internal failure"}, b""
    ),
}


def main() -> None:
    cases: list[dict[str, Any]] = []
    with Emulator() as emu, httpx.Client() as client:
        resolved = resolve_model(emulator_route(f"amazon-bedrock/{MODEL}", emu.url, emulated=True))
        for scenario, text in SCENARIOS.items():
            messages = [
                {"role": "system", "content": "You are terse.", "timestamp": 0, "toolsAdded": [READ_TOOL]},
                {"role": "user", "content": text, "timestamp": 1},
            ]
            request = project(resolved.model, messages, RequestOptions())
            response = client.post(request.url, content=request.body_bytes, headers=request.headers)
            response.raise_for_status()
            body = response.content
            variants = {scenario: body}
            if scenario in ("text", "tool"):
                variants[f"{scenario}-cut-mid-frame"] = body[: int(len(body) * 0.6)]
                corrupt = bytearray(body)
                corrupt[len(body) // 2] ^= 0x01
                variants[f"{scenario}-corrupt"] = bytes(corrupt)
            for name, data in variants.items():
                cases.append({"name": f"emulator-{name}", "body": base64.b64encode(data).decode()})
    for name, data in HAND_BUILT.items():
        cases.append({"name": name, "body": base64.b64encode(data).decode()})
    for case in cases:
        case.update(
            {"api": "bedrock-converse-stream", "provider": "amazon-bedrock", "model": MODEL, "cost": COST}
        )
    OUT.write_bytes(orjson.dumps(cases, option=orjson.OPT_INDENT_2) + b"\n")
    print(f"wrote {len(cases)} cases to {OUT}")


if __name__ == "__main__":
    main()
