"""Projection is pure (design P4): projecting twice gives the same bytes and never edits the transcript.

Converters share block objects with the transcript where nothing changes (no per-message
copies), so any in-place edit would leak into the caller's history and the next request.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from desktop.pi.projection import RequestOptions, project
from desktop.pi.transcript import normalize_context

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "pi_ai"
ORACLE_KEY = "sk-oracle-test-key"
CASES = [
    {**case, "_file": path.name}
    for path in sorted(FIXTURES.glob("*.json"))
    for case in json.loads(path.read_text(encoding="utf-8"))
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c['_file']}:{c['name']}" for c in CASES])
def test_projection_leaves_the_transcript_untouched(case: dict[str, Any]) -> None:
    messages = normalize_context(case["context"])
    before = copy.deepcopy(messages)
    options = RequestOptions.from_pi({"apiKey": ORACLE_KEY, **case.get("options", {})}, env=case.get("env"))
    first = project(case["model"], messages, options).body_bytes
    assert messages == before
    assert project(case["model"], messages, options).body_bytes == first
