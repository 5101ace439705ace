"""Readable, key-free error text for provider failures."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

import orjson

from desktop.host.redaction import redact_text

MAX_BODY_CHARS = 500

PROVIDER_LABELS = {
    "anthropic": "Anthropic",
    "openai": "OpenAI",
    "azure": "Azure OpenAI",
    "azure-openai-responses": "Azure OpenAI",
    "openai-codex": "OpenAI Codex",
    "deepseek": "DeepSeek",
    "mistral": "Mistral",
    "google": "Google",
    "google-vertex": "Google Vertex AI",
    "amazon-bedrock": "Amazon Bedrock",
    "emulator": "Emulator",
}

_HINTS = {
    400: "the provider rejected the request",
    401: "check the API key for this account",
    403: "the key is not allowed to use this model or endpoint",
    404: "check the model id and the base URL",
    413: "the request is too large for this model",
    429: "rate limited; wait and try again, or check the account's quota",
    503: "the service is unavailable or overloaded; try again in a moment",
    529: "the provider is overloaded; try again in a moment",
}
#: Statuses whose line names the provider's own reason (``overloaded_error``,
#: ``rate_limit_exceeded``, ``RESOURCE_EXHAUSTED``, ``ThrottlingException``): the same status
#: means a per-minute limit, an exhausted quota or a busy service (design W4).
_REASON_STATUSES = frozenset({429, 503, 529})


def provider_label(provider: str) -> str:
    return PROVIDER_LABELS.get(provider, provider)


def _message_in(value: Any) -> str | None:
    """The human message inside a provider error body (the shapes the five families use)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value:
        return _message_in(value[0])
    if isinstance(value, dict):
        for key in ("error", "message", "detail", "msg"):
            if key in value:
                found = _message_in(value[key])
                if found:
                    return found
    return None


def summarize_body(body: bytes) -> str:
    """A one-line summary of an error body: its ``message`` when JSON, else the text, truncated."""
    text = body.decode("utf-8", errors="replace").strip()
    if not text:
        return "(empty body)"
    try:
        found = _message_in(orjson.loads(text))
    except orjson.JSONDecodeError:
        found = None
    summary = re.sub(r"\s+", " ", found or text)
    if len(summary) > MAX_BODY_CHARS:
        summary = summary[:MAX_BODY_CHARS] + f"... [truncated {len(summary) - MAX_BODY_CHARS} chars]"
    return summary


def _reason_in(value: Any) -> str | None:
    """The provider's name for the error in a body: OpenAI's ``code``, Google's ``status``,
    Anthropic's and Mistral's ``type`` (a numeric code says less than the type)."""
    if not isinstance(value, dict):
        return None
    inner = _reason_in(value.get("error"))
    if inner:
        return inner
    code, status, kind = value.get("code"), value.get("status"), value.get("type")
    if isinstance(code, str) and code and not code.isdigit():
        return code
    if isinstance(status, str) and status:
        return status
    if isinstance(kind, str) and kind and kind != "error":
        return kind
    return None


def provider_reason(body: bytes, headers: Mapping[str, str]) -> str | None:
    """The provider's reason for a failed response: from its JSON body, or Bedrock's
    ``x-amzn-errortype`` header (``ThrottlingException:http://...``)."""
    try:
        found = _reason_in(orjson.loads(body))
    except orjson.JSONDecodeError:
        found = None
    amazon = headers.get("x-amzn-errortype")
    if not found and amazon:
        found = amazon.split(":", 1)[0]
    if found and re.fullmatch(r"[\w.-]{1,60}", found):
        return found
    return None


def http_error_message(
    provider: str,
    status: int,
    body: bytes,
    secrets: Iterable[str] = (),
    headers: Mapping[str, str] | None = None,
) -> str:
    """One line: who failed, the status (with the provider's reason for a rate limit or an
    overload), the provider's own message and what to do."""
    hint = _HINTS.get(status) or ("the provider had a server error; try again later" if status >= 500 else "")
    reason = provider_reason(body, headers or {}) if status in _REASON_STATUSES else None
    code = f"{status} {reason}" if reason else str(status)
    message = f"{provider_label(provider)} API error ({code}): {summarize_body(body)}"
    if hint:
        message += f" — {hint}"
    return redact_text(message, secrets)


def host_of(url: str) -> str:
    parts = urlsplit(url)
    return parts.netloc or url
