"""Bad input to the Responses projections fails with a message that names the fix."""

from __future__ import annotations

import gc
import json
from pathlib import Path
from typing import Any

import pytest

from desktop.pi.projection import ProjectionError, RequestOptions, project
from desktop.pi.transcript import normalize_context
from tests.session.support import reply

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "pi_ai"


def _case(file: str, index: int = 0) -> dict[str, Any]:
    case: dict[str, Any] = json.loads((FIXTURES / file).read_text(encoding="utf-8"))[index]
    return case


def _project(case: dict[str, Any], **options: Any) -> Any:
    merged = {**case["options"], **options}
    return project(case["model"], normalize_context(case["context"]), RequestOptions.from_pi(merged))


def test_codex_token_without_account_id_is_rejected() -> None:
    case = _case("codex_responses.json")
    with pytest.raises(ProjectionError, match="chatgpt_account_id"):
        _project(case, apiKey="sk-not-a-jwt")


def test_missing_api_key_names_the_option() -> None:
    for file in ("openai_responses.json", "azure_responses.json", "codex_responses.json"):
        case = _case(file)
        with pytest.raises(ProjectionError, match=r"options\.apiKey"):
            _project({**case, "options": {k: v for k, v in case["options"].items() if k != "apiKey"}})


def test_azure_without_endpoint_says_where_to_set_it() -> None:
    case = _case("azure_responses.json")
    with pytest.raises(ProjectionError, match="AZURE_OPENAI_BASE_URL"):
        _project({**case, "options": {}}, apiKey="k")


def test_unparseable_reasoning_signature_is_named() -> None:
    case = _case("openai_responses.json")
    model = case["model"]
    thinking = {"type": "thinking", "thinking": "x", "thinkingSignature": "not json"}
    route = {"api": model["api"], "provider": model["provider"], "model": model["id"]}
    broken = reply([thinking], 2, stop="stop", route=route)
    context = {"messages": [{"role": "user", "content": "q", "timestamp": 1}, broken]}
    with pytest.raises(ProjectionError, match="thinkingSignature"):
        project(model, normalize_context(context), RequestOptions.from_pi({"apiKey": "sk-x"}))


def test_projection_restores_the_garbage_collector() -> None:
    case = _case("openai_responses.json")
    assert gc.isenabled()
    _project(case, apiKey="sk-x")
    assert gc.isenabled()
    gc.disable()
    try:
        _project(case, apiKey="sk-x")
        assert not gc.isenabled()
    finally:
        gc.enable()
    with pytest.raises(ProjectionError):
        _project(case, apiKey="")
    assert gc.isenabled()
