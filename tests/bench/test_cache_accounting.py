"""The cache economics benchmark's accounting, checked against figures worked out by hand.

Tiny conversations are sent to the real emulator over loopback and measured with the
benchmark's own functions; the expected numbers are literals derived below from the
emulator's documented rules (docs/emulator.md): 4 characters per token over canonical JSON
(sorted keys, ``cache_control`` removed), DeepSeek prefix caching in 64-token steps from 64
tokens, Anthropic breakpoint caching from 1024 tokens for claude-opus-5-5.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from desktop.bench.accounting import new_tokens, summarize
from desktop.bench.cache_model import PromptShape, prompt_shape
from desktop.bench.sending import measure
from desktop.emulator import Emulator
from desktop.host.providers.request import WireRequest
from desktop.pi.routes import emulator_route, resolve_model

REPO = Path(__file__).resolve().parents[2]


def chat(emu: Emulator, *messages: tuple[str, str]) -> WireRequest:
    body = {
        "model": "deepseek-flash",
        "stream": True,
        "stream_options": {"include_usage": True},
        "messages": [{"role": role, "content": content} for role, content in messages],
    }
    return WireRequest(url=emu.base_url("deepseek") + "/chat/completions", body=orjson.dumps(body))


def test_deepseek_prefix_cache_accounting_by_hand(emulator: Emulator) -> None:
    # The chat prompt is one canonical line per message:
    #   {"content":"<text>","role":"user"}\n        = 12 + len + 16 + 1 = len + 29 characters
    #   {"content":"<text>","role":"assistant"}\n   = 12 + len + 21 + 1 = len + 34 characters
    # user A*995 -> 1024 chars = 256 tokens; assistant B*222 -> 256 chars; user C*227 -> 256 chars.
    #
    # 1. [A]        1024 chars = 256 tokens, cold: cached 0, uncached 256.
    # 2. [A, B, C]  1536 chars = 384 tokens; its first 1024 chars are request 1's prompt, whose
    #               64-token boundaries (64..256) are stored: cached 256, uncached 128.
    # 3. [Z, B, C]  a rewritten front (like a fold): 384 tokens, the first 64-token step already
    #               differs: cached 0, uncached 384.
    # Totals: input 1024, cached 256, uncached 768 (cold 256 + later 512), hit ratio 0.25.
    # Minimum: 256 (all new) + 128 (past the 1024 shared chars) + (384 - 12 // 4) = 381
    #          (request 3 shares only '{"content":"' = 12 chars) -> 765.
    # Cost (deepseek-flash: input $0.30, cache read $0.006 per million):
    #   768 * 0.30e-6 + 256 * 0.006e-6 = 0.0002304 + 0.000001536 = 0.000231936.
    model = resolve_model(emulator_route("deepseek/deepseek-flash", emulator.url, emulated=True)).model
    a, b, c, z = "A" * 995, "B" * 222, "C" * 227, "Z" * 995
    requests = [
        chat(emulator, ("user", a)),
        chat(emulator, ("user", a), ("assistant", b), ("user", c)),
        chat(emulator, ("user", z), ("assistant", b), ("user", c)),
    ]
    sent = measure(requests, model)  # type: ignore[arg-type]

    assert [(s.figures.total, s.figures.cached, s.figures.uncached) for s in sent] == [
        (256, 0, 256),
        (384, 256, 128),
        (384, 0, 384),
    ]
    shapes = [prompt_shape("openai-completions", s.body) for s in sent]
    assert [len(shape.text or "") for shape in shapes] == [1024, 1536, 1536]
    assert new_tokens(shapes) == [256, 128, 381]

    summary = summarize([s.figures for s in sent], sum(new_tokens(shapes)))
    assert (summary.cold_uncached, summary.later_uncached) == (256, 512)
    assert (summary.total_input, summary.cached, summary.uncached) == (1024, 256, 768)
    assert summary.hit_ratio == 0.25
    assert summary.minimum == 765
    assert summary.cost == pytest.approx(0.000231936, rel=1e-12)


def anthropic(emu: Emulator, user_text: str) -> WireRequest:
    body = {
        "model": "claude-opus-5-5",
        "stream": True,
        "max_tokens": 64,
        "system": [{"type": "text", "text": "S" * 4064, "cache_control": {"type": "ephemeral"}}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": user_text}]}],
    }
    return WireRequest(url=emu.base_url("anthropic") + "/v1/messages", body=orjson.dumps(body))


def test_anthropic_breakpoint_accounting_by_hand(emulator: Emulator) -> None:
    # Blocks in cache order, each measured as its own canonical text:
    #   system:{"text":"S*4064","type":"text"}  = 7 + 9 + 4064 + 16 = 4096 chars = 1024 tokens,
    #       carrying the only breakpoint (cache_control is not counted);
    #   user:{"text":"hi","type":"text"}        = 5 + 9 + 2 + 16 = 32 chars = 8 tokens.
    # 1. cold: the 1024-token prefix at the breakpoint reaches opus-5-5's 1024 minimum, so it is
    #    written: cacheWrite 1024, fresh 8 -> uncached 1032 (writes are processed uncached).
    # 2. same system, user "yo": the breakpoint reads 1024, writes nothing new, fresh 8.
    # Totals: input 2064, cached 1024, uncached 1040 (cold 1032 + later 8).
    # Minimum (block prefixes): 1032 + (1032 - 1024) = 1040 -> exactly the minimum.
    # Cost (claude-opus-5-5: input $4, cache write $5, cache read $0.20 per million):
    #   1: 8 * 4e-6 + 1024 * 5e-6   = 0.000032 + 0.005120  = 0.005152
    #   2: 8 * 4e-6 + 1024 * 0.2e-6 = 0.000032 + 0.0002048 = 0.0002368  -> 0.0053888.
    model = resolve_model(emulator_route("anthropic/claude-opus-5-5", emulator.url, emulated=True)).model
    sent = measure([anthropic(emulator, "hi"), anthropic(emulator, "yo")], model)  # type: ignore[arg-type]

    assert [(s.figures.total, s.figures.cached, s.figures.written, s.figures.uncached) for s in sent] == [
        (1032, 0, 1024, 1032),
        (1032, 1024, 0, 8),
    ]
    assert [s.figures.cost for s in sent] == pytest.approx([0.005152, 0.0002368], rel=1e-12)
    shapes = [prompt_shape("anthropic-messages", s.body) for s in sent]
    assert [shape.tokens for shape in shapes] == [1032, 1032]
    summary = summarize([s.figures for s in sent], sum(new_tokens(shapes)))
    assert (summary.cold_uncached, summary.later_uncached, summary.total_input) == (1032, 8, 2064)
    assert summary.minimum == 1040 and summary.over_minimum == 1.0
    assert summary.cost == pytest.approx(0.0053888, rel=1e-12)


def test_minimum_takes_the_longest_prefix_shared_with_any_earlier_request() -> None:
    # Text prompts: characters shared // 4 are free; "abcd"*3 then a return to the first prompt's
    # prefix after a detour: the third request shares 8 chars with the first, 0 with the second.
    text = [PromptShape(text="abcdabcd"), PromptShape(text="zzzz"), PromptShape(text="abcdabcdEFGH")]
    assert new_tokens(text) == [2, 1, 1]
    # Block prompts: only whole-block prefixes count (a shared first half of a block does not).
    blocks = [
        PromptShape(blocks=("tool:aaaa", "system:bbbb")),  # 3 + 3 tokens
        PromptShape(blocks=("tool:aaaa", "system:bbXX", "user:cc")),  # shares only block 1
        PromptShape(blocks=("tool:aaaa", "system:bbbb", "user:cc")),  # shares blocks 1-2
    ]
    assert new_tokens(blocks) == [6, 3 + 2, 2]
    with pytest.raises(ValueError, match="at least one request"):
        summarize([], 0)


def test_bench_cache_command_writes_the_report_from_an_installed_package(tmp_path: Path) -> None:
    """The package alone, copied away from the checkout (no ``benchmarks/``, no ``docs/``),
    runs the benchmark and writes the report into the current directory."""
    site = tmp_path / "site"
    shutil.copytree(REPO / "desktop", site / "desktop", ignore=shutil.ignore_patterns("__pycache__"))
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "PYTHONPATH": str(site), "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run(
        [sys.executable, "-m", "desktop", "bench", "cache", "--quick"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert f"wrote {work / 'cache-economics.md'}" in out.stderr
    assert "flash-fixed" in out.stderr and "(fixed)" in out.stderr and "(on-demand)" in out.stderr
    report = (work / "cache-economics.md").read_text(encoding="utf-8")
    assert "Quick mode" in report
    for heading in ("chronological against folded", "Fixed against on-demand", "Snapshot against folded"):
        assert heading in report
    png = (work / "cache-economics.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 10_000
