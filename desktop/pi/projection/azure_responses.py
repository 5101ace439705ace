"""Azure OpenAI Responses request projection (pi-ai ``azure-openai-responses.ts``).

Azure models ship without an endpoint: each user has a resource. The endpoint comes from
``AZURE_OPENAI_BASE_URL`` / ``AZURE_OPENAI_RESOURCE_NAME`` (the scoped ``options.env`` first,
then the process env passed in ``RequestOptions.env``) or the model's ``baseUrl``; the
request ``model`` is the deployment name from ``AZURE_OPENAI_DEPLOYMENT_NAME_MAP``.
pi-ai's simple path does not forward the ``azure*`` stream options, so neither do we.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

from desktop.pi.projection import ProjectionError, ProviderRequest, RequestOptions
from desktop.pi.projection._budget import base_max_tokens
from desktop.pi.projection._headers import merge_headers, pi_user_agent
from desktop.pi.projection._js import js_value
from desktop.pi.projection._responses_shared import (
    MIN_OUTPUT_TOKENS,
    ResponsesRoute,
    build_input,
    clamp_prompt_cache_key,
    convert_tools,
    join_url,
    reasoning_param,
)
from desktop.pi.projection._thinking import resolve_reasoning, resolve_sampling_params
from desktop.pi.types import Message, Model

TOOL_CALL_PROVIDERS = frozenset({"openai", "openai-codex", "opencode", "azure"})
DEFAULT_API_VERSION = "v1"
_AZURE_HOST_SUFFIXES = (".openai.azure.com", ".cognitiveservices.azure.com", ".ai.azure.com")
_BARE_PATHS = frozenset({"", "/", "/openai", "/openai/v1/responses"})


def deployment_name(model: Model, options: RequestOptions) -> str:
    """``AZURE_OPENAI_DEPLOYMENT_NAME_MAP`` (``model=deployment,...``) or the model id."""
    mapping: dict[str, str] = {}
    for entry in (options.env_value("AZURE_OPENAI_DEPLOYMENT_NAME_MAP") or "").split(","):
        entry = entry.strip()
        if not entry:
            continue
        model_id, _, deployment = entry.partition("=")
        if model_id and deployment:
            mapping[model_id.strip()] = deployment.strip()
    return mapping.get(model["id"]) or model["id"]


def _normalize_base_url(base_url: str) -> str:
    trimmed = base_url.strip().rstrip("/")
    parts = urlsplit(trimmed)
    if not parts.scheme or not parts.netloc:
        raise ProjectionError(
            f"Invalid Azure OpenAI base URL: {base_url}; expected https://<resource>.openai.azure.com"
        )
    host = (parts.hostname or "").lower()
    netloc = parts.netloc.lower() if "@" not in parts.netloc else parts.netloc
    path = parts.path.rstrip("/")
    query = parts.query
    if host.endswith(_AZURE_HOST_SUFFIXES) and path in _BARE_PATHS:
        path, query = "/openai/v1", ""
    return urlunsplit((parts.scheme.lower(), netloc, path or "/", query, parts.fragment)).rstrip("/")


def resolve_base_url(model: Model, options: RequestOptions) -> str:
    base_url = (options.env_value("AZURE_OPENAI_BASE_URL") or "").strip() or None
    resource = options.env_value("AZURE_OPENAI_RESOURCE_NAME")
    if not base_url and resource:
        base_url = f"https://{resource}.openai.azure.com/openai/v1"
    if not base_url and model.get("baseUrl"):
        base_url = model["baseUrl"]
    if not base_url:
        raise ProjectionError(
            "Azure OpenAI base URL is required. Set AZURE_OPENAI_BASE_URL or AZURE_OPENAI_RESOURCE_NAME, "
            "or give the model a baseUrl."
        )
    return _normalize_base_url(base_url)


def project(model: Model, messages: list[Message], options: RequestOptions) -> ProviderRequest:
    if not options.api_key:
        raise ProjectionError(
            f"No API key for provider: {model['provider']}; pass RequestOptions.api_key (pi-ai options.apiKey)"
        )
    compat: Mapping[str, Any] = model.get("compat") or {}
    route = ResponsesRoute.from_compat(
        compat,
        TOOL_CALL_PROVIDERS,
        default_strict=False,
        strict_by_default=True,
    )
    base_url = resolve_base_url(model, options)
    api_version = options.env_value("AZURE_OPENAI_API_VERSION") or DEFAULT_API_VERSION
    reasoning_effort = resolve_reasoning(model, options.reasoning)
    max_tokens = base_max_tokens(model, messages, options)
    converted = build_input(model, messages, route)
    tools = converted.tools

    body: dict[str, Any] = {
        "model": deployment_name(model, options),
        "input": converted.items,
        "stream": True,
    }
    cache_key = clamp_prompt_cache_key(options.session_id)
    if cache_key is not None:
        body["prompt_cache_key"] = cache_key
    body["store"] = False
    if max_tokens:
        body["max_output_tokens"] = max(max_tokens, MIN_OUTPUT_TOKENS)
    if options.temperature is not None:
        body["temperature"] = js_value(options.temperature)
    if tools.request_tools:
        body["tools"] = convert_tools(tools.request_tools, route.tool_options)
    if options.tool_choice is not None:
        body["tool_choice"] = options.tool_choice
    reasoning = reasoning_param(model, reasoning_effort)
    if reasoning is not None:
        body["reasoning"] = reasoning
        if reasoning_effort:
            body["include"] = ["reasoning.encrypted_content"]
    sampling = resolve_sampling_params(model, reasoning_effort or "off", options.get("samplingParams"))
    if sampling:
        body.update(js_value(sampling))

    headers = merge_headers(
        {"accept": "application/json", "api-key": options.api_key, "user-agent": pi_user_agent()},
        model.get("headers"),
        options.headers,
        {"content-type": "application/json"},
    )
    # The SDK adds api-version as a query parameter, escaped like encodeURIComponent.
    version = quote(api_version, safe="!'()*")
    url = f"{join_url(base_url, '/responses')}?api-version={version}"
    return ProviderRequest("POST", url, headers, body)
