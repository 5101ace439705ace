"""The emulator's own cache rules against the providers' documented behaviour (design P11).

Figures worked by hand from the emulator's stated token count (four characters of a block's
canonical text per token), never from the product's rules module, which this test does not
import: the emulator is the independent side of every prediction check.

Anthropic: a system block ``{"text": X, "type": "text"}`` reads as ``system:`` + its sorted
JSON, 32 + len(X) characters; with len(X) = 4,064 it is 4,096 characters = 1,024 tokens. The
user turn "hi" reads as ``user:{"text":"hi","type":"text"}``, 32 characters = 8 tokens.

OpenAI chat: a message ``{"content": X, "role": "system"}`` is 30 + len(X) characters plus a
newline, the user "hi" 30 + 1; with len(X) = 4,938 the prompt is 5,000 characters = 1,250
tokens, which holds 9 whole 128-token units (1,152 tokens) and 19 whole 64-token units (1,216).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from desktop import emulator
from desktop.emulator.provider_cache import ProviderCache, Usage, blocks_of, policy_for

MIN = 60_000
HOUR = 60 * MIN


def _anthropic(system_chars: int = 4064, ttl: str | None = None, extra_users: int = 0) -> dict[str, Any]:
    marker: dict[str, Any] = {"type": "ephemeral"}
    if ttl:
        marker["ttl"] = ttl
    blocks = [{"type": "text", "text": "hi"} for _ in range(1 + extra_users)]
    return {
        "model": "claude-sonnet-4-5",
        "system": [{"type": "text", "text": "s" * system_chars, "cache_control": marker}],
        "messages": [{"role": "user", "content": blocks}],
    }


def _send(cache: ProviderCache, wire: str, family: str, body: dict[str, Any], now: int) -> Usage:
    policy = policy_for(wire, family)
    long = body.get("prompt_cache_retention") == "24h"
    model = str(body.get("model", ""))
    return cache.send(policy, f"{family}:{model}", model, blocks_of(wire, body), now, long=long)


def test_anthropic_writes_the_marked_prefix_and_reads_it_within_five_minutes() -> None:
    cache = ProviderCache()
    first = _send(cache, "anthropic", "anthropic", _anthropic(), 0)
    assert (first.total, first.read, first.written, first.fresh) == (1032, 0, 1024, 8)
    second = _send(cache, "anthropic", "anthropic", _anthropic(), 4 * MIN)
    assert (second.read, second.written, second.fresh) == (1024, 0, 8)


def test_anthropic_each_read_refreshes_the_five_minute_lifetime() -> None:
    cache = ProviderCache()
    _send(cache, "anthropic", "anthropic", _anthropic(), 0)
    _send(cache, "anthropic", "anthropic", _anthropic(), 4 * MIN)
    # 8 minutes after the write but 4 after the read: still cached.
    assert _send(cache, "anthropic", "anthropic", _anthropic(), 8 * MIN).read == 1024
    # 6 minutes idle: gone, written again.
    late = _send(cache, "anthropic", "anthropic", _anthropic(), 14 * MIN)
    assert (late.read, late.written) == (0, 1024)


@pytest.mark.parametrize(("gap", "read"), [(59 * MIN, 1024), (61 * MIN, 0)])
def test_anthropic_one_hour_marker_lives_an_hour(gap: int, read: int) -> None:
    cache = ProviderCache()
    first = _send(cache, "anthropic", "anthropic", _anthropic(ttl="1h"), 0)
    assert (first.written, first.written_1h) == (1024, 1024)
    assert _send(cache, "anthropic", "anthropic", _anthropic(ttl="1h"), gap).read == read


def test_anthropic_prefix_below_the_model_minimum_is_not_written() -> None:
    cache = ProviderCache()
    short = _anthropic(system_chars=4060)  # 1,023 tokens, one short of 1,024
    assert _send(cache, "anthropic", "anthropic", short, 0).written == 0
    assert _send(cache, "anthropic", "anthropic", short, MIN).read == 0
    opus = {**_anthropic(), "model": "claude-opus-4-5"}  # Opus 4.5 caches from 4,096 tokens
    assert _send(cache, "anthropic", "anthropic", opus, 0).written == 0


@pytest.mark.parametrize(("added", "read"), [(19, 1032), (20, 0)])
def test_anthropic_reads_back_at_most_twenty_blocks_before_a_breakpoint(added: int, read: int) -> None:
    def body(users: int) -> dict[str, Any]:
        blocks: list[dict[str, Any]] = [{"type": "text", "text": "hi"} for _ in range(users)]
        blocks[-1] = {**blocks[-1], "cache_control": {"type": "ephemeral"}}
        return {
            "model": "claude-sonnet-4-5",
            "system": [{"type": "text", "text": "s" * 4064}],
            "messages": [{"role": "user", "content": blocks}],
        }

    cache = ProviderCache()
    assert _send(cache, "anthropic", "anthropic", body(1), 0).written == 1032
    later = _send(cache, "anthropic", "anthropic", body(1 + added), MIN)
    assert later.read == read


def _chat(system_chars: int = 4938, retention: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": "gpt-5.5",
        "messages": [
            {"role": "system", "content": "s" * system_chars},
            {"role": "user", "content": "hi"},
        ],
    }
    if retention:
        body["prompt_cache_retention"] = retention
    return body


def test_openai_reads_whole_128_token_units_within_the_in_memory_retention() -> None:
    cache = ProviderCache()
    first = _send(cache, "chat", "openai", _chat(), 0)
    assert (first.total, first.read, first.written) == (1250, 0, 0)
    assert _send(cache, "chat", "openai", _chat(), 4 * MIN).read == 1152
    assert _send(cache, "chat", "openai", _chat(), 10 * MIN).read == 0  # 6 minutes idle


@pytest.mark.parametrize(("gap", "read"), [(61 * MIN, 1152), (23 * HOUR, 1152), (25 * HOUR, 0)])
def test_openai_extended_retention_keeps_the_prefix_a_day(gap: int, read: int) -> None:
    cache = ProviderCache()
    _send(cache, "chat", "openai", _chat(retention="24h"), 0)
    assert _send(cache, "chat", "openai", _chat(retention="24h"), gap).read == read


def test_openai_prompt_under_1024_tokens_is_never_cached() -> None:
    cache = ProviderCache()
    _send(cache, "chat", "openai", _chat(system_chars=3000), 0)  # 3,062 characters: 766 tokens
    assert _send(cache, "chat", "openai", _chat(system_chars=3000), MIN).read == 0


def test_deepseek_reads_in_64_token_units_for_an_hour() -> None:
    cache = ProviderCache()
    _send(cache, "chat", "deepseek", _chat(), 0)
    assert _send(cache, "chat", "deepseek", _chat(), 59 * MIN).read == 1216
    assert _send(cache, "chat", "deepseek", _chat(), 2 * HOUR).read == 0


def test_no_emulator_module_imports_the_products_cache_rules() -> None:
    package = Path(emulator.__file__).parent
    for path in package.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith("desktop.pi.cache"), path
