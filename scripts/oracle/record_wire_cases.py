"""Record provider SSE streams for the pi-ai conformance fixtures (dev-only; run from the repo root).

    PYTHONPATH=. python scripts/oracle/record_wire_cases.py
    PI_AI_DIST=<pi-ai 1.0.3 dist dir> node scripts/oracle/wire_streams.mjs

The first writes ``tests/fixtures/wire/streams.json`` (emulator streams for every family
and scenario, cut-off variants, and hand-written edge cases); the second runs pi-ai's own
adapters over the same bytes and writes ``tests/fixtures/wire/pi_ai_results.json``.
``tests/wire/test_pi_ai_conformance.py`` checks that our parsers agree with pi-ai.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import httpx
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from desktop.emulator import Emulator
from tests.wire.families import FAMILIES, READ_TOOL

OUT = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "wire" / "streams.json"
COST = {"input": 3.0, "output": 15.0, "cacheRead": 0.3, "cacheWrite": 3.75, "tiers": [
    {"inputTokensAbove": 1000, "input": 6.0, "output": 22.5, "cacheRead": 0.6, "cacheWrite": 7.5}
]}  # fmt: skip

SCENARIOS = {
    "text": "Explain the parser [[think]] [[words:12]]",
    "tool": 'Read it [[tool:read {"path": "src/a.py", "lines": [1, 2, 3], "note": "caf\\u00e9 \\"q\\""}]]',
    "two_tools": '[[tool:read {"path": "a"}]] and [[tool:ls]]',
    "length": "Go on [[length]] [[words:5]]",
}
HAND_WRITTEN: list[dict[str, Any]] = [
    {
        "name": "anthropic-refusal",
        "api": "anthropic-messages",
        "sse": 'event: message_start\ndata: {"type":"message_start","message":{"id":"m1","model":"claude-x","usage":{"input_tokens":5,"output_tokens":1}}}\n\n'
        'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n'
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"No."}}\n\n'
        'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
        'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"refusal","stop_details":{"explanation":"Not allowed"}},"usage":{"output_tokens":2}}\n\n'
        'event: message_stop\ndata: {"type":"message_stop"}\n\n',
    },
    {
        "name": "anthropic-error-event",
        "api": "anthropic-messages",
        "sse": 'event: message_start\ndata: {"type":"message_start","message":{"id":"m1","model":"claude-x","usage":{"input_tokens":5,"output_tokens":1}}}\n\n'
        'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n',
    },
    {
        "name": "anthropic-no-message-stop",
        "api": "anthropic-messages",
        "sse": 'event: message_start\ndata: {"type":"message_start","message":{"id":"m1","model":"claude-x","usage":{"input_tokens":5,"cache_read_input_tokens":7,"output_tokens":1}}}\n\n'
        'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t1","name":"read","input":{}}}\n\n'
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\\"path\\": \\"src/ma"}}\n\n',
    },
    {
        "name": "chat-content-filter",
        "api": "openai-completions",
        "sse": 'data: {"id":"c1","model":"gpt-x","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}\n\n'
        'data: {"id":"c1","model":"gpt-x","choices":[{"index":0,"delta":{},"finish_reason":"content_filter"}]}\n\n'
        "data: [DONE]\n\n",
    },
    {
        "name": "chat-no-finish-reason",
        "api": "openai-completions",
        "sse": 'data: {"id":"c1","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}\n\ndata: [DONE]\n\n',
    },
    {
        "name": "chat-error-payload",
        "api": "openai-completions",
        "sse": 'data: {"id":"c1","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}\n\n'
        'data: {"error":{"message":"upstream overloaded","type":"server_error"}}\n\n',
    },
    {
        "name": "chat-deepseek-usage",
        "api": "openai-completions",
        "provider": "deepseek",
        "sse": 'data: {"id":"c1","model":"deepseek-chat","choices":[{"index":0,"delta":{"reasoning_content":"hmm"},"finish_reason":null}]}\n\n'
        'data: {"id":"c1","choices":[{"index":0,"delta":{"content":"ok","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"ls","arguments":"{\\"dir\\":"}}]},"finish_reason":null}]}\n\n'
        'data: {"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":" \\"src\\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":2000,"completion_tokens":9,"total_tokens":2009,"prompt_cache_hit_tokens":1536,"prompt_cache_miss_tokens":464}}\n\n'
        "data: [DONE]\n\n",
    },
    {
        "name": "responses-failed",
        "api": "openai-responses",
        "sse": 'event: response.created\ndata: {"type":"response.created","response":{"id":"r1","status":"in_progress"}}\n\n'
        'event: response.failed\ndata: {"type":"response.failed","response":{"id":"r1","status":"failed","error":{"code":"server_error","message":"boom"}}}\n\n',
    },
    {
        "name": "responses-unfinished-tool-call",
        "api": "openai-responses",
        "sse": 'event: response.output_item.added\ndata: {"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","id":"fc1","call_id":"c1","name":"read","arguments":""}}\n\n'
        'event: response.function_call_arguments.delta\ndata: {"type":"response.function_call_arguments.delta","output_index":0,"delta":"{\\"path\\":\\"x"}\n\n'
        'event: response.completed\ndata: {"type":"response.completed","response":{"id":"r1","status":"completed","service_tier":"flex","usage":{"input_tokens":1200,"input_tokens_details":{"cached_tokens":1024},"output_tokens":3,"total_tokens":1203}}}\n\n',
    },
    {
        "name": "mistral-no-done",
        "api": "mistral-conversations",
        "sse": 'data: {"id":"x1","choices":[{"index":0,"delta":{"content":[{"type":"thinking","thinking":[{"type":"text","text":"think"}]}]},"finish_reason":null}]}\n\n'
        'data: {"id":"x1","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}\n\n'
        'data: {"id":"x1","choices":[{"index":0,"delta":{"tool_calls":[{"function":{"name":"ls","arguments":{"d":1}}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":30,"completion_tokens":4,"total_tokens":34,"prompt_tokens_details":{"cached_tokens":10}}}\n\n',
    },
    {
        "name": "google-safety",
        "api": "google-generative-ai",
        "sse": 'data: {"candidates":[{"content":{"parts":[{"text":"Hm"}],"role":"model"},"finishReason":"SAFETY"}],"usageMetadata":{"promptTokenCount":9,"candidatesTokenCount":1,"totalTokenCount":10},"responseId":"g1"}\r\n\r\n',
    },
]


def _sse(*events: tuple[str | None, Any], sep: str = "\n\n", end: str = "\n\n") -> str:
    """SSE text of ``(event name or None, data)`` pairs (data other than a string as JSON)."""
    frames = []
    for name, data in events:
        text = data if isinstance(data, str) else orjson.dumps(data).decode()
        frames.append((f"event: {name}\n" if name else "") + f"data: {text}")
    return sep.join(frames) + end


_CODEX_MESSAGE = [
    (None, {"type": "response.output_item.added", "item": {"type": "message", "id": "msg_1", "role": "assistant", "status": "in_progress", "content": []}}),
    (None, {"type": "response.content_part.added", "part": {"type": "output_text", "text": ""}}),
    (None, {"type": "response.output_text.delta", "delta": "Hello"}),
    (None, {"type": "response.output_item.done", "item": {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": "Hello"}]}}),
]  # fmt: skip
_CODEX_DONE = {"type": "response.done", "response": {"status": "completed", "usage": {"input_tokens": 5, "output_tokens": 3, "total_tokens": 8, "input_tokens_details": {"cached_tokens": 0}}}}  # fmt: skip
_ANTHROPIC_START = ("message_start", {"type": "message_start", "message": {"id": "msg_test", "usage": {"input_tokens": 12, "output_tokens": 0, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}}})  # fmt: skip
_ANTHROPIC_END = [
    ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"input_tokens": 12, "output_tokens": 5, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}}),
    ("message_stop", {"type": "message_stop"}),
]  # fmt: skip
_CHAT_HELLO = [
    (None, {"id": "c1", "choices": [{"index": 0, "delta": {"content": "Hello"}, "finish_reason": None}]}),
    (None, {"id": "c1", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
]  # fmt: skip

#: Stream endings and errors, ported from pi-ai's own offline tests (``codex-stream-termination``,
#: ``anthropic-sse-parsing``) and cases of the end event followed by bytes pi-ai never reads.
PORTED: list[dict[str, Any]] = [
    {"name": "codex-crlf-frames", "api": "openai-codex-responses", "sse": _sse(*_CODEX_MESSAGE, (None, _CODEX_DONE), sep="\r\n\r\n", end="\r\n\r\n")},
    *(
        {"name": f"codex-done-{status}", "api": "openai-codex-responses", "sse": _sse((None, {"type": "response.done", "response": {"status": status}}))}
        for status in ("in_progress", "queued", "failed")
    ),
    {"name": "codex-completed-then-junk", "api": "openai-codex-responses", "sse": _sse(*_CODEX_MESSAGE, (None, _CODEX_DONE), (None, "{not json"))},
    {"name": "codex-incomplete", "api": "openai-codex-responses", "sse": _sse(*_CODEX_MESSAGE, (None, {"type": "response.incomplete", "response": {"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}}}))},
    {
        "name": "anthropic-minimal-no-final-blank-line",
        "api": "anthropic-messages",
        "sse": _sse(
            _ANTHROPIC_START,
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hello"}}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            *_ANTHROPIC_END,
            end="\n",
        ),
    },
    {
        "name": "anthropic-fallback-after-output",
        "api": "anthropic-messages",
        "sse": _sse(
            ("message_start", {"type": "message_start", "message": {"id": "msg_fallback", "model": "m", "usage": {"input_tokens": 1, "output_tokens": 0}}}),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": "partial"}}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("content_block_start", {"type": "content_block_start", "index": 1, "content_block": {"type": "fallback", "from": {"model": "m"}, "to": {"model": "m-older"}}}),
        ),
    },
    {
        "name": "anthropic-malformed-tool-json-repaired",
        "api": "anthropic-messages",
        "sse": _sse(
            _ANTHROPIC_START,
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_test", "name": "edit", "input": {}}}),
            ("content_block_delta", '{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\\"path\\":\\"A\\H\\",\\"text\\":\\"col1\tcol2\\"}"}}'),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"input_tokens": 12, "output_tokens": 5}}),
            ("message_stop", {"type": "message_stop"}),
        ),
    },
    {
        "name": "anthropic-content-block-start-content",
        "api": "anthropic-messages",
        "sse": _sse(
            _ANTHROPIC_START,
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": "Initial text"}}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": " plus delta"}}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("content_block_start", {"type": "content_block_start", "index": 1, "content_block": {"type": "thinking", "thinking": "Initial thinking", "signature": "initial signature"}}),
            ("content_block_delta", {"type": "content_block_delta", "index": 1, "delta": {"type": "thinking_delta", "thinking": " plus delta"}}),
            ("content_block_delta", {"type": "content_block_delta", "index": 1, "delta": {"type": "signature_delta", "signature": " plus delta"}}),
            ("content_block_stop", {"type": "content_block_stop", "index": 1}),
            *_ANTHROPIC_END,
        ),
    },
    {"name": "chat-done-then-junk", "api": "openai-completions", "sse": _sse(*_CHAT_HELLO, (None, "[DONE]"), (None, "{not json"))},
    {"name": "chat-finish-without-done", "api": "openai-completions", "sse": _sse(*_CHAT_HELLO)},
    {"name": "mistral-done-then-junk", "api": "mistral-conversations", "sse": _sse(*_CHAT_HELLO, (None, "[DONE]"), (None, "{not json"))},
    {"name": "responses-incomplete-no-reason", "api": "openai-responses", "sse": _sse(("response.incomplete", {"type": "response.incomplete", "response": {"id": "r1", "status": "incomplete"}}))},
]  # fmt: skip


def main() -> None:
    cases: list[dict[str, Any]] = []
    with Emulator() as emu, httpx.Client() as client:
        for family in FAMILIES:
            for scenario, text in SCENARIOS.items():
                request = family.request(emu, "You are terse.", [("user", text)], [READ_TOOL])
                response = client.post(request.url, content=request.body, headers=dict(request.headers))
                response.raise_for_status()
                sse = response.text
                base = {"api": family.api, "provider": family.provider, "model": family.model_id}
                cases.append({"name": f"{family.name}-{family.api}-{scenario}", **base, "sse": sse})
                if scenario in ("text", "tool"):
                    for fraction in (0.35, 0.7):
                        cut = int(len(sse) * fraction)
                        cases.append(
                            {
                                "name": f"{family.name}-{family.api}-{scenario}-cut{fraction}",
                                **base,
                                "sse": sse[:cut],
                            }
                        )
    for case in [*HAND_WRITTEN, *PORTED]:
        cases.append({"provider": "openai", "model": "m", **case})
    for case in cases:
        case["cost"] = COST
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_bytes(orjson.dumps(cases, option=orjson.OPT_INDENT_2) + b"\n")
    print(f"wrote {len(cases)} cases to {OUT}")


if __name__ == "__main__":
    main()
