"""The pure streaming layer: SSE decoding, partial JSON, truncation safety, cost."""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path
from types import FrameType
from typing import Any

import orjson
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from desktop.pi.cost import calculate_cost
from desktop.pi.streaming import SseDecoder, SseEvent, parse_streaming_json, parser_for
from tests.wire.test_pi_ai_conformance import case_model, parse_in_chunks

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "wire"
STREAMS = [c for c in orjson.loads((FIXTURES / "streams.json").read_bytes()) if "-cut" not in c["name"]]


def _decode(chunks: list[bytes]) -> list[SseEvent]:
    decoder = SseDecoder()
    events: list[SseEvent] = []
    for chunk in chunks:
        events += decoder.feed(chunk)
    return events + decoder.close()


def test_sse_fields_comments_and_line_endings() -> None:
    raw = b': keep-alive\r\nevent: a\r\ndata: one\r\ndata:two\r\n\r\nevent: b\rdata: {"x": 1}\r\rdata: last'
    assert _decode([raw]) == [SseEvent("a", "one\ntwo"), SseEvent("b", '{"x": 1}'), SseEvent(None, "last")]


def test_multibyte_characters_split_across_chunks() -> None:
    data = 'data: {"t": "café 😀"}\n\n'.encode()
    chunks = [data[i : i + 1] for i in range(len(data))]
    assert _decode(chunks) == [SseEvent(None, '{"t": "café 😀"}')]


def _reference(body: str) -> list[SseEvent]:
    """The field rules applied line by line to the whole body at once (no chunks, no fast path)."""
    events: list[SseEvent] = []
    name: str | None = None
    data: list[str] = []
    lines = body.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    for line in [*lines, ""]:
        if not line:
            if name is not None or data:
                events.append(SseEvent(name, "\n".join(data)))
            name, data = None, []
        elif not line.startswith(":"):
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "data":
                data.append(value)
            elif field == "event":
                name = value
    return events


_LINES = st.sampled_from(
    [
        "event: message_start",
        "event:delta",
        "event: a:b",
        'data: {"x": 1}',
        "data:tight",
        "data: ",
        "data",
        ": keep-alive",
        "id: 7",
        "data: café 😀",
        "data: [DONE]",
    ]
)


@settings(max_examples=200, deadline=None)
@given(
    events=st.lists(st.lists(_LINES, min_size=1, max_size=4), max_size=12),
    gaps=st.lists(st.integers(1, 3), min_size=12, max_size=12),
    cuts=st.lists(st.integers(min_value=0, max_value=600), max_size=20),
    crlf=st.booleans(),
)
@example(events=[["data: x"], ["data: y"]], gaps=[2] * 12, cuts=[8], crlf=False)  # blank line cut in two
def test_sse_decoding_matches_the_field_rules(
    events: list[list[str]], gaps: list[int], cuts: list[int], crlf: bool
) -> None:
    """Every event shape and blank-line run, cut anywhere, LF-only or CRLF (design D2)."""
    body = "".join("\n".join(lines) + "\n" * gap for lines, gap in zip(events, gaps, strict=False))
    body = body.replace("\n", "\r\n") if crlf else body
    data = body.encode()
    points = sorted({min(c, len(data)) for c in cuts} | {0, len(data)})
    assert _decode([data[a:b] for a, b in itertools.pairwise(points)]) == _reference(body)
    if not crlf:  # and each event comes out with the chunk that holds its blank line
        decoder, out = SseDecoder(), []
        for a, b in itertools.pairwise(points):
            out += decoder.feed(data[a:b])
            prefix = data[:b].decode(errors="ignore")
            assert out == _reference(prefix[: prefix.rfind("\n\n") + 1])


PARTIAL_CASES = json.loads((FIXTURES / "partial_json.json").read_text(encoding="utf-8"))  # lone surrogates


