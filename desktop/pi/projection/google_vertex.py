"""Projection for ``google-vertex`` (Gemini on Vertex AI, pi-ai ``google-vertex.ts``).

Two ways to authenticate, as in pi-ai: a Vertex API key (express mode: global endpoint, key in
``x-goog-api-key``), or Application Default Credentials, where the endpoint is regional and
names the project (``GOOGLE_CLOUD_PROJECT``/``GCLOUD_PROJECT`` and ``GOOGLE_CLOUD_LOCATION``
from ``RequestOptions.env``). With ADC the OAuth access token is looked up at dispatch by the
host (network I/O, short-lived secret), so the projection carries no ``Authorization`` header.
A custom ``baseUrl`` (without a ``{location}`` placeholder) replaces the endpoint and drops the
project/location path, as the SDK's collection-scoped base URL does.
"""

from __future__ import annotations

from urllib.parse import quote

from desktop.pi.projection import ProjectionError, ProviderRequest, RequestOptions, resolve_kind
from desktop.pi.projection._google_shared import (
    base_url_has_api_version,
    build_body,
    merged_headers,
    stream_suffix,
    with_api_key,
)
from desktop.pi.types import Message, Model

API_VERSION = "v1"
GLOBAL_ENDPOINT = "https://aiplatform.googleapis.com"


def vertex_api_key(model: Model, options: RequestOptions) -> str | None:
    """The API key (or the placeholder standing for it), or None when ADC applies: the host
    decided ADC (design P5), or, as pi-ai reads a real key, no key or the ADC marker."""
    if resolve_kind(model, options) == "adc":
        return None
    return (options.api_key or "").strip() or None


def _custom_base_url(model: Model) -> str | None:
    base = (model.get("baseUrl") or "").strip()
    return None if not base or "{location}" in base else base


def _adc_scope(options: RequestOptions) -> tuple[str, str]:
    """Project and location for ADC, read as pi-ai reads them (its options are not forwarded)."""
    project = options.env_value("GOOGLE_CLOUD_PROJECT") or options.env_value("GCLOUD_PROJECT")
    if not project:
        raise ProjectionError(
            "Vertex AI requires a project ID. Set GOOGLE_CLOUD_PROJECT/GCLOUD_PROJECT or pass project in options."
        )
    location = options.env_value("GOOGLE_CLOUD_LOCATION")
    if not location:
        raise ProjectionError(
            "Vertex AI requires a location. Set GOOGLE_CLOUD_LOCATION or pass location in options."
        )
    return project, location


def _endpoint(model: Model, api_key: str | None, options: RequestOptions) -> str:
    scope = _adc_scope(options) if api_key is None else None
    custom = _custom_base_url(model)
    if custom is not None:
        base = custom.rstrip("/")
        return base if base_url_has_api_version(custom) else f"{base}/{API_VERSION}"
    if scope is None:
        return f"{GLOBAL_ENDPOINT}/{API_VERSION}"
    project, location = scope
    host = GLOBAL_ENDPOINT if location == "global" else f"https://{location}-aiplatform.googleapis.com"
    return f"{host}/{API_VERSION}/projects/{quote(project, safe='/')}/locations/{quote(location, safe='/')}"


def project(model: Model, messages: list[Message], options: RequestOptions) -> ProviderRequest:
    api_key = vertex_api_key(model, options)
    url = _endpoint(model, api_key, options) + stream_suffix(model, vertex=True)
    body = build_body(model, messages, options, "google-vertex")
    headers = merged_headers(model, options)
    if api_key is not None:
        with_api_key(headers, api_key)
    return ProviderRequest(method="POST", url=url, headers=headers, body=body)
