"""JavaScript string/JSON semantics that Python-originated transcripts reach but oracle fixtures cannot.

Fixture inputs pass through ``JSON.stringify`` before Python sees them, so e.g. an integral
float never occurs there; transcripts written by Desktop itself can hold ``1.0``. Expected
values below were produced by Node (``JSON.stringify``, ``String.length``, pi-ai's shortHash).
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from desktop.pi.projection import RequestOptions, project
from desktop.pi.projection._js import (
    js_blank,
    js_length,
    js_stringify,
    sanitize_surrogates,
    short_hash,
)
from tests.session.support import reply


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"a": 1.0, "b": [2.0, 2.5], "c": "1.0"}, '{"a":1,"b":[2,2.5],"c":"1.0"}'),
        (1e16, "10000000000000000"),
        (1e21, "1e+21"),
        (1e-7, "1e-7"),
        (-0.0, "0"),
        ({"nested": {"deep": [{"x": 3.0}]}}, '{"nested":{"deep":[{"x":3}]}}'),
    ],
)
def test_js_stringify_matches_json_stringify(value: Any, expected: str) -> None:
    assert js_stringify(value) == expected


def test_js_stringify_leaves_float_free_values_alone() -> None:
    value = {"path": "a.py", "n": [1, 2]}
    assert js_stringify(value) == orjson.dumps(value).decode()


@pytest.mark.parametrize(
    ("text", "expected"),
    [("abc", "y0biex7f9bbh"), ("héllo🙈", "1l2as0416a3mad"), ("call_1|fc_abcdef+/=xyz", "pjyr1k1wtv3ls")],
)
def test_short_hash_matches_pi_ai(text: str, expected: str) -> None:
    assert short_hash(text) == expected


def test_lengths_count_utf16_units() -> None:
    assert js_length("abc") == 3
    assert js_length("é") == 1
    assert js_length("🙈") == 2


def test_sanitize_drops_lone_surrogates_and_keeps_pairs() -> None:
    assert sanitize_surrogates("a\ud83db") == "ab"
    assert sanitize_surrogates("a\ude48b") == "ab"
    assert sanitize_surrogates("a\ud83d\ude48b") == "a🙈b"
    assert sanitize_surrogates("x\udc00") == "x"
    assert sanitize_surrogates("\ud83d\ude48") == "\U0001f648"  # a pair left unjoined is joined
    assert sanitize_surrogates("plain 🙈") == "plain 🙈"


def test_blank_uses_javascript_whitespace() -> None:
    assert js_blank("") and js_blank(" \t\r\n\v\f")
    assert js_blank("\u00a0\u2003\ufeff\u3000")
    assert not js_blank("\x1c")  # Python's str.strip() would remove it; JS trim() does not
    assert not js_blank("\u0085")


def test_integral_float_arguments_serialize_like_pi_ai() -> None:
    model: Any = {
        "id": "m",
        "name": "m",
        "api": "openai-completions",
        "provider": "custom",
        "baseUrl": "http://127.0.0.1:9/v1",
        "reasoning": False,
        "input": ["text"],
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
        "contextWindow": 100000,
        "maxTokens": 1000,
    }
    call = {"type": "toolCall", "id": "c1", "name": "sleep", "arguments": {"seconds": 2.0}}
    messages: Any = [
        {"role": "user", "content": "go", "timestamp": 1},
        reply([call], 2, route={"api": "openai-completions", "provider": "custom", "model": "m"}),
        {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "sleep",
            "content": [],
            "isError": False,
            "timestamp": 3,
        },
    ]
    request = project(model, messages, RequestOptions(api_key="k", temperature=1.0))
    assert b'"arguments":"{\\"seconds\\":2}"' in request.body_bytes
    assert b'"temperature":1,' in request.body_bytes or request.body_bytes.endswith(b'"temperature":1}')
