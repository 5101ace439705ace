"""The pi-ai conformance cases (``tests/fixtures/pi_ai``, recorded by the dev-only oracle) and
our request for each, as the projection tests read them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from desktop.pi.projection import ProviderRequest, RequestOptions, project
from desktop.pi.transcript import normalize_context

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "pi_ai"
ORACLE_KEY = "sk-oracle-test-key"


def load_cases(pattern: str = "*.json") -> list[dict[str, Any]]:
    """Every case of the fixture files matching ``pattern``, each with its file name (``_file``)."""
    return [
        {**case, "_file": path.name}
        for path in sorted(FIXTURES.glob(pattern))
        for case in json.loads(path.read_text(encoding="utf-8"))
    ]


def project_case(case: dict[str, Any]) -> ProviderRequest:
    """Our request for ``case``: its model, context, options and environment, the oracle's key."""
    options = RequestOptions.from_pi({"apiKey": ORACLE_KEY, **case.get("options", {})}, env=case.get("env"))
    return project(case["model"], normalize_context(case["context"]), options)
