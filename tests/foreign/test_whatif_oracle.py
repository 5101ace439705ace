"""The what-if figures are unchanged by the linear replay (design X3, P7).

``tests/fixtures/whatif_expected.json`` holds the figures the earlier replay (every request
projected from scratch, every part read again) gave on every session fixture and on a
generated 60-turn journal with system updates and tool additions, for seven routes and every
strategy. The replay now projects incrementally and reads each part once; with retention
and the calibration to the bill left out (the earlier replay had neither) every figure must be
the same. Where the request
sequence itself grew (a Claude Code file now replays its other branches and sub-agents,
design X9), the figures were recomputed by the earlier replay on the new sequence.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from desktop.bench.whatif_session import write
from desktop.session.whatif import request_sequence, what_if

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
EXPECTED: dict[str, Any] = json.loads((FIXTURES / "whatif_expected.json").read_text())
ROUTES = [
    "anthropic/claude-opus-5-5",
    "openai/gpt-5.5",
    "deepseek/deepseek-flash",
    "google/gemini-3.5-flash",
    "mistral/mistral-medium-latest",
    "amazon-bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0",
    "openai/gpt-4.1",
]


def _figures(path: Path) -> list[dict[str, Any]]:
    result = what_if(
        request_sequence(path), ROUTES, retention=False, estimate_hidden=False, calibrate=False
    ).to_json()
    return [
        {"route": r["route"], "strategies": r["strategies"], "minimum": r["minimumUncachedTokens"]}
        for r in result["routes"]
    ]


@pytest.mark.parametrize("name", sorted(k for k in EXPECTED if not k.startswith("generated:")))
def test_fixture_figures_are_unchanged(name: str) -> None:
    path = FIXTURES.parents[1] / name
    assert _figures(path) == EXPECTED[name]


def test_generated_journal_figures_are_unchanged(tmp_path: Path) -> None:
    path = write(tmp_path / "g.jsonl", 60)
    assert _figures(path) == EXPECTED["generated:60"]
