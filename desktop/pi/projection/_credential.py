"""The kind of credential a request is built for, never read from the placeholder (design P5).

Some APIs shape the request by the kind of credential, not only where it travels: an Anthropic
OAuth (subscription) token adds the Claude Code betas and headers and renames tools; a ChatGPT
sign-in token on the official OpenAI endpoint rejects ``max_output_tokens``, ``temperature``
and ``prompt_cache_retention``; Vertex with an API key goes to the global endpoint, with
Application Default Credentials to the project's regional one; Bedrock with a bearer token
sends ``authorization``, without one the request is SigV4-signed; Codex needs the ChatGPT
account id.

pi-ai reads the kind off the key's text. Desktop projects with a placeholder (the host swaps in
the key only when sending), so the host decides the kind from where the key lives and passes
it as ``RequestOptions.credential_kind``. Only a real key given to the projection directly (a
pi-ai style call, the conformance fixtures) is read as pi-ai reads it; the placeholder without
a decided kind stands for the API's usual kind (:func:`usual_kind`), never for what its text
happens to look like.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

CredentialKind = Literal["api-key", "oauth", "chatgpt", "adc", "bearer", "sigv4"]

#: Stands in for the key in the projection (the Host swaps in the real key when sending).
CREDENTIAL_PLACEHOLDER = "<api-key>"
#: pi-ai's marker for "use Application Default Credentials" in place of a Vertex key.
ADC_MARKER = "gcp-vertex-credentials"
OPENAI_BASE_URL = "https://api.openai.com/v1"
_ANGLE_MARKER = re.compile(r"<[^>]+>")

#: What each kind is, for people (the preview's note, the route status).
DESCRIPTIONS: Mapping[str, str] = {
    "api-key": "an API key",
    "oauth": "an OAuth (subscription) token",
    "chatgpt": "a ChatGPT sign-in token",
    "adc": "Application Default Credentials (no key)",
    "bearer": "a bearer token",
    "sigv4": "AWS credentials (SigV4 signing, no key)",
}


def usual_kind(api: str) -> CredentialKind:
    """The kind a key of ``api`` is when nothing says otherwise (what the placeholder stands for)."""
    if api == "openai-codex-responses":
        return "chatgpt"
    if api == "bedrock-converse-stream":
        return "bearer"
    return "api-key"


def kind_of_key(model: Mapping[str, Any], key: str | None, env_token: str | None = None) -> CredentialKind:
    """pi-ai 1.0.3's reading of a real key (``None``: no key) for ``model``'s API and provider.

    ``env_token`` is Bedrock's ``AWS_BEARER_TOKEN_BEDROCK``, which pi-ai reads itself.
    """
    api = str(model.get("api", ""))
    provider = str(model.get("provider", ""))
    text = (key or "").strip()
    if api == "anthropic-messages":
        return "oauth" if "sk-ant-oat" in text and provider != "github-copilot" else "api-key"
    if api == "openai-responses":
        official = provider == "openai" and model.get("baseUrl") == OPENAI_BASE_URL
        return "chatgpt" if official and key is not None and not key.startswith("sk-") else "api-key"
    if api == "openai-codex-responses":
        return "chatgpt"
    if api == "google-vertex":
        # pi-ai also takes any "<...>" text for "no key here" (e.g. "<authenticated>").
        return "adc" if not text or text == ADC_MARKER or _ANGLE_MARKER.fullmatch(text) else "api-key"
    if api == "bedrock-converse-stream":
        return "bearer" if key or env_token else "sigv4"
    return "api-key"


def resolve_kind(model: Mapping[str, Any], options: Any) -> CredentialKind:
    """The kind to build for: the host's decision, else a real key as pi-ai reads it, else usual."""
    decided = getattr(options, "credential_kind", None)
    if decided is not None:
        return decided  # type: ignore[no-any-return]
    key = options.api_key
    api = str(model.get("api", ""))
    if key == CREDENTIAL_PLACEHOLDER:
        return usual_kind(api)
    env_token = options.env_value("AWS_BEARER_TOKEN_BEDROCK") if api == "bedrock-converse-stream" else None
    return kind_of_key(model, key, env_token)
