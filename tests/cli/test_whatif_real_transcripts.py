"""`whatif` on real Claude Code transcripts, on the route they were recorded on (design P14).

The files (``tests/fixtures/claude_code_real``, from a public repository, MIT) carry the usage
Anthropic billed. They record no system prompt or tools, so the replay estimates the hidden
prefix from that usage: the part the first request read is held warm, the part it wrote starts
cold, a request whose billed read falls back inside it marks it changed, and the 1-hour writes
the file was billed for ask for long retention. Token figures on Claude routes are in the
bill's units, calibrated from how the billed input grew against the replayed (design P15). The
replayed cost must be within 25% of the recorded cost on every file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.helpers import run_main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "claude_code_real"
ROUTE = "anthropic/claude-opus-4-6"
#: 221 requests over two days (2.7 MB) with a sub-agent and a compaction: at four characters
#: per token its replay came to 0.74 of the bill; the bill counts 1.4 to 1.6 tokens for each.
LONG = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"


@pytest.mark.parametrize("name", ["short", "tool_heavy", "subagent", LONG])
def test_replayed_cost_on_the_recorded_route_is_within_a_quarter_of_the_bill(name: str) -> None:
    run = run_main("whatif", str(FIXTURES / f"{name}.jsonl"), "--json", "--routes", ROUTE)
    assert run.code == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["recorded"]["route"] == ROUTE
    assert report["systemPrompt"]["recorded"] is False
    assert report["systemPrompt"]["estimatedTokens"] > 20_000
    chronological = next(s for s in report["routes"][0]["strategies"] if s["strategy"] == "chronological")
    ratio = chronological["cost"] / report["recorded"]["cost"]
    assert 0.75 <= ratio <= 1.25, f"{name}: replayed {ratio:.2f}x the recorded cost"


def test_the_first_request_writes_what_the_bill_shows_was_written() -> None:
    """short.jsonl's one request read 11,515 tokens and wrote 13,835 (1-hour): the replay reads
    the warm part and writes the rest, not the whole hidden prefix as read."""
    run = run_main("whatif", str(FIXTURES / "short.jsonl"), "--json", "--routes", ROUTE)
    strategy = json.loads(run.stdout)["routes"][0]["strategies"][0]
    assert abs(strategy["cacheReads"] - 11_515) < 100
    assert abs(strategy["cacheWrites"] - 13_835) < 100


def test_the_long_session_is_replayed_in_the_bills_units_on_claude_routes_only() -> None:
    run = run_main("whatif", str(FIXTURES / f"{LONG}.jsonl"), "--json", "--routes", f"{ROUTE},openai/gpt-5.5")
    assert run.code == 0, run.stderr
    report = json.loads(run.stdout)
    calibration = report["recorded"]["calibration"]
    assert 1.3 <= calibration["density"] <= 1.7
    assert calibration["routes"] == [ROUTE]
    assert any("calibrated to the bill" in line and ROUTE in line for line in report["assumptions"])
    chronological = next(s for s in report["routes"][0]["strategies"] if s["strategy"] == "chronological")
    assert 0.85 <= chronological["cost"] / report["recorded"]["cost"] <= 1.15


def test_every_route_replays_a_file_that_resumed_warm_and_none_comes_in_under_its_minimum() -> None:
    """The warm stand-in (what the first request read from an earlier session's cache) is cached
    before the session on every route, Gemini's too (it takes no request without a turn), and
    the theoretical minimum leaves it out: no request of this session had to process it."""
    routes = f"{ROUTE},google/gemini-3.5-flash,openai/gpt-5.5"
    run = run_main("whatif", str(FIXTURES / "subagent.jsonl"), "--json", "--routes", routes)
    assert run.code == 0, run.stderr
    report = json.loads(run.stdout)
    assert [r["route"] for r in report["routes"]] == routes.split(",")
    for route in report["routes"]:
        for strategy in route["strategies"]:
            assert strategy["uncachedTokens"] >= 0.95 * strategy["minimumUncachedTokens"], (
                route["route"],
                strategy,
            )
