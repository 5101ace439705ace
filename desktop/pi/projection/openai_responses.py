"""OpenAI Responses request projection (pi-ai ``openai-responses.ts``, streamSimple path).

Also serves the providers that speak this API through pi-ai's generic adapter (OpenCode,
xAI, GitHub Copilot, Cloudflare AI Gateway), including the small provider wrappers pi-ai
applies on dispatch: OpenCode's session routing header and Cloudflare URL placeholders.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from desktop.pi.projection import ProjectionError, ProviderRequest, RequestOptions
from desktop.pi.projection._budget import base_max_tokens
from desktop.pi.projection._js import js_value
from desktop.pi.projection._responses_shared import (
    MIN_OUTPUT_TOKENS,
    InputOptions,
    ToolOptions,
    clamp_prompt_cache_key,
    convert_input,
    convert_tools,
    mapped_level,
    merge_headers,
)
from desktop.pi.projection._responses_util import (
    gc_paused,
    join_url,
    pi_user_agent,
    provider_env_value,
)
from desktop.pi.projection._strict import grammar_input_properties
from desktop.pi.projection._thinking import resolve_reasoning, resolve_sampling_params
from desktop.pi.transcript import declared_tools, resolve_transcript, resolve_transcript_tools
from desktop.pi.types import Message, Model

TOOL_CALL_PROVIDERS = frozenset({"openai", "openai-codex", "opencode"})
OPENAI_BASE_URL = "https://api.openai.com/v1"
OPENCODE_SESSION_HEADER = "x-opencode-session"
_OPENCODE_PROVIDERS = frozenset({"opencode", "opencode-go"})
_CLOUDFLARE_PLACEHOLDERS = ("CLOUDFLARE_ACCOUNT_ID", "CLOUDFLARE_GATEWAY_ID")


def _flag(compat: Mapping[str, Any], name: str, default: Any) -> Any:
    value = compat.get(name)
    return default if value is None else value


def _compat(model: Model) -> dict[str, Any]:
    compat = model.get("compat") or {}
    openrouter = model["provider"] == "openrouter" or "openrouter.ai" in model["baseUrl"]
    return {
        "supportsDeveloperRole": _flag(compat, "supportsDeveloperRole", True),
        "supportsMidConvoSystemMessages": _flag(compat, "supportsMidConvoSystemMessages", False),
        "sessionAffinityFormat": _flag(
            compat, "sessionAffinityFormat", "openrouter" if openrouter else "openai"
        ),
        "supportsLongCacheRetention": _flag(compat, "supportsLongCacheRetention", True),
        "supportsStrictMode": _flag(compat, "supportsStrictMode", False),
        "supportsOpenAIGrammarTools": _flag(compat, "supportsOpenAIGrammarTools", False),
        "supportsAdditionalTools": _flag(compat, "supportsAdditionalTools", False),
        "supportsToolSearch": _flag(compat, "supportsToolSearch", False),
        "supportsExplicitPromptCacheMode": _flag(compat, "supportsExplicitPromptCacheMode", False),
        "supportsMaxOutputTokens": _flag(compat, "supportsMaxOutputTokens", True),
    }


def _has_header(headers: Mapping[str, str | None], name: str) -> bool:
    return any(k.lower() == name and v is not None and v.strip() for k, v in headers.items())


def _client_api_key(provider: str, api_key: str | None, headers: Mapping[str, str | None]) -> str:
    if api_key:
        return api_key
    if _has_header(headers, "authorization") or _has_header(headers, "cf-aig-authorization"):
        return "unused"
    raise ProjectionError(
        f"No API key for provider: {provider}; pass options.apiKey or an Authorization header"
    )


def _resolve_cache_retention(options: RequestOptions) -> str:
    # RequestOptions defaults to "short", so an explicit "short" cannot be told from an unset
    # value; the legacy PI_CACHE_RETENTION=long switch applies to both.
    retention = options.cache_retention or "short"
    if retention == "short":
        scoped = options.get("env")
        if provider_env_value("PI_CACHE_RETENTION", scoped, options.env) == "long":
            return "long"
    return retention


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


def _option_headers(model: Model, options: RequestOptions) -> dict[str, str | None]:
    headers = dict(options.headers or {})
    if (
        model["provider"] in _OPENCODE_PROVIDERS
        and options.session_id
        and not any(k.lower() == OPENCODE_SESSION_HEADER for k in headers)
    ):
        headers[OPENCODE_SESSION_HEADER] = options.session_id
    return headers


def _copilot_headers(messages: Sequence[Message]) -> dict[str, str]:
    last = messages[-1] if messages else None
    headers = {
        "x-initiator": "agent" if last is not None and last["role"] != "user" else "user",
        "openai-intent": "conversation-edits",
    }
    for message in messages:
        content = message.get("content")
        if (
            message["role"] in ("user", "toolResult")
            and isinstance(content, list)
            and any(block.get("type") == "image" for block in content)
        ):
            headers["copilot-vision-request"] = "true"
            break
    return headers


@gc_paused
def project(model: Model, messages: list[Message], options: RequestOptions) -> ProviderRequest:
    model = _provider_model(model, options.get("env"))
    option_headers = _option_headers(model, options)
    api_key = _client_api_key(model["provider"], options.api_key, option_headers)
    compat = _compat(model)
    transcript = resolve_transcript(messages, compat["supportsMidConvoSystemMessages"])
    reasoning_effort = resolve_reasoning(model, options.reasoning)
    max_tokens = base_max_tokens(model, messages, options)
    cache_retention = _resolve_cache_retention(options)
    cache_session_id = None if cache_retention == "none" else options.session_id
    # Sign in with ChatGPT (a non-"sk-" credential sent straight to OpenAI) rejects some fields.
    omit_unsupported = (
        model["provider"] == "openai"
        and model["baseUrl"] == OPENAI_BASE_URL
        and options.api_key is not None
        and not options.api_key.startswith("sk-")
    )
    tool_options = ToolOptions(
        default_strict=False,
        supports_strict_mode=compat["supportsStrictMode"],
        supports_grammar_tools=compat["supportsOpenAIGrammarTools"],
    )
    tools = resolve_transcript_tools(
        transcript, compat["supportsAdditionalTools"] or compat["supportsToolSearch"]
    )
    grammar = grammar_input_properties(declared_tools(transcript), compat["supportsOpenAIGrammarTools"])
    input_items = convert_input(
        model,
        transcript,
        InputOptions(
            allowed_tool_call_providers=TOOL_CALL_PROVIDERS,
            tool_options=tool_options,
            transcript_tools=tools,
            grammar_properties=grammar,
            supports_additional_tools=compat["supportsAdditionalTools"],
            supports_tool_search=compat["supportsToolSearch"],
        ),
    )

    body: dict[str, Any] = {"model": model["id"], "input": input_items, "stream": True}
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
        body["tools"] = convert_tools(tools.request_tools, tool_options)
    if options.tool_choice is not None:
        body["tool_choice"] = options.tool_choice
    if model.get("reasoning"):
        level_map = model.get("thinkingLevelMap") or {}
        if reasoning_effort:
            body["reasoning"] = {
                "effort": mapped_level(level_map, reasoning_effort, reasoning_effort),
                "summary": "auto",
            }
            body["include"] = ["reasoning.encrypted_content"]
        elif model["provider"] != "github-copilot" and not ("off" in level_map and level_map["off"] is None):
            body["reasoning"] = {"effort": mapped_level(level_map, "off", "none")}
        if model["provider"] == "xai":
            body["include"] = ["reasoning.encrypted_content"]
    sampling = resolve_sampling_params(model, reasoning_effort or "off", options.get("samplingParams"))
    if sampling:
        body.update(js_value(sampling))

    headers: dict[str, str] = {"accept": "application/json", "authorization": f"Bearer {api_key}"}
    defaults: dict[str, str | None] = {"user-agent": pi_user_agent()}
    merge_headers(defaults, model.get("headers"), keep_null=True)
    if model["provider"] == "github-copilot":
        merge_headers(defaults, _copilot_headers(transcript))
    if cache_session_id:
        affinity = compat["sessionAffinityFormat"]
        if affinity == "openrouter":
            defaults["x-session-id"] = cache_session_id
        else:
            if affinity == "openai":
                defaults["session_id"] = cache_session_id
            defaults["x-client-request-id"] = cache_session_id
    merge_headers(defaults, option_headers, keep_null=True)
    merge_headers(headers, defaults)
    headers["content-type"] = "application/json"
    return ProviderRequest("POST", join_url(model["baseUrl"], "/responses"), headers, body)
