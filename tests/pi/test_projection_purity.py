"""Projection is pure (design P4): projecting twice gives the same bytes and never edits the transcript.

Converters share block objects with the transcript where nothing changes (no per-message
copies), so any in-place edit would leak into the caller's history and the next request.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from desktop.pi.projection import RequestOptions, project
from desktop.pi.transcript import normalize_context
from tests.pi.pi_ai_cases import ORACLE_KEY, load_cases

CASES = load_cases()


@pytest.mark.parametrize("case", CASES, ids=[f"{c['_file']}:{c['name']}" for c in CASES])
def test_projection_leaves_the_transcript_untouched(case: dict[str, Any]) -> None:
    messages = normalize_context(case["context"])
    before = copy.deepcopy(messages)
    options = RequestOptions.from_pi({"apiKey": ORACLE_KEY, **case.get("options", {})}, env=case.get("env"))
    first = project(case["model"], messages, options).body_bytes
    assert messages == before
    assert project(case["model"], messages, options).body_bytes == first
