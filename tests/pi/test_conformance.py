"""Our request projections against the real pi-ai 1.0.3, case by case.

Fixtures under tests/fixtures/pi_ai/*.json are produced by the dev-only oracle
(scripts/oracle/README.md): pi-ai builds each request offline and the captured body,
URL and headers are committed. Every case must match as JSON *and* byte for byte.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.pi.pi_ai_cases import load_cases, project_case

#: Headers that the official JS SDKs add on their own (platform, retry bookkeeping) and that
#: carry no request semantics; everything else must match exactly.
SDK_ONLY_HEADER_PREFIXES = ("x-stainless-",)
SDK_ONLY_HEADERS = frozenset(
    {
        "user-agent",
        "accept",
        "anthropic-dangerous-direct-browser-access",
        "content-length",
        # AWS SDK: its version string, a random per-call UUID, retry bookkeeping, and the
        # HTTP/2 pseudo-header it derives from the URL (already compared).
        "x-amz-user-agent",
        "amz-sdk-invocation-id",
        "amz-sdk-request",
        ":authority",
        # @google/genai's own version and the Node runtime version ("google-genai-sdk/2.21.0 gl-node/v20"):
        # client telemetry that depends on the oracle's Node install, not on the request.
        "x-goog-api-client",
    }
)


CASES = load_cases()


def comparable_headers(headers: dict[str, str]) -> dict[str, str]:
    return {
        k.lower(): v
        for k, v in headers.items()
        if k.lower() not in SDK_ONLY_HEADERS and not k.lower().startswith(SDK_ONLY_HEADER_PREFIXES)
    }


@pytest.mark.parametrize("case", CASES, ids=[f"{c['_file']}:{c['name']}" for c in CASES])
def test_body_matches_pi_ai(case: dict[str, Any]) -> None:
    assert "error" not in case, f"oracle failed for this case: {case.get('error')}"
    request = project_case(case)
    assert request.body == case["body"]
    assert request.body_bytes == case["bodyText"].encode("utf-8")


@pytest.mark.parametrize(
    "case", [c for c in CASES if c.get("request")], ids=lambda c: f"{c['_file']}:{c['name']}"
)
def test_url_and_headers_match_pi_ai(case: dict[str, Any]) -> None:
    request = project_case(case)
    assert request.method == case["request"]["method"]
    assert request.url == case["request"]["url"]
    assert comparable_headers(request.headers) == comparable_headers(case["request"]["headers"])


def test_fixture_set_is_broad() -> None:
    """At least 60 cases, covering every API (design P1)."""
    apis = {c["model"]["api"] for c in CASES}
    assert len(CASES) >= 60, len(CASES)
    assert apis >= {
        "anthropic-messages",
        "openai-responses",
        "openai-codex-responses",
        "azure-openai-responses",
        "openai-completions",
        "mistral-conversations",
        "google-generative-ai",
        "google-vertex",
        "bedrock-converse-stream",
        "pi-messages",
    }, apis


# The preview is the dispatch for every API family: tests/session/test_preview_is_dispatch.py
# compares the runtime's next request (pending update and draft) with what the emulator received.
