"""The projection knows the credential's kind without seeing it (design P5).

The host looks the credential up where dispatch will (``route_credential``) and passes only its
kind; a placeholder projection of kind K is then the request pi-ai builds with a real key of
kind K, body for body (headers up to the key itself). The production path is ``route_binding``,
the runtime's options for a route.
"""

from __future__ import annotations

import base64
from typing import Any

import orjson
import pytest

from desktop.host.providers.credential_kind import route_credential
from desktop.pi.projection import CREDENTIAL_PLACEHOLDER, RequestOptions, project
from desktop.pi.routes import resolve_model, route_from_string
from desktop.session.assembly import route_binding
from desktop.session.dispatch import with_credential

MESSAGES: list[Any] = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "hi", "timestamp": 0},
]
CREDENTIAL_VARIABLES = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_OAUTH_TOKEN",
    "GOOGLE_CLOUD_API_KEY",
    "AWS_BEARER_TOKEN_BEDROCK",
)


def jwt(account: str) -> str:
    def part(value: Any) -> str:
        return base64.urlsafe_b64encode(orjson.dumps(value)).decode().rstrip("=")

    claims = {"https://api.openai.com/auth": {"chatgpt_account_id": account}}
    return f"{part({'alg': 'none'})}.{part(claims)}.sig"


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in CREDENTIAL_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "proj")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "europe-west4")


def model(route: str) -> dict[str, Any]:
    return resolve_model(route_from_string(route)).model


def binding_request(route: str) -> Any:
    resolved = resolve_model(route_from_string(route))
    binding = route_binding(resolved, "folded", "session-1")
    return binding, project(binding.model, MESSAGES, binding.options)


def test_openai_api_key_keeps_max_output_tokens_without_a_key_and_with_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    binding, request = binding_request("openai/gpt-4")
    assert binding.options.credential_kind == "api-key"
    assert binding.credential_note is not None and "assumes an API key" in binding.credential_note
    assert "max_output_tokens" in request.body  # the placeholder is not taken for a ChatGPT token
    real = project(binding.model, MESSAGES, RequestOptions(session_id="session-1", api_key="sk-real"))
    assert request.body == real.body
    monkeypatch.setenv("OPENAI_API_KEY", "sk-live-123")
    binding, with_key = binding_request("openai/gpt-4")
    assert binding.credential_note is None and with_key.body == request.body


def test_a_chatgpt_token_omits_what_chatgpt_rejects(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", jwt("acct-7"))
    binding, request = binding_request("openai/gpt-4")
    assert binding.options.credential_kind == "chatgpt"
    assert "max_output_tokens" not in request.body
    real = project(binding.model, MESSAGES, RequestOptions(session_id="session-1", api_key=jwt("acct-7")))
    assert request.body == real.body


def test_anthropic_oauth_token_is_projected_as_pi_ai_does(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_OAUTH_TOKEN", "sk-ant-oat01-secret")
    binding, request = binding_request("anthropic/claude-fable-5")
    assert binding.options.credential_kind == "oauth"
    real = project(
        binding.model, MESSAGES, RequestOptions(session_id="session-1", api_key="sk-ant-oat01-secret")
    )
    assert request.body == real.body and "oauth-2025-04-20" in request.headers["anthropic-beta"]
    sent = with_credential(request.headers, "sk-ant-oat01-secret")
    assert sent == real.headers
    monkeypatch.delenv("ANTHROPIC_OAUTH_TOKEN")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-x")
    binding, keyed = binding_request("anthropic/claude-fable-5")
    assert binding.options.credential_kind == "api-key" and keyed.body != request.body
    assert keyed.headers["x-api-key"] == CREDENTIAL_PLACEHOLDER


def test_vertex_api_key_or_adc(monkeypatch: pytest.MonkeyPatch) -> None:
    binding, adc = binding_request("google-vertex/gemini-2.5-flash")
    assert binding.options.credential_kind == "adc" and binding.credential_note is None
    assert "/projects/proj/locations/europe-west4/" in adc.url and "x-goog-api-key" not in adc.headers
    monkeypatch.setenv("GOOGLE_CLOUD_API_KEY", "AIza-key")
    binding, keyed = binding_request("google-vertex/gemini-2.5-flash")
    real = project(binding.model, MESSAGES, RequestOptions(session_id="session-1", api_key="AIza-key"))
    assert binding.options.credential_kind == "api-key" and keyed.url == real.url
    assert keyed.headers["x-goog-api-key"] == CREDENTIAL_PLACEHOLDER


def test_bedrock_bearer_or_sigv4(monkeypatch: pytest.MonkeyPatch) -> None:
    route = "amazon-bedrock/amazon.nova-2-lite-v1:0"
    binding, signed = binding_request(route)
    assert binding.options.credential_kind == "sigv4" and "authorization" not in signed.headers
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "bedrock-token")
    binding, bearer = binding_request(route)
    assert binding.options.credential_kind == "bearer"
    assert bearer.headers["authorization"] == f"Bearer {CREDENTIAL_PLACEHOLDER}"


def test_codex_account_is_filled_in_when_sending() -> None:
    token = jwt("acct-42")
    codex = model("openai-codex/gpt-5.3-codex-spark")
    preview = project(codex, MESSAGES, RequestOptions(session_id="s", api_key=CREDENTIAL_PLACEHOLDER))
    real = project(codex, MESSAGES, RequestOptions(session_id="s", api_key=token))
    assert preview.body == real.body
    assert with_credential(preview.headers, token) == real.headers
    assert "acct-42" not in orjson.dumps(preview.headers).decode()
    # The preview's headers (the placeholder standing for the key) keep the account placeholder.
    shown = with_credential(preview.headers, CREDENTIAL_PLACEHOLDER)
    assert shown["chatgpt-account-id"] == "<chatgpt-account-id>"


def test_offline_routes_need_no_credential() -> None:
    from desktop.pi.routes import emulator_route

    route = emulator_route("openai/gpt-4", "http://127.0.0.1:9", emulated=True)
    found = route_credential(resolve_model(route).model, route)
    assert found.kind == "api-key" and not found.assumed and "emulator" in found.source
