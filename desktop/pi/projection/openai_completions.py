"""openai-completions: the Chat Completions request pi-ai 1.0.3 would send (``openai-completions.ts``).

One projection serves OpenAI and every OpenAI-compatible server (DeepSeek, Moonshot, z.ai,
OpenRouter, Groq, Cerebras, vLLM, ...). The dialect comes from ``_chat_compat``; the message
list from ``_chat_messages``. On routes flagged ``supportsMidConvoSystemMessages`` the
transcript is sent chronologically (later system messages stay where they happened) so the
provider's prefix cache survives prompt and tool updates; other routes get the replayed
state folded into one leading system message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from desktop.pi.projection import ProviderRequest, RequestOptions
from desktop.pi.projection._budget import (
    base_max_tokens,
    clamp_thinking_budget_to_answer_room,
    thinking_budget_for_level,
)
from desktop.pi.projection._cache import resolve_cache_retention
from desktop.pi.projection._chat_compat import CompletionsCompat, completions_compat
from desktop.pi.projection._chat_messages import apply_cache_control, convert_messages, convert_tools
from desktop.pi.projection._headers import client_api_key, copilot_headers, merge_headers
from desktop.pi.projection._js import js_value
from desktop.pi.projection._strict import grammar_input_properties
from desktop.pi.projection._thinking import resolve_reasoning, resolve_sampling_params
from desktop.pi.transcript import declared_tool_tuple, resolve_transcript, resolve_transcript_tools
from desktop.pi.types import Message, Model

PROMPT_CACHE_KEY_MAX_CHARS = 64
_MISSING: Any = object()


def _js_truthy(value: Any) -> bool:
    return isinstance(value, dict | list) or bool(value)


def _has_tool_history(messages: Sequence[Mapping[str, Any]]) -> bool:
    for message in messages:
        role = message["role"]
        if role == "toolResult":
            return True
        if role == "assistant" and any(
            block.get("type") == "toolCall" for block in message.get("content") or ()
        ):
            return True
    return False


def _headers(
    model: Model,
    transcript: Sequence[Mapping[str, Any]],
    api_key: str,
    option_headers: Mapping[str, str | None],
    affinity_session: str | None,
    compat: CompletionsCompat,
    env: Mapping[str, str],
) -> dict[str, str]:
    # The SDK's own defaults come first, then auth, then pi-ai's default headers, so a caller's
    # Authorization header replaces the bearer token.
    sdk: dict[str, str | None] = {}
    if env.get("OPENAI_ORG_ID"):
        sdk["openai-organization"] = env["OPENAI_ORG_ID"]
    if env.get("OPENAI_PROJECT_ID"):
        sdk["openai-project"] = env["OPENAI_PROJECT_ID"]
    sdk["authorization"] = f"Bearer {api_key}"
    copilot = copilot_headers(transcript) if model["provider"] == "github-copilot" else None
    affinity: dict[str, str | None] = {}
    if affinity_session and compat.send_session_affinity_headers:
        if compat.session_affinity_format == "openrouter":
            affinity["x-session-id"] = affinity_session
        else:
            if compat.session_affinity_format == "openai":
                affinity["session_id"] = affinity_session
            affinity["x-client-request-id"] = affinity_session
            affinity["x-session-affinity"] = affinity_session
    return merge_headers(
        sdk, model.get("headers"), copilot, affinity, option_headers, {"content-type": "application/json"}
    )


def _url(base_url: str) -> str:
    path = "chat/completions" if base_url.endswith("/") else "/chat/completions"
    return base_url + path


def _mapped(level_map: Mapping[str, Any] | None, level: str) -> Any:
    """``map?.[level]`` keeping "absent" (``_MISSING``) apart from an explicit null."""
    if level_map is None:
        return _MISSING
    return level_map.get(level, _MISSING)


def _mapped_or_level(level_map: Mapping[str, Any] | None, level: str) -> Any:
    """``map?.[level] ?? level``."""
    value = _mapped(level_map, level)
    return level if value is _MISSING or value is None else value


def _off_not_disabled(level_map: Mapping[str, Any] | None) -> bool:
    """``map?.off !== null``: thinking can be switched off explicitly."""
    return _mapped(level_map, "off") is not None


def _template_values(
    model: Model, effort: str | None, values: Mapping[str, Any], budget: int | None
) -> dict[str, Any] | None:
    level_map = model.get("thinkingLevelMap")
    resolved: dict[str, Any] = {}
    for key, value in values.items():
        if not isinstance(value, dict):
            resolved[key] = value
            continue
        if not effort and value.get("omitWhenOff"):
            continue
        var = value.get("$var")
        if var == "thinking.enabled":
            resolved[key] = bool(effort)
        elif var == "thinking.budget":
            if budget is not None:
                resolved[key] = budget
        else:
            mapped = _mapped(level_map, effort) if effort else _mapped(level_map, "off")
            if mapped is _MISSING:
                if effort is not None:
                    resolved[key] = effort
            elif isinstance(mapped, str):
                resolved[key] = mapped
    return resolved or None


def _apply_thinking(
    params: dict[str, Any], model: Model, compat: CompletionsCompat, effort: str | None, budget: int | None
) -> None:
    if not model.get("reasoning"):
        return
    fmt = compat.thinking_format
    level_map = model.get("thinkingLevelMap")
    if fmt == "zai":
        params["thinking"] = {"type": "enabled", "clear_thinking": False} if effort else {"type": "disabled"}
        if effort and compat.supports_reasoning_effort:
            mapped = _mapped(level_map, effort)
            value = effort if mapped is _MISSING else mapped
            if isinstance(value, str):
                params["reasoning_effort"] = value
    elif fmt == "qwen":
        params["enable_thinking"] = bool(effort)
        if effort and compat.supports_reasoning_effort:
            params["reasoning_effort"] = _mapped_or_level(level_map, effort)
    elif fmt == "qwen-chat-template":
        params["chat_template_kwargs"] = {"enable_thinking": bool(effort), "preserve_thinking": True}
    elif fmt == "chat-template":
        kwargs = _template_values(model, effort, compat.chat_template_kwargs, budget)
        if kwargs:
            params["chat_template_kwargs"] = kwargs
    elif fmt == "baseten":
        args = _template_values(model, effort, compat.chat_template_args, budget)
        if args:
            params["chat_template_args"] = args
        if compat.supports_reasoning_effort:
            mapped = _mapped(level_map, effort) if effort else _mapped(level_map, "off")
            value = effort if mapped is _MISSING else mapped
            if isinstance(value, str):
                params["reasoning_effort"] = value
    elif fmt == "deepseek":
        if effort:
            params["thinking"] = {"type": "enabled"}
        elif _off_not_disabled(level_map):
            params["thinking"] = {"type": "disabled"}
        if effort and compat.supports_reasoning_effort:
            params["reasoning_effort"] = _mapped_or_level(level_map, effort)
    elif fmt == "openrouter":
        if effort:
            params["reasoning"] = {"effort": _mapped_or_level(level_map, effort)}
        elif _off_not_disabled(level_map):
            off = _mapped(level_map, "off")
            params["reasoning"] = {"effort": "none" if off is _MISSING or off is None else off}
    elif fmt == "ant-ling":
        if effort:
            mapped = _mapped(level_map, effort)
            if isinstance(mapped, str):
                params["reasoning"] = {"effort": mapped}
    elif fmt == "together":
        params["reasoning"] = {"enabled": bool(effort)}
        if effort and compat.supports_reasoning_effort:
            params["reasoning_effort"] = _mapped_or_level(level_map, effort)
    elif fmt == "string-thinking":
        if effort:
            params["thinking"] = _mapped_or_level(level_map, effort)
        elif _off_not_disabled(level_map):
            off = _mapped(level_map, "off")
            params["thinking"] = "none" if off is _MISSING or off is None else off
    elif effort and compat.supports_reasoning_effort:
        params["reasoning_effort"] = _mapped_or_level(level_map, effort)
    elif not effort and compat.supports_reasoning_effort:
        off = _mapped(level_map, "off")
        if isinstance(off, str):
            params["reasoning_effort"] = off


def project(model: Model, messages: list[Message], options: RequestOptions) -> ProviderRequest:
    option_headers = options.headers
    api_key = client_api_key(model["provider"], options.api_key, option_headers)

    compat = completions_compat(model)
    effort = resolve_reasoning(model, options.reasoning)
    max_tokens = base_max_tokens(model, messages, options)
    base_sampling = resolve_sampling_params(model, options.reasoning or "off", options.get("samplingParams"))

    transcript = resolve_transcript(messages, compat.supports_mid_convo_system_messages)
    grammar_inputs = grammar_input_properties(
        declared_tool_tuple(transcript), compat.supports_openai_grammar_tools
    )
    retention = resolve_cache_retention(options)
    session_id = options.session_id
    tools_plan = resolve_transcript_tools(transcript, compat.anchors_tool_additions)
    wire_messages = convert_messages(model, transcript, compat, tools_plan.anchors_additions, grammar_inputs)

    long_cache = retention == "long" and compat.supports_long_cache_retention
    params: dict[str, Any] = {"model": model["id"], "messages": wire_messages, "stream": True}
    if (
        ("api.openai.com" in model["baseUrl"] and retention != "none") or long_cache
    ) and session_id is not None:
        params["prompt_cache_key"] = session_id[:PROMPT_CACHE_KEY_MAX_CHARS]
    if long_cache:
        params["prompt_cache_retention"] = "24h"
    if compat.supports_usage_in_streaming:
        params["stream_options"] = {"include_usage": True}
    if compat.supports_store:
        params["store"] = False
    if max_tokens:
        params["max_tokens" if compat.max_tokens_field == "max_tokens" else "max_completion_tokens"] = (
            max_tokens
        )
    if options.temperature is not None:
        params["temperature"] = js_value(options.temperature)

    tools: list[dict[str, Any]] | None = None
    if tools_plan.request_tools:
        tools = convert_tools(tools_plan.request_tools, compat)
        params["tools"] = tools
        if compat.zai_tool_stream:
            params["tool_stream"] = True
    elif _has_tool_history(transcript):
        tools = []
        params["tools"] = tools

    if compat.cache_control_format == "anthropic" and retention != "none":
        marker = {"type": "ephemeral", "ttl": "1h"} if long_cache else {"type": "ephemeral"}
        apply_cache_control(wire_messages, tools, marker)

    if options.tool_choice:
        params["tool_choice"] = options.tool_choice
    if compat.vllm_priority is not None:
        params["priority"] = compat.vllm_priority[0]

    budget: int | None = None
    if effort and model.get("reasoning"):
        ceiling = params.get("max_tokens")
        if ceiling is None:
            ceiling = params.get("max_completion_tokens")
        if ceiling is None:
            ceiling = model["maxTokens"]
        clamped = clamp_thinking_budget_to_answer_room(
            thinking_budget_for_level(effort, options.thinking_budgets), ceiling
        )
        budget = clamped if clamped > 0 else None
    _apply_thinking(params, model, compat, effort, budget)
    if compat.thinking_budget_field and budget is not None:
        params[compat.thinking_budget_field] = budget

    raw_compat = model.get("compat") or {}
    if _js_truthy(raw_compat.get("openRouterRouting")):
        params["provider"] = raw_compat["openRouterRouting"]
    routing: Any = raw_compat.get("vercelGatewayRouting")
    if _js_truthy(routing) and (_js_truthy(routing.get("only")) or _js_truthy(routing.get("order"))):
        gateway: dict[str, Any] = {}
        if _js_truthy(routing.get("only")):
            gateway["only"] = routing["only"]
        if _js_truthy(routing.get("order")):
            gateway["order"] = routing["order"]
        params["providerOptions"] = {"gateway": gateway}

    sampling = resolve_sampling_params(model, effort or "off", base_sampling)
    if sampling:
        params.update(js_value(sampling))

    affinity_session = None if retention == "none" else session_id
    headers = _headers(model, transcript, api_key, option_headers, affinity_session, compat, options.env)
    return ProviderRequest(method="POST", url=_url(model["baseUrl"]), headers=headers, body=params)
