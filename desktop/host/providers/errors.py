"""Readable, key-free error text for provider failures."""

from __future__ import annotations

import re
from collections.abc import Iterable
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
}


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


def http_error_message(provider: str, status: int, body: bytes, secrets: Iterable[str] = ()) -> str:
    hint = _HINTS.get(status) or ("the provider had a server error; try again later" if status >= 500 else "")
    message = f"{provider_label(provider)} API error ({status}): {summarize_body(body)}"
    if hint:
        message += f" — {hint}"
    return redact_text(message, secrets)


def host_of(url: str) -> str:
    parts = urlsplit(url)
    return parts.netloc or url