def _js_numbers(value: Any) -> Any:
    """JavaScript has one number type: 2.0 and 2 are the same value."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _js_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_js_numbers(v) for v in value]
    return value


def _same_json(ours: Any, theirs: Any) -> bool:
    return json.dumps(_js_numbers(ours), sort_keys=True) == json.dumps(_js_numbers(theirs), sort_keys=True)


def test_partial_json_matches_pi_ai_on_every_prefix() -> None:
    mismatches = [
        (case["input"], parse_streaming_json(case["input"]), case["output"])
        for case in PARTIAL_CASES
        if not _same_json(parse_streaming_json(case["input"]), case["output"])
    ]
    assert mismatches == [], mismatches[:5]
    assert len(PARTIAL_CASES) > 300


def test_incremental_reading_equals_a_full_reparse_after_every_delta() -> None:
    from desktop.pi.streaming.partial_json import StreamingJson

    for doc in {case["input"] for case in PARTIAL_CASES if len(case["input"]) > 60}:
        for size in (1, 3, 11):
            stream = StreamingJson()
            for i in range(0, len(doc), size):
                got = stream.append(doc[i : i + size])
                assert _same_json(got, parse_streaming_json(doc[: i + size])), doc[: i + size]


@settings(max_examples=60, deadline=None)
@given(
    value=st.recursive(
        st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=8),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
        max_leaves=8,
    ),
    size=st.integers(1, 7),
)
def test_incremental_reading_matches_on_random_documents(value: Any, size: int) -> None:
    from desktop.pi.streaming.partial_json import StreamingJson

    doc = json.dumps({"v": value}, ensure_ascii=bool(size % 2))
    stream = StreamingJson()
    for i in range(0, len(doc), size):
        assert _same_json(stream.append(doc[i : i + size]), parse_streaming_json(doc[: i + size]))


def test_partial_json_scans_a_long_string_without_a_python_loop_per_character() -> None:
    """A cut-off file write is read in the same number of Python lines at 1 KB as at 200 KB:
    string literals are scanned in C, so re-reading long arguments stays linear."""

    def lines_run(text: str) -> int:
        count = 0

        def trace(frame: FrameType, event: str, arg: object) -> Any:
            nonlocal count
            count += event == "line"
            return trace

        sys.settrace(trace)
        try:
            assert parse_streaming_json(text)["path"] == "big.txt"
        finally:
            sys.settrace(None)
        return count

    short, long = (
        orjson.dumps({"path": "big.txt", "content": "x" * n}).decode()[:-5] for n in (1000, 200_000)
    )
    assert lines_run(long) == lines_run(short)


_PI_AI = orjson.loads((FIXTURES / "pi_ai_results.json").read_bytes())
#: Streams pi-ai itself reads as complete answers.
COMPLETE_STREAMS = [c for c in STREAMS if _PI_AI[c["name"]]["message"]["stopReason"] != "error"]


@pytest.mark.parametrize("case", COMPLETE_STREAMS, ids=[c["name"] for c in COMPLETE_STREAMS])
def test_a_cut_stream_is_never_presented_as_complete(case: dict[str, Any]) -> None:
    """Cut anywhere: either an error stop, or (cut after the terminal event) the full answer."""
    model = case_model(case)
    data = case["sse"].encode()
    complete, _ = parse_in_chunks(model, data, len(data) + 1)
    assert complete["stopReason"] in ("stop", "toolUse", "length")
    step = max(1, len(data) // 97)
    for cut in range(0, len(data), step):
        parser = parser_for(model, timestamp=0)
        events = parser.feed(data[:cut]) + parser.finish()
        message = parser.result()
        assert events[-1]["type"] in ("done", "error")
        if events[-1]["type"] == "done":
            assert message["content"] == complete["content"], f"cut at {cut} looked complete"
            assert message["stopReason"] == complete["stopReason"]
        else:
            assert message["stopReason"] == "error" and message["errorMessage"]


def test_abort_after_partial_output_keeps_content_but_not_completion() -> None:
    case = next(c for c in STREAMS if c["api"] == "anthropic-messages" and c["name"].endswith("-tool"))
    parser = parser_for(case_model(case))
    data = case["sse"].encode()
    parser.feed(data[: len(data) * 2 // 3])
    events = parser.abort()
    assert [e["type"] for e in events] == ["error"]
    message = parser.result()
    assert message["stopReason"] == "aborted" and message["errorMessage"] == "Request was aborted"
    assert message["content"], "what arrived before the abort is kept for the transcript"
    assert parser.feed(data) == [] and parser.finish() == []


def test_unknown_api_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="No stream parser for API 'pi-messages'"):
        parser_for({"id": "m", "api": "pi-messages", "provider": "pi"})


# -- cost ---------------------------------------------------------------------------------

MODEL = {
    "cost": {
        "input": 3.0,
        "output": 15.0,
        "cacheRead": 0.3,
        "cacheWrite": 3.75,
        "tiers": [
            {"inputTokensAbove": 200_000, "input": 6.0, "output": 22.5, "cacheRead": 0.6, "cacheWrite": 7.5},
            {"inputTokensAbove": 100_000, "input": 4.0, "output": 20.0, "cacheRead": 0.4, "cacheWrite": 5.0},
        ],
    }
}


def _usage(
    fresh: int, out: int, read: int = 0, write: int = 0, write_1h: int | None = None
) -> dict[str, Any]:
    usage: dict[str, Any] = {"input": fresh, "output": out, "cacheRead": read, "cacheWrite": write}
    if write_1h is not None:
        usage["cacheWrite1h"] = write_1h
    return usage


def test_cost_uses_base_rates_per_million() -> None:
    base = {"cost": {k: v for k, v in MODEL["cost"].items() if k != "tiers"}}
    cost = calculate_cost(base, _usage(1_000_000, 1_000_000, 1_000_000, 1_000_000))
    assert cost == pytest.approx(
        {"input": 3.0, "output": 15.0, "cacheRead": 0.3, "cacheWrite": 3.75, "total": 22.05}
    )


def test_the_highest_exceeded_tier_prices_the_whole_request() -> None:
    # 150k input in total (fresh + reads + writes) exceeds only the 100k tier.
    cost = calculate_cost(MODEL, _usage(50_000, 1_000, read=90_000, write=10_000))
    assert cost["input"] == pytest.approx(50_000 * 4.0 / 1e6)
    assert cost["output"] == pytest.approx(1_000 * 20.0 / 1e6)
    assert cost["cacheRead"] == pytest.approx(90_000 * 0.4 / 1e6)
    # Exactly at a threshold is not above it.
    at = calculate_cost(MODEL, _usage(100_000, 0))
    assert at["input"] == pytest.approx(100_000 * 3.0 / 1e6)
    top = calculate_cost(MODEL, _usage(250_000, 0))
    assert top["input"] == pytest.approx(250_000 * 6.0 / 1e6)


def test_one_hour_cache_writes_cost_twice_the_input_price() -> None:
    cost = calculate_cost(MODEL, _usage(0, 0, write=3_000, write_1h=1_000))
    assert cost["cacheWrite"] == pytest.approx((2_000 * 3.75 + 1_000 * 3.0 * 2) / 1e6)


def test_a_model_without_prices_costs_nothing() -> None:
    assert calculate_cost({}, _usage(10, 10))["total"] == 0
