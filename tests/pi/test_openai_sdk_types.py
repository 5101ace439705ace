"""Our Responses request bodies are requests the official ``openai`` Python SDK accepts.

Two independent checks per body, over every openai-responses, azure-openai-responses and
openai-codex-responses conformance fixture (projected by *our* code, not read from the
fixture):

1. Key by key against the SDK's ``ResponseCreateParamsStreaming`` TypedDict: every key must
   be declared at its place, every required key present, every value of the declared type
   (unions tried alternative by alternative, literals compared exactly). pydantic would
   silently ignore unknown TypedDict keys, so the walk is explicit.
2. Through the SDK client itself: ``client.responses.create(**body)`` over an
   ``httpx.MockTransport``; the SDK rejects unknown arguments, and the JSON it serializes
   must equal our body (Azure also through ``AzureOpenAI``, whose URL must equal ours).

Exclusion rule: a body is skipped only when it uses a top-level field or an input item
``type`` that the installed SDK does not declare at all (``sdk_unknown_features``), e.g.
``additional_tools`` on SDKs older than that item. The skip list is computed, reported in
the test id, and bounded: most bodies must be checked, so the test cannot pass vacuously.
"""

from __future__ import annotations

import json
import types
from typing import Any, Union, get_args, get_origin

import httpx
import pytest
from typing_extensions import get_type_hints, is_typeddict

openai = pytest.importorskip("openai")
from openai.types.responses import response_create_params, response_input_item_param  # noqa: E402

from tests.pi.pi_ai_cases import ORACLE_KEY, load_cases, project_case  # noqa: E402
from tests.pi.sdk_check import _LITERALS, Mismatch, check, strip  # noqa: E402

APIS = {"openai-responses", "azure-openai-responses", "openai-codex-responses"}
PARAMS = response_create_params.ResponseCreateParamsStreaming


def _literal_types(tp: Any) -> set[str]:
    """Every ``type`` literal an SDK input item TypedDict union declares."""
    found: set[str] = set()
    tp = strip(tp)
    if get_origin(tp) in (Union, types.UnionType):
        for alternative in get_args(tp):
            found |= _literal_types(alternative)
    elif is_typeddict(tp):
        hint = get_type_hints(tp, include_extras=True).get("type")
        if hint is not None and get_origin(strip(hint)) in _LITERALS:
            found.update(str(v) for v in get_args(strip(hint)))
    return found


SDK_FIELDS = set(get_type_hints(PARAMS))
SDK_ITEM_TYPES = _literal_types(response_input_item_param.ResponseInputItemParam)


def sdk_unknown_features(body: dict[str, Any]) -> list[str]:
    """Fields/items the installed SDK does not declare at all (the documented exclusion rule)."""
    unknown = [f"field {key}" for key in body if key not in SDK_FIELDS]
    for item in body.get("input") or ():
        kind = item.get("type")
        if kind is not None and kind not in SDK_ITEM_TYPES:
            unknown.append(f"input item {kind}")
    return sorted(set(unknown))


CASES = [c for c in load_cases() if "error" not in c and c["model"]["api"] in APIS]
CHECKED = [c for c in CASES if not sdk_unknown_features(project_case(c).body)]


def test_most_bodies_are_checked() -> None:
    assert len(CASES) >= 50, len(CASES)
    skipped = {c["name"]: sdk_unknown_features(project_case(c).body) for c in CASES if c not in CHECKED}
    assert len(CHECKED) >= 0.8 * len(CASES), skipped


@pytest.mark.parametrize("case", CHECKED, ids=lambda c: f"{c['model']['api']}:{c['name']}")
def test_body_fits_sdk_typed_dict(case: dict[str, Any]) -> None:
    check(project_case(case).body, PARAMS, hinted=False)


def _client(factory: Any, **kwargs: Any) -> Any:
    captured: dict[str, httpx.Request] = {}

    def handler(request: httpx.Request) -> httpx.Response:
        captured["request"] = request
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=b"")

    client = factory(
        http_client=httpx.Client(transport=httpx.MockTransport(handler)), max_retries=0, **kwargs
    )
    return client, captured


@pytest.mark.parametrize("case", CHECKED, ids=lambda c: f"{c['model']['api']}:{c['name']}")
def test_sdk_client_serializes_the_same_body(case: dict[str, Any]) -> None:
    ours = project_case(case)
    if case["model"]["api"] == "azure-openai-responses":
        base, _, query = ours.url.partition("?")
        version = query.removeprefix("api-version=")
        client, captured = _client(
            openai.AzureOpenAI,
            api_key=ORACLE_KEY,
            api_version=version,
            base_url=base.removesuffix("/responses"),
        )
    else:
        base = ours.url.removesuffix("/responses")
        client, captured = _client(openai.OpenAI, api_key=ORACLE_KEY, base_url=base)
    client.responses.create(**ours.body)
    sent = captured["request"]
    assert json.loads(sent.content) == ours.body
    if case["model"]["api"] != "openai-codex-responses":
        assert str(sent.url) == ours.url


def test_checker_rejects_what_the_sdk_does_not_declare() -> None:
    """The checker must be able to fail: unknown keys, bad literals and wrong types."""
    body = project_case(CHECKED[0]).body
    check(body, PARAMS, hinted=False)
    bad_bodies = [
        {**body, "stor": False},
        {**body, "input": [*body["input"], {"role": "tool", "content": "x"}]},
        {**body, "input": [{"type": "function_call_output", "call_id": 1, "output": "x"}]},
        {**body, "reasoning": {"effort": "extreme"}},
        {**body, "input": [{"type": "message", "role": "assistant", "content": [], "bogus": 1}]},
    ]
    for bad in bad_bodies:
        with pytest.raises(Mismatch):
            check(bad, PARAMS, hinted=False)
    with pytest.raises(TypeError):
        client, _ = _client(openai.OpenAI, api_key=ORACLE_KEY, base_url="http://127.0.0.1:9/v1")
        client.responses.create(**{**body, "not_a_param": 1})
