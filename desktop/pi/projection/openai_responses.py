"""OpenAI Responses request projection (pi-ai ``openai-responses.ts``, streamSimple path).

Also serves the providers that speak this API through pi-ai's generic adapter (OpenCode,
xAI, GitHub Copilot, Cloudflare AI Gateway), including the small provider wrappers pi-ai
applies on dispatch: OpenCode's session routing header and Cloudflare URL placeholders.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from desktop.pi.projection import ProviderRequest, RequestOptions, resolve_kind
from desktop.pi.projection._budget import base_max_tokens
from desktop.pi.projection._cache import resolve_cache_retention
from desktop.pi.projection._headers import client_api_key, copilot_headers, merge_headers, pi_user_agent
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

TOOL_CALL_PROVIDERS = frozenset({"openai", "openai-codex", "opencode"})
OPENAI_BASE_URL = "https://api.openai.com/v1"
_CLOUDFLARE_PLACEHOLDERS = ("CLOUDFLARE_ACCOUNT_ID", "CLOUDFLARE_GATEWAY_ID")


def _flag(compat: Mapping[str, Any], name: str, default: Any) -> Any:
    value = compat.get(name)
    return default if value is None else value


def _compat(model: Model) -> dict[str, Any]:
    compat = model.get("compat") or {}
    openrouter = model["provider"] == "openrouter" or "openrouter.ai" in model["baseUrl"]
    return {
        "supportsDeveloperRole": _flag(compat, "supportsDeveloperRole", True),
        "sessionAffinityFormat": _flag(
            compat, "sessionAffinityFormat", "openrouter" if openrouter else "openai"
        ),
        "supportsLongCacheRetention": _flag(compat, "supportsLongCacheRetention", True),
        "supportsExplicitPromptCacheMode": _flag(compat, "supportsExplicitPromptCacheMode", False),
        "supportsMaxOutputTokens": _flag(compat, "supportsMaxOutputTokens", True),
    }


def _provider_model(model: Model, scoped_env: Mapping[str, Any] | None) -> Model:
    """pi-ai's Cloudflare wrapper fills account/gateway placeholders from the scoped env."""
    if model["provider"] != "cloudflare-ai-gateway" or not scoped_env:
        return model
    base_url = model["baseUrl"]
    for name in _CLOUDFLARE_PLACEHOLDERS:
        value = scoped_env.get(name)
        if value is not None:
            base_url = base_url.replace("{" + name + "}", str(value))
    return model if base_url == model["baseUrl"] else {**model, "baseUrl": base_url}


def project(model: Model, messages: list[Message], options: RequestOptions) -> ProviderRequest:
    model = _provider_model(model, options.get("env"))
    option_headers = options.headers
    api_key = client_api_key(model["provider"], options.api_key, option_headers)
    compat = _compat(model)
    reasoning_effort = resolve_reasoning(model, options.reasoning)
    max_tokens = base_max_tokens(model, messages, options)
    cache_retention = resolve_cache_retention(options)
    cache_session_id = None if cache_retention == "none" else options.session_id
    # Sign in with ChatGPT (a ChatGPT token sent straight to OpenAI) rejects some fields. The
    # kind comes from the host (design P5); pi-ai reads it off the key ("sk-" or not).
    omit_unsupported = (
        model["provider"] == "openai"
        and model["baseUrl"] == OPENAI_BASE_URL
        and resolve_kind(model, options) == "chatgpt"
    )
    route = ResponsesRoute.from_compat(
        model.get("compat") or {}, TOOL_CALL_PROVIDERS, default_strict=False, strict_by_default=False
    )
    converted = build_input(model, messages, route)
    transcript, tools = converted.transcript, converted.tools

    body: dict[str, Any] = {"model": model["id"], "input": converted.items, "stream": True}
    if cache_retention != "none" and options.session_id is not None:
        body["prompt_cache_key"] = clamp_prompt_cache_key(options.session_id)
    if not omit_unsupported:
        explicit_mode = compat["supportsExplicitPromptCacheMode"]
        long_ok = compat["supportsLongCacheRetention"]
        if cache_retention == "long" and long_ok and not explicit_mode:
            body["prompt_cache_retention"] = "24h"
        if explicit_mode and cache_retention == "none":
            body["prompt_cache_options"] = {"mode": "explicit"}
        elif explicit_mode and cache_retention == "long" and long_ok:
            body["prompt_cache_options"] = {"ttl": "30m"}
    body["store"] = False
    if max_tokens and compat["supportsMaxOutputTokens"] and not omit_unsupported:
        body["max_output_tokens"] = max(max_tokens, MIN_OUTPUT_TOKENS)
    if options.temperature is not None and not omit_unsupported:
        body["temperature"] = js_value(options.temperature)
    if tools.request_tools:
        body["tools"] = convert_tools(tools.request_tools, route.tool_options)
    if options.tool_choice is not None:
        body["tool_choice"] = options.tool_choice
    reasoning = reasoning_param(model, reasoning_effort, send_off=model["provider"] != "github-copilot")
    if reasoning is not None:
        body["reasoning"] = reasoning
    if model.get("reasoning") and (reasoning_effort or model["provider"] == "xai"):
        body["include"] = ["reasoning.encrypted_content"]
    sampling = resolve_sampling_params(model, reasoning_effort or "off", options.get("samplingParams"))
    if sampling:
        body.update(js_value(sampling))

    copilot = copilot_headers(transcript) if model["provider"] == "github-copilot" else None
    affinity: dict[str, str | None] = {}
    if cache_session_id:
        affinity_format = compat["sessionAffinityFormat"]
        if affinity_format == "openrouter":
            affinity["x-session-id"] = cache_session_id
        else:
            if affinity_format == "openai":
                affinity["session_id"] = cache_session_id
            affinity["x-client-request-id"] = cache_session_id
    headers = merge_headers(
        {"accept": "application/json", "authorization": f"Bearer {api_key}", "user-agent": pi_user_agent()},
        model.get("headers"),
        copilot,
        affinity,
        option_headers,
        {"content-type": "application/json"},
    )
    return ProviderRequest("POST", join_url(model["baseUrl"], "/responses"), headers, body)
