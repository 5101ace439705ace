"""What would it have cost: figures against numbers worked out by hand (design X3, P6).

The tiny pi session below has two model calls:

    request 1: [u1]               u1 = 5,000 x "a"             reply a1: 200 x "b", 50 output tokens
    request 2: [u1, a1, u2]       u2 = 500 x "c"               reply a2: 70 output tokens

Token counts are the cache rules' (4 characters per token, rounded up), over each provider's
canonical prompt text (sorted-key JSON per prompt part). The premises (part lengths) are
asserted in the tests, then every figure is checked against the arithmetic in the comments.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import orjson
import pytest

from desktop.pi.cache_rules import prompt_for_model
from desktop.pi.projection import RequestOptions, project
from desktop.session.foreign import route_model
from desktop.session.whatif import (
    DELIVERIES,
    Progress,
    WhatIfCancelled,
    _FixedView,
    changes_tools_later,
    fresh_tokens,
    request_sequence,
    views_for,
    what_if,
)
from tests.cli.helpers import run_main
from tests.foreign.support import CLAUDE, PI
from tests.session.support import reply

DEEPSEEK = {"api": "openai-completions", "provider": "deepseek", "model": "deepseek-flash"}


def assistant(text: str, output: int, ts: int) -> dict[str, Any]:
    return reply([{"type": "text", "text": text}], ts, stop="stop", route=DEEPSEEK, output=output)


def pi_session(path: Path, messages: list[dict[str, Any]]) -> Path:
    lines = [
        {"type": "session", "version": 3, "id": "tiny", "timestamp": "2026-10-01T09:00:00.000Z", "cwd": "/w"}
    ]
    parent = None
    for n, message in enumerate(messages, 1):
        entry_id = f"e{n:07d}"
        lines.append(
            {
                "type": "message",
                "id": entry_id,
                "parentId": parent,
                "timestamp": "2026-10-01T09:00:00.000Z",
                "message": message,
            }
        )
        parent = entry_id
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return path


U1 = {"role": "user", "content": "a" * 5000, "timestamp": 1}
A1 = assistant("b" * 200, 50, 2)
U2 = {"role": "user", "content": "c" * 500, "timestamp": 3}
A2 = assistant("done", 70, 4)


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    return pi_session(tmp_path / "tiny.jsonl", [U1, A1, U2, A2])


def test_the_request_sequence(tiny: Path) -> None:
    sequence = request_sequence(tiny)
    assert sequence.format == "pi" and sequence.session_id == "tiny"
    assert [[m["content"] for m in request] for request in sequence.requests] == [
        ["a" * 5000],
        ["a" * 5000, [{"type": "text", "text": "b" * 200}], "c" * 500],
    ]
    assert sequence.output_tokens == [50, 70]


def test_deepseek_flash_by_hand(tiny: Path) -> None:
    model = route_model("deepseek/deepseek-flash")
    options = RequestOptions(session_id="tiny", api_key="k")
    parts = prompt_for_model(model, project(model, [U1, A1, U2], options).body).segments  # type: ignore[list-item]
    # Premises: the chat canonical texts.
    #   u1: {"content":"<5000 a>","role":"user"}                          12 + 5000 + 16 = 5028 chars
    #   a1: {"content":"<200 b>","reasoning_content":"","role":"assistant"}  200 + 56 =  256 chars
    #   u2: {"content":"<500 c>","role":"user"}                           12 + 500 + 16 =  528 chars
    assert [len(p.text) for p in parts] == [5028, 256, 528]

    result = what_if(request_sequence(tiny), ["deepseek/deepseek-flash"])
    route = result.routes[0]
    assert route.rule.name == "deepseek" and [f.strategy for f in route.strategies] == list(DELIVERIES)
    # DeepSeek caches every whole 64-token (256-char) unit of the prompt text (parts joined by "\n").
    # Request 1: 5028 + 1 = 5029 chars -> ceil(5029 / 4) = 1258 tokens, cold: 0 read.
    #            It stores the units ending at 256, 512, ..., 4864 chars (19 units = 1216 tokens).
    # Request 2: 5029 + 257 + 529 = 5815 chars -> ceil(5815 / 4) = 1454 tokens. Its first 5029 chars
    #            are request 1's, so the 19 stored units match: 1216 tokens read, 238 fresh.
    # Input 1258 + 1454 = 2712; read 1216; uncached 1258 + 238 = 1496; writes 0;
    # hit ratio 1216 / 2712 = 0.44838.
    # Cost at $0.3 in / $1.2 out / $0.006 cache read per million:
    #   fresh 1496 x 0.3e-6 = 0.0004488; reads 1216 x 0.006e-6 = 0.000007296 -> input 0.000456096
    #   output (50 + 70) x 1.2e-6 = 0.000144 -> total 0.000600096
    # Minimum: request 1 all 1258 new; request 2 shares u1's whole part, 5029 chars -> 1257 tokens,
    # so 1454 - 1257 = 197 new: 1258 + 197 = 1455. Uncached is 41 over it (1496 / 1455 = 1.02818x).
    for figures in route.strategies:  # no system messages: the three deliveries send the same bytes
        assert figures.input_tokens == 2712
        assert figures.cache_reads == 1216
        assert figures.uncached_tokens == 1496
        assert figures.cache_writes == 0
        assert figures.hit_ratio == pytest.approx(1216 / 2712)
        assert figures.input_cost == pytest.approx(0.000456096)
        assert figures.output_cost == pytest.approx(0.000144)
        assert figures.cost == pytest.approx(0.000600096)
        assert figures.minimum == 1455 and figures.over_minimum == 41
        assert figures.minimum_ratio == pytest.approx(1496 / 1455)
        assert figures.cumulative_cost == pytest.approx(
            [1258 * 0.3e-6 + 50 * 1.2e-6, 0.000600096]  # request 1: all fresh, plus its 50 output
        )


def test_anthropic_opus_by_hand(tiny: Path) -> None:
    model = route_model("anthropic/claude-opus-5-5")
    options = RequestOptions(session_id="tiny", api_key="k")
    parts = prompt_for_model(model, project(model, [U1, A1, U2], options).body).segments  # type: ignore[list-item]
    # Premises: Anthropic caches by content block, "role:" + sorted-key JSON of the block.
    #   u1: user:{"text":"<5000 a>","type":"text"}      5 + 9 + 5000 + 16 = 5030 chars -> 1258 tokens
    #   a1: assistant:{"text":"<200 b>","type":"text"}  10 + 9 + 200 + 16 =  235 chars ->   59 tokens
    #   u2: user:{"text":"<500 c>","type":"text"}        5 + 9 + 500 + 16 =  530 chars ->  133 tokens
    # pi-ai puts the one cache_control breakpoint on the last user block.
    assert [(len(p.text), p.breakpoint) for p in parts] == [(5030, None), (235, None), (530, "5m")]

    figures = what_if(request_sequence(tiny), ["anthropic/claude-opus-5-5"]).routes[0].strategies[0]
    # Request 1: one block, 1258 tokens, breakpoint on it, >= the 1,024-token minimum: written 1258.
    # Request 2: 1258 + 59 + 133 = 1450 tokens; the breakpoint on u2 looks back and finds u1's
    #            prefix cached: read 1258, written 1450 - 1258 = 192, fresh 0.
    # Input 1258 + 1450 = 2708; read 1258; writes 1258 + 192 = 1450; uncached 2708 - 1258 = 1450.
    # Cost at $4 in / $20 out / $0.2 read / $5 write per million:
    #   writes 1450 x 5e-6 = 0.00725; reads 1258 x 0.2e-6 = 0.0002516 -> input 0.0075016
    #   output 120 x 20e-6 = 0.0024 -> total 0.0099016
    # Minimum: 1258 + (1450 - 1258) = 1450: this replay is already minimal (1.00x).
    assert (figures.input_tokens, figures.cache_reads, figures.cache_writes, figures.uncached_tokens) == (
        2708,
        1258,
        1450,
        1450,
    )
    assert figures.hit_ratio == pytest.approx(1258 / 2708)
    assert figures.input_cost == pytest.approx(0.0075016)
    assert figures.cost == pytest.approx(0.0099016)
    assert (figures.minimum, figures.over_minimum) == (1450, 0)


def test_a_system_update_breaks_the_folded_prefix_but_not_the_chronological_one(tmp_path: Path) -> None:
    sections = {"env": "cwd: /work/a", "rules": "Be brief. " * 300}
    system = {"role": "system", "content": "", "sections": sections, "timestamp": 0}
    update = {"role": "system", "content": "", "sections": {"env": "cwd: /work/b"}, "timestamp": 2}
    path = pi_session(tmp_path / "s.jsonl", [system, U1, A1, update, U2, A2])
    by_name = {
        f.strategy: f
        for f in what_if(request_sequence(path), ["deepseek/deepseek-flash"]).routes[0].strategies
    }
    chrono, folded, attributed = by_name["chronological"], by_name["folded"], by_name["attributed"]
    # Chronological appends the update in place: request 2 reads request 1's whole stored prefix.
    # Folded rewrites the leading system prompt where the changed section sits, near its start,
    # so request 2 reads at most the few units before it.
    assert chrono.cache_reads >= 1216 > folded.cache_reads
    assert folded.uncached_tokens > chrono.uncached_tokens
    assert attributed.cache_reads > 0  # the update travels as a user message where it happened
    assert chrono.minimum == folded.minimum == attributed.minimum  # one floor per route
    assert chrono.uncached_tokens >= chrono.minimum


def test_fixed_declarations_only_where_tools_change_later() -> None:
    tool_a = {"name": "a", "description": "A", "parameters": {"type": "object"}}
    tool_b = {"name": "b", "description": "B", "parameters": {"type": "object"}}
    head = {"role": "system", "content": "P", "toolsAdded": [tool_a], "timestamp": 0}
    later = {"role": "system", "content": "", "toolsAdded": [tool_b], "timestamp": 1}
    user = {"role": "user", "content": "hi", "timestamp": 2}
    messages: list[Any] = [head, user, later, user]
    assert changes_tools_later(messages) and not changes_tools_later([head, user])
    fixed = list(_FixedView([tool_a, tool_b])(messages))  # type: ignore[list-item]
    assert fixed[0]["toolsAdded"] == [tool_a, tool_b] and fixed[0]["content"] == "P"
    assert [m["role"] for m in fixed] == ["system", "user", "user"]  # the tool-only update is gone
    assert _FixedView([tool_a])([user])[0] == {  # type: ignore[list-item]
        "role": "system",
        "content": "",
        "toolsAdded": [tool_a],
        "timestamp": 0,
    }


def test_fixed_declarations_appear_in_the_table_for_a_branch_that_adds_tools() -> None:
    sequence = request_sequence(PI / "v3_branches.jsonl", leaf=None)
    names = [f.strategy for f in what_if(sequence, ["deepseek/deepseek-flash"]).routes[0].strategies]
    assert names == list(DELIVERIES)  # the current branch declares its tools once
    from desktop.session.foreign import open_foreign

    other = next(
        b for b in open_foreign(PI / "v3_branches.jsonl").branches() if b.title == "Now write a CHANGELOG."
    )
    changing = request_sequence(PI / "v3_branches.jsonl", leaf=other.leaf)
    names = [f.strategy for f in what_if(changing, ["deepseek/deepseek-flash"]).routes[0].strategies]
    assert names == [*DELIVERIES, *(f"{d}, fixed declarations" for d in DELIVERIES)]


def test_fresh_tokens_count_each_distinct_part_once(tiny: Path) -> None:
    model = route_model("anthropic/claude-opus-5-5")
    options = RequestOptions(session_id="tiny", api_key="k")
    views = views_for(model, [[U1], [U1, A1, U2], [U1, A1, U2]], "chronological", None, options)  # type: ignore[list-item]
    assert fresh_tokens(views) == [1258, 192, 0]  # a repeated request adds nothing


@pytest.mark.parametrize(
    "source", [PI / "v3_compaction.jsonl", CLAUDE / "basic.jsonl", CLAUDE / "compact.jsonl"]
)
def test_every_format_replays(source: Path) -> None:
    result = what_if(request_sequence(source), ["openai/gpt-5.5"])
    assert result.requests > 0 and result.routes[0].strategies[0].input_tokens > 0
    assert any("expire by each provider's retention" in a for a in result.assumptions)  # design P9


def test_a_desktop_session_replays(tmp_path: Path) -> None:
    from desktop.host.journal import JournalWriter

    path = tmp_path / "d.jsonl"
    route = {"provider": "deepseek", "model": "deepseek-flash", "api": "openai-completions", "baseUrl": "x"}
    with JournalWriter.create(path, cwd=tmp_path, app_version="test") as writer:
        writer.append(
            [
                {"type": "user", "v": 1, "id": "r1", "ts": 1, "message": U1},
                {"type": "assistant", "v": 1, "id": "r2", "ts": 2, "message": A1, "route": route},
                {"type": "user", "v": 1, "id": "r3", "ts": 3, "message": U2},
                {"type": "assistant", "v": 1, "id": "r4", "ts": 4, "message": A2, "route": route},
            ]
        )
    listing = sorted(p.name for p in tmp_path.iterdir())
    sequence = request_sequence(path)
    assert sequence.format == "desktop" and len(sequence.requests) == 2 and sequence.output_tokens == [50, 70]
    figures = what_if(sequence, ["deepseek/deepseek-flash"]).routes[0].strategies[0]
    assert (figures.input_tokens, figures.cache_reads) == (2712, 1216)  # the same figures as the pi file
    assert sorted(p.name for p in tmp_path.iterdir()) == listing  # reading took no lock, made no sidecar


def test_the_command_prints_the_table_and_json_with_assumptions(tiny: Path) -> None:
    run = ["whatif", str(tiny), "--routes", "deepseek/deepseek-flash,openai/gpt-5.5"]
    text = run_main(*run).stdout
    assert "deepseek/deepseek-flash" in text and "chronological" in text and "assumptions" in text
    assert "2,712" in text and "44.8%" in text  # the hand-worked deepseek figures
    data = json.loads(run_main(*run, "--json").stdout)
    deepseek = data["routes"][0]
    assert (
        deepseek["strategies"][0]["inputTokens"] == 2712 and deepseek["strategies"][0]["cacheReads"] == 1216
    )
    assert deepseek["pricesPerMillion"] == {
        "input": 0.3,
        "output": 1.2,
        "cacheRead": 0.006,
        "cacheWrite": 0.0,
    }
    assert data["catalog"]["piVersion"] and any("retention" in a for a in data["assumptions"])
    assert any("Prices" in a and "snapshot generated" in a for a in data["assumptions"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["README.md"], "it looks like text, not JSON Lines"),
        (["missing.jsonl"], "cannot be read"),
        ([str(PI / "v3_branches.jsonl"), "--routes", "nope/x"], "unknown model nope/x"),
        ([str(PI / "v3_branches.jsonl"), "--branch", "zzz"], "no entry 'zzz'"),
    ],
)
def test_the_command_fails_in_one_line(args: list[str], message: str) -> None:
    done = run_main("whatif", *args)
    assert done.code == 2 and done.stdout == ""
    assert done.stderr.startswith("pi-desktop whatif: ") and message in done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("name", "low", "high"), [("basic.jsonl", 0.75, 1.25), ("compact.jsonl", 0.75, 1.25)]
)
def test_claude_code_replay_on_the_recorded_route_is_near_the_bill(
    name: str, low: float, high: float
) -> None:
    """A Claude Code file records no system prompt or tools: the replay says so and stands in
    a prefix of the size the first request's billed input shows (held warm when that request
    read from the cache), so the replay on the recorded route lands near the recorded cost
    (without it: 0.24x and 0.09x)."""
    sequence = request_sequence(CLAUDE / name)
    data = what_if(sequence, ["anthropic/claude-sonnet-4-5"], deliveries=("chronological",)).to_json()
    assert data["systemPrompt"]["recorded"] is False and data["systemPrompt"]["estimatedTokens"] > 1000
    assert data["recorded"]["route"] == "anthropic/claude-sonnet-4-5-20250929"
    ratio = data["routes"][0]["strategies"][0]["cost"] / data["recorded"]["cost"]
    assert low <= ratio <= high, ratio


def test_a_model_without_a_price_says_price_unknown(tiny: Path) -> None:
    from desktop.cli.whatif import render

    model = {**route_model("deepseek/deepseek-flash"), "cost": {"input": 0, "output": 0}}
    result = what_if(request_sequence(tiny), ["local/free"], models={"local/free": model})  # type: ignore[dict-item]
    data = result.to_json()
    assert data["routes"][0]["priceKnown"] is False
    assert all(s["cost"] is None for s in data["routes"][0]["strategies"])
    row = next(line for line in render(result).splitlines() if line.startswith("local/free"))
    assert "price unknown" in row and "$" not in row
    assert "$/M in 0" not in render(result)  # no prices of zero either


def test_progress_covers_every_pass_and_cancel_stops_at_the_next_request(tmp_path: Path) -> None:
    """Design X8: progress names each pass and request; a set cancel flag raises
    ``WhatIfCancelled`` before the next request, not at the end."""
    from desktop.bench.whatif_session import write

    sequence = request_sequence(write(tmp_path / "g.jsonl", 40))
    seen: list[Progress] = []
    what_if(sequence, ["deepseek/deepseek-flash"], progress=seen.append)
    passes = {(p.route, p.strategy) for p in seen}
    assert len(passes) == 1 + 2 * len(DELIVERIES)  # the minimum, and fixed declarations too
    fractions = [p.fraction for p in seen]
    assert fractions == sorted(fractions) and fractions[0] == 0 and fractions[-1] > 0.9
    assert seen[-1].line().startswith(f"{fractions[-1]:.0%} · deepseek/deepseek-flash: ")

    cancel = threading.Event()
    reached: list[Progress] = []

    def stop_in_second_pass(progress: Progress) -> None:
        reached.append(progress)
        if progress.done == 1 and progress.request >= 10:
            cancel.set()

    with pytest.raises(WhatIfCancelled):
        what_if(sequence, ["deepseek/deepseek-flash"], progress=stop_in_second_pass, cancel=cancel)
    assert reached[-1].done == 1 and reached[-1].request < len(sequence.requests)


def test_the_command_writes_progress_on_a_terminal_and_keeps_standard_output_clean(tiny: Path) -> None:
    """Design X8: on a terminal the progress is one line rewritten in place (carriage returns,
    cleared at the end); standard output holds only the JSON."""
    import os
    import pty

    main, secondary = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "desktop", "whatif", str(tiny), "--json", "--routes", "openai/gpt-5.5"],
            stdout=subprocess.PIPE,
            stderr=secondary,
            timeout=120,
        )
        os.close(secondary)
        secondary = -1
        chunks = []
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        if secondary >= 0:
            os.close(secondary)
        os.close(main)
    err = b"".join(chunks).decode()
    assert done.returncode == 0
    assert json.loads(done.stdout)["routes"][0]["route"] == "openai/gpt-5.5"
    assert "\r" in err and "openai/gpt-5.5: theoretical minimum, request 1 of 2" in err
    assert "\n" not in err.replace("\r\n", "").strip("\r ")  # one line, rewritten


def test_a_claude_code_file_is_replayed_whole_and_says_what_was_replayed() -> None:
    """Design X9: every branch and sub-agent of the file, each request once, counted by kind."""
    whole = request_sequence(CLAUDE / "basic.jsonl")
    current = request_sequence(CLAUDE / "basic.jsonl", leaf=whole_leaf(CLAUDE / "basic.jsonl"))
    assert whole.replayed == {"currentBranch": 6, "otherBranches": 1, "subAgents": 1}
    assert current.replayed == {"currentBranch": 6, "otherBranches": 0, "subAgents": 1}
    assert len(whole.requests) == 8 and len(current.requests) == 7
    stamps = [t for t in whole.timestamps if t is not None]
    assert stamps == sorted(stamps)  # the lanes in time order
    result = what_if(whole, ["anthropic/claude-sonnet-4-5"], deliveries=("chronological",))
    data = result.to_json()
    assert data["replayed"] == whole.replayed and data["requests"] == 8
    from desktop.cli.whatif import render

    assert "replayed  6 on the current branch, 1 on other branches, 1 of sub-agents" in render(result)


def whole_leaf(path: Path) -> str:
    from desktop.session.foreign import open_foreign

    leaf = open_foreign(path).default_leaf
    assert leaf is not None
    return leaf


def test_the_request_sequence_holds_the_session_once_not_its_square(tmp_path: Path) -> None:
    """Design X8: each request's context is a prefix of one shared list (a copy per request
    held the square of the session: 12 GB for a 20 MB file); four times the turns, about four
    times the memory."""
    import tracemalloc

    def peak(turns: int) -> int:
        messages: list[dict[str, Any]] = []
        for turn in range(turns):
            messages += [
                {"role": "user", "content": f"question {turn} " * 20, "timestamp": 4 * turn},
                assistant(f"answer {turn} " * 20, 10, 4 * turn + 1),
            ]
        path = pi_session(tmp_path / f"s{turns}.jsonl", messages)
        tracemalloc.start()
        try:
            sequence = request_sequence(path)
            assert len(sequence.requests) == turns
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    small, large = peak(300), peak(1200)
    assert large < 6 * small, (small, large)
