"""``payload --context DOC`` is pi-ai's ``streamSimple`` on every OpenAI-family API (design P4, P5).

``tests/fixtures/pi_ai_stream_simple/openai_family.json`` is what the real pi-ai 1.0.3 sent
(``scripts/oracle/stream_simple``, captured offline) for completions, responses on OpenAI's own
endpoint and another, Azure responses and Codex, each with an ``sk-`` API key and with a ChatGPT
sign-in token, under pi-ai's default max tokens and other option sets. The case's ``env`` is set
in the *process* environment, as a shell would, so the command must read it as pi-ai does; a
case without ``options.apiKey`` takes the key from the provider's variable.

Desktop builds the request from the document with the placeholder and the key's kind (never the
key); the body must equal pi-ai's byte for byte, and the URL and headers once dispatch swaps in
the key (``with_credential``). Where pi-ai sends nothing (Codex with an API key, no account id
in it), dispatch refuses too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from desktop.cli.payload import request_from_context_document
from desktop.host.credentials import API_KEY_ENV
from desktop.pi.projection import ProjectionError
from desktop.session.dispatch import with_credential
from tests.pi.test_conformance import comparable_headers

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "pi_ai_stream_simple" / "openai_family.json"
CASES: list[dict[str, Any]] = json.loads(FIXTURE.read_text(encoding="utf-8"))
#: Every variable a case may set, cleared first so the developer's shell cannot leak in.
VARIABLES = {name for names in API_KEY_ENV.values() for name in names} | {
    "PI_CACHE_RETENTION",
    "AZURE_OPENAI_RESOURCE_NAME",
    "AZURE_OPENAI_BASE_URL",
    "AZURE_OPENAI_API_VERSION",
    "AZURE_OPENAI_DEPLOYMENT_NAME_MAP",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
}


def test_the_fixture_covers_every_openai_family_api_with_both_kinds() -> None:
    assert len(CASES) >= 60
    covered = {(c["model"]["api"], c["meta"]["kind"]) for c in CASES}
    apis = ("openai-completions", "openai-responses", "azure-openai-responses", "openai-codex-responses")
    assert covered == {(api, kind) for api in apis for kind in ("api-key", "chatgpt-token")}
    assert any("apiKey" not in c["options"] or c["options"]["apiKey"] is None for c in CASES)
    assert not any("error" in c for c in CASES)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_context_document_is_stream_simple(case: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    for name, value in (case.get("env") or {}).items():
        monkeypatch.setenv(name, value)
    document = {"model": case["model"], "context": case["context"], "options": case["options"]}
    request = request_from_context_document(document)
    key = case["meta"]["key"]
    assert key not in request.body_bytes.decode() and key not in json.dumps(request.headers)
    if case.get("request") is None:  # pi-ai sent nothing: Codex needs a token with an account id
        with pytest.raises(ProjectionError, match="Failed to extract accountId"):
            with_credential(request.headers, key)
        return
    assert request.body_bytes == case["bodyText"].encode("utf-8")
    assert request.url == case["request"]["url"]
    sent = with_credential(request.headers, key)
    assert comparable_headers(sent) == comparable_headers(case["request"]["headers"])
