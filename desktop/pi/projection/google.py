"""Projection for ``google-generative-ai`` (the Gemini API, pi-ai ``google-generative-ai.ts``).

The key travels in ``x-goog-api-key``; the model's ``baseUrl`` already names the API version,
so the stream endpoint is appended to it directly.
"""

from __future__ import annotations

from desktop.pi.projection import ProjectionError, ProviderRequest, RequestOptions
from desktop.pi.projection._google_shared import (
    build_body,
    merged_headers,
    stream_suffix,
    with_api_key,
)
from desktop.pi.types import Message, Model

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com/v1beta"


def project(model: Model, messages: list[Message], options: RequestOptions) -> ProviderRequest:
    if not options.api_key:
        raise ProjectionError(
            f"No API key for provider: {model['provider']}; set the account's Gemini API key "
            "(RequestOptions.api_key)"
        )
    body = build_body(model, messages, options, "google-generative-ai")
    base = (model.get("baseUrl") or DEFAULT_BASE_URL).rstrip("/")
    url = base + stream_suffix(model, vertex=False)
    headers = with_api_key(merged_headers(model, options), options.api_key)
    return ProviderRequest(method="POST", url=url, headers=headers, body=body)
