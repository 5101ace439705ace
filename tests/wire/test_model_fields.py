"""A model missing a field the wire needs, or holding a malformed one, is an error naming the
field for every API, never a bare ``KeyError`` or ``TypeError`` (design W2)."""

from __future__ import annotations

from typing import Any

import pytest

from desktop.host.providers import WireRequest, send_streaming
from desktop.pi.catalog.catalog import default_catalog
from desktop.pi.projection import CREDENTIAL_PLACEHOLDER, PROJECTORS, ProjectionError, RequestOptions, project
from desktop.pi.projection._model_fields import NEEDED
from desktop.pi.projection.incremental import IncrementalProjection

USER = [{"role": "user", "content": "hello", "timestamp": 1}]
OPTIONS = RequestOptions(
    api_key=CREDENTIAL_PLACEHOLDER, env={"GOOGLE_CLOUD_PROJECT": "p", "GOOGLE_CLOUD_LOCATION": "us-central1"}
)


def _catalog_model(api: str) -> dict[str, Any]:
    for model in default_catalog()._every_model().models.values():
        if model["api"] == api and model.get("baseUrl"):
            return dict(model)
    return {
        "id": "m",
        "name": "m",
        "api": api,
        "provider": "custom",
        "baseUrl": "https://example.invalid/v1",
        "reasoning": False,
        "input": ["text"],
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
        "contextWindow": 1000,
        "maxTokens": 100,
    }


CASES = [(api, field) for api in PROJECTORS for field in NEEDED[api]]


def test_every_api_has_its_needed_fields_listed() -> None:
    assert set(NEEDED) == set(PROJECTORS)


@pytest.mark.parametrize(("api", "field"), CASES, ids=[f"{a}-{f}" for a, f in CASES])
def test_a_missing_field_is_named(api: str, field: str) -> None:
    model = _catalog_model(api)
    project(model, USER, OPTIONS)  # the complete model projects
    del model[field]
    with pytest.raises(ProjectionError, match=f"'{field}'"):
        project(model, USER, OPTIONS)
    with pytest.raises(ProjectionError, match=f"'{field}'"):
        IncrementalProjection(model, OPTIONS)  # type: ignore[arg-type]


MALFORMED = [
    ("openai-completions", "baseUrl", 5),
    ("anthropic-messages", "baseUrl", ["https://a"]),
    ("anthropic-messages", "maxTokens", "lots"),
    ("bedrock-converse-stream", "reasoning", "yes"),
    ("openai-responses", "input", "text"),
    ("mistral-conversations", "id", ""),
    ("google-generative-ai", "provider", {"name": "google"}),
]


@pytest.mark.parametrize(("api", "field", "value"), MALFORMED, ids=[f"{a}-{f}" for a, f, _ in MALFORMED])
def test_a_malformed_field_is_named(api: str, field: str, value: Any) -> None:
    model = {**_catalog_model(api), field: value}
    with pytest.raises(ProjectionError, match=f"field '{field}' must be"):
        project(model, USER, OPTIONS)


def test_chat_completions_without_base_url_names_it() -> None:
    model = _catalog_model("openai-completions")
    del model["baseUrl"]
    with pytest.raises(ProjectionError) as raised:
        project(model, USER, OPTIONS)
    assert str(raised.value) == (
        f"model {model['id']!r} has no 'baseUrl' field; it must be a URL string (where requests are sent)"
    )


@pytest.mark.parametrize("field", ["id", "api", "provider"])
def test_sending_for_a_model_without_a_field_names_it(field: str) -> None:
    model = {"id": "m", "api": "anthropic-messages", "provider": "anthropic"}
    del model[field]
    with pytest.raises(ValueError, match=f"'{field}'"):
        send_streaming(WireRequest("http://127.0.0.1:9/v1/messages", b"{}"), model=model)
