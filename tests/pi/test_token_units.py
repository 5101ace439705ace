"""Token counts in the route's units where its tokenizer is public (design P12).

"hello world, this is a tokenizer test." is 9 tokens in OpenAI's o200k_base (hello, " world",
",", " this", " is", " a", " tokenizer", " test", ".") and 38 characters, 10 by the character
rule. Calibration after a reply: the reported prefix is the provider's figure; only what the
next request adds is counted, with o200k_base on an OpenAI route.
"""

from __future__ import annotations

import orjson

from desktop.pi.token_units import CHARACTER_RULE, count_tokens
from desktop.session.inspector.preview import calibrated_units

TEXT = "hello world, this is a tokenizer test."
OPENAI = {"provider": "openai", "id": "gpt-5.5", "api": "openai-responses"}
ANTHROPIC = {"provider": "anthropic", "id": "claude-opus-5-5", "api": "anthropic-messages"}


def test_openai_routes_count_with_o200k_base_and_others_by_the_character_rule() -> None:
    assert count_tokens(OPENAI, TEXT) == (9, "o200k_base")
    assert count_tokens(ANTHROPIC, TEXT) == (10, CHARACTER_RULE)


def test_a_special_token_spelled_in_a_file_is_counted_as_text() -> None:
    tokens, method = count_tokens(OPENAI, "before <|endoftext|> after")
    assert method == "o200k_base" and tokens > 3


def _body(*texts: str) -> bytes:
    items = [{"role": "user" if i % 2 == 0 else "assistant", "content": t} for i, t in enumerate(texts)]
    return orjson.dumps({"model": "gpt-5.5", "input": items})


def test_after_a_reply_only_the_added_part_is_estimated_in_openai_units() -> None:
    held = _body("first question " * 50)
    body = _body("first question " * 50, "an answer", TEXT)
    reply = {
        "role": "assistant",
        "provider": "openai",
        "model": "gpt-5.5",
        "usage": {"input": 700, "cacheRead": 0},
    }
    units = calibrated_units([reply], OPENAI, [held], total=0, body=body)
    added = '{"content":"an answer","role":"assistant"}\n{"content":"' + TEXT + '","role":"user"}\n'
    assert units["kind"] == "calibrated" and units["reported"] == 700
    assert units["method"] == "o200k_base"
    assert units["estimated"] == count_tokens(OPENAI, added)[0] < (len(added) + 3) // 4
    assert units["total"] == 700 + units["estimated"]
    assert "o200k_base" in units["note"]


def test_without_a_reply_the_whole_prompt_is_estimated_and_says_how() -> None:
    units = calibrated_units([], OPENAI, [], total=0, body=_body(TEXT))
    assert units["kind"] == "estimated" and units["method"] == "o200k_base"
    assert units["total"] == count_tokens(OPENAI, '{"content":"' + TEXT + '","role":"user"}\n')[0]
    anthropic = calibrated_units([], ANTHROPIC, [], total=12, body=b'{"messages": []}')
    assert anthropic == {
        "kind": "estimated",
        "total": 12,
        "method": CHARACTER_RULE,
        "note": f"estimated: {CHARACTER_RULE}",
    }
