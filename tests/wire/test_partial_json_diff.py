"""Partial JSON read exactly as the npm ``partial-json`` 0.1.7 and pi-ai read it (design D2).

1,600 inputs (prefixes of random tool-argument documents, damaged variants) with what the real
``partial-json`` parser (``parse(text, Allow.ALL)``) and pi-ai's ``parseStreamingJson`` return,
recorded by the dev-only oracle (``scripts/oracle/partial_json_inputs.py`` and
``partial_json_diff.mjs``). The port, the streaming reader fed in random deltas, and the final
reading must all agree.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import pytest

from desktop.pi.streaming.partial_json import (
    PartialJsonError,
    StreamingJson,
    parse_partial,
    parse_streaming_json,
)

CASES: list[dict[str, Any]] = json.loads(
    (Path(__file__).resolve().parent.parent / "fixtures" / "wire" / "partial_json_diff.json").read_text(
        encoding="utf-8"
    )
)


def _untag(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"$number"}:
            return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf, "-0": -0.0}[
                value["$number"]
            ]
        return {key: _untag(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_untag(item) for item in value]
    return value


def _same(left: Any, right: Any) -> bool:
    """Equal as values that JSON.stringify writes alike: NaN equals NaN here, 1 equals 1.0, and
    -0 equals 0 (pi-ai writes both as ``0``; the port returns the integer 0)."""
    if isinstance(left, float) and isinstance(right, float) and math.isnan(left) and math.isnan(right):
        return True
    if isinstance(left, bool) or isinstance(right, bool):
        return left is right
    if isinstance(left, int | float) and isinstance(right, int | float):
        return left == right
    if isinstance(left, dict) and isinstance(right, dict):
        return list(left) == list(right) and all(_same(left[k], right[k]) for k in left)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(_same(a, b) for a, b in zip(left, right, strict=True))
    return type(left) is type(right) and left == right


def test_the_fixture_is_large_enough() -> None:
    assert len(CASES) >= 1000
    assert sum("error" in case["partial"] for case in CASES) > 20  # unreadable inputs are covered too


@pytest.mark.parametrize("chunk", range(0, len(CASES), 200))
def test_port_matches_partial_json(chunk: int) -> None:
    for case in CASES[chunk : chunk + 200]:
        expected = case["partial"]
        if "error" in expected:
            with pytest.raises((PartialJsonError, ValueError, RecursionError)):
                parse_partial(case["input"])
        else:
            assert _same(parse_partial(case["input"]), _untag(expected["value"])), case["input"]


@pytest.mark.parametrize("chunk", range(0, len(CASES), 200))
def test_streaming_reading_matches_pi_ai(chunk: int) -> None:
    rng = random.Random(chunk)
    for case in CASES[chunk : chunk + 200]:
        expected = _untag(case["streaming"])
        assert _same(parse_streaming_json(case["input"]), expected), case["input"]
        text = case["input"]
        reader = StreamingJson()
        cuts = sorted(rng.sample(range(len(text) + 1), min(len(text) + 1, 4)))
        value: Any = None
        for start, end in zip([0, *cuts], [*cuts, len(text)], strict=True):
            value = reader.append(text[start:end])
        assert reader.text == text
        assert _same(value, expected), text  # short arguments are read after every delta


def test_long_arguments_are_read_as_they_grow_and_exactly_at_the_end() -> None:
    body = "x" * 200_000
    text = json.dumps({"path": "a.txt", "content": body})
    reader = StreamingJson()
    seen = []
    for start in range(0, len(text), 100):
        seen.append(reader.append(text[start : start + 100]))
    lengths = [len(value.get("content", "")) for value in seen]
    assert lengths == sorted(lengths) and lengths[-1] >= len(body) * 0.75
    assert len(set(lengths)) < len(lengths) / 10  # read now and then, not after every delta
    assert parse_streaming_json(reader.text) == json.loads(text)
