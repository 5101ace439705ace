"""What the pi-ai fixtures cannot show for the Google and pi-messages projections: the requests
pi-ai refuses to build (it fails inside its stream, so the oracle captures nothing), and the
properties the inspector relies on (secrets redacted, no token in an ADC request)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from desktop.pi.projection import ProjectionError, RequestOptions, project

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "pi_ai"


def fixture_model(file: str, name: str) -> dict[str, Any]:
    cases = json.loads((FIXTURES / file).read_text(encoding="utf-8"))
    model: dict[str, Any] = next(c["model"] for c in cases if c["name"] == name)
    return model


GEMINI_25 = fixture_model("google.json", "g25flash-reasoning-medium-budget")
GEMINI_3 = fixture_model("google.json", "g3flash-reasoning-high-level")
VERTEX_25 = fixture_model("google_vertex.json", "vertex-adc-regional-reasoning-high")
RADIUS = fixture_model("pi_messages.json", "radius-basic-prompt-tools")

HELLO = {"messages": [{"role": "user", "content": "hello", "timestamp": 1}]}
VERTEX_ENV = {"GOOGLE_CLOUD_PROJECT": "proj", "GOOGLE_CLOUD_LOCATION": "europe-west4"}


def strict_tool(strict: str) -> dict[str, Any]:
    return {
        "name": "patch",
        "description": "Apply a patch",
        "parameters": {"type": "object", "properties": {"ops": {"oneOf": [{"type": "string"}]}}},
        "constrainedSampling": {"type": "json_schema", "strict": strict},
    }


def test_gemini_without_api_key_names_the_missing_key() -> None:
    with pytest.raises(ProjectionError, match="No API key for provider: google"):
        project(GEMINI_25, HELLO, RequestOptions())


def test_pi_messages_without_api_key_is_refused() -> None:
    with pytest.raises(ProjectionError, match='provider "radius"'):
        project(RADIUS, HELLO, RequestOptions())


@pytest.mark.parametrize(
    ("env", "missing"),
    [
        ({}, "project ID"),
        ({"GOOGLE_CLOUD_PROJECT": "proj"}, "location"),
        ({"GOOGLE_CLOUD_LOCATION": "us"}, "project ID"),
    ],
)
def test_vertex_adc_requires_project_and_location(env: dict[str, str], missing: str) -> None:
    options = RequestOptions(api_key="gcp-vertex-credentials", env=env)
    with pytest.raises(ProjectionError, match=missing):
        project(VERTEX_25, HELLO, options)


def test_vertex_adc_request_is_regional_and_carries_no_credential() -> None:
    request = project(VERTEX_25, HELLO, RequestOptions(env=VERTEX_ENV))
    assert request.url.startswith(
        "https://europe-west4-aiplatform.googleapis.com/v1/projects/proj/locations/europe-west4/publishers/google/"
    )
    assert {k.lower() for k in request.headers} == {"content-type"}


def test_vertex_api_key_ignores_adc_env_and_is_redacted() -> None:
    request = project(VERTEX_25, HELLO, RequestOptions(api_key="secret-key", env=VERTEX_ENV))
    assert request.url.startswith("https://aiplatform.googleapis.com/v1/publishers/google/models/")
    assert request.headers["x-goog-api-key"] == "secret-key"
    assert "secret-key" not in json.dumps(request.redacted_headers())


def test_required_strict_tool_on_a_model_without_strict_mode_is_an_error() -> None:
    context = {**HELLO, "tools": [strict_tool("require")]}
    with pytest.raises(ProjectionError, match='Tool "patch" requires JSON-schema constrained sampling'):
        project(GEMINI_25, context, RequestOptions(api_key="k"))


def test_required_strict_tool_with_an_inexpressible_schema_is_an_error() -> None:
    context = {**HELLO, "tools": [strict_tool("require")]}
    with pytest.raises(ProjectionError, match="oneOf schemas are unsupported"):
        project(GEMINI_3, context, RequestOptions(api_key="k"))


def test_preferred_strict_tool_falls_back_to_the_plain_schema() -> None:
    context = {**HELLO, "tools": [strict_tool("prefer")]}
    body = project(GEMINI_3, context, RequestOptions(api_key="k")).body
    declaration = body["tools"][0]["functionDeclarations"][0]
    assert declaration["parametersJsonSchema"] == strict_tool("prefer")["parameters"]
    assert "toolConfig" not in body


def test_transcript_with_only_system_state_is_refused() -> None:
    context = {"systemPrompt": "Be brief.", "messages": []}
    with pytest.raises(ProjectionError, match="at least one user or model turn"):
        project(GEMINI_25, context, RequestOptions(api_key="k"))


def test_system_updates_never_reach_contents() -> None:
    messages = [
        {"role": "system", "content": "Base.", "timestamp": 0},
        {"role": "user", "content": "one", "timestamp": 1},
        {"role": "system", "content": "", "sections": {"env": "cwd: /x"}, "timestamp": 2},
        {"role": "user", "content": "two", "timestamp": 3},
    ]
    body = project(GEMINI_25, messages, RequestOptions(api_key="k")).body
    assert body["systemInstruction"]["parts"][0]["text"] == "Base.\n\ncwd: /x"
    assert [c["parts"][0]["text"] for c in body["contents"]] == ["one", "two"]
