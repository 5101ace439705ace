"""OpenAI-compatible Chat Completions dialects (pi-ai ``detectCompat``/``getCompat``).

"OpenAI-compatible" servers disagree on dozens of details: the instruction role, the
max-tokens field, how reasoning is switched on, whether ``store`` or ``strict`` is accepted.
pi-ai detects the dialect from the provider name and base URL and lets ``model.compat``
override each switch; this module does the same so a custom endpoint behaves exactly as it
would under pi-ai.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from desktop.pi.types import Model


@dataclass(frozen=True)
class CompletionsCompat:
    supports_store: bool
    supports_developer_role: bool
    supports_reasoning_effort: bool
    supports_usage_in_streaming: bool
    max_tokens_field: str
    requires_tool_result_name: bool
    requires_assistant_after_tool_result: bool
    requires_thinking_as_text: bool
    requires_reasoning_content_on_assistant_messages: bool
    thinking_format: str
    chat_template_kwargs: dict[str, Any]
    chat_template_args: dict[str, Any]
    zai_tool_stream: bool
    supports_thinking_token_budget: bool
    thinking_token_budget_field: str | None
    supports_strict_mode: bool
    supports_openai_grammar_tools: bool
    supports_mid_convo_system_messages: bool
    supports_mid_convo_tool_additions: bool
    cache_control_format: str | None
    send_session_affinity_headers: bool
    session_affinity_format: str
    supports_long_cache_retention: bool
    #: ``(value,)`` when ``model.compat.vllmPriority`` is present (even null), else None.
    vllm_priority: tuple[Any] | None

    @property
    def thinking_budget_field(self) -> str | None:
        if self.thinking_token_budget_field:
            return self.thinking_token_budget_field
        return "thinking_token_budget" if self.supports_thinking_token_budget else None

    @property
    def anchors_tool_additions(self) -> bool:
        """In-place tool additions need both mid-conversation flags."""
        return self.supports_mid_convo_system_messages and self.supports_mid_convo_tool_additions


def _detect(model: Model) -> dict[str, Any]:
    provider = model["provider"]
    base_url = model["baseUrl"]
    is_zai = provider in ("zai", "zai-coding-cn") or "api.z.ai" in base_url or "open.bigmodel.cn" in base_url
    is_together = provider == "together" or "api.together.ai" in base_url or "api.together.xyz" in base_url
    is_moonshot = provider in ("moonshotai", "moonshotai-cn") or "api.moonshot." in base_url
    is_openrouter = provider == "openrouter" or "openrouter.ai" in base_url
    is_cf_workers = provider == "cloudflare-workers-ai" or "api.cloudflare.com" in base_url
    is_cf_gateway = provider == "cloudflare-ai-gateway" or "gateway.ai.cloudflare.com" in base_url
    is_nvidia = provider == "nvidia" or "integrate.api.nvidia.com" in base_url
    is_ant_ling = provider == "ant-ling" or "api.ant-ling.com" in base_url
    is_cerebras = provider == "cerebras" or "cerebras.ai" in base_url
    is_deepseek = provider == "deepseek" or "deepseek.com" in base_url.lower()
    is_grok = provider == "xai" or "api.x.ai" in base_url
    is_chutes = "chutes.ai" in base_url
    is_opencode = provider == "opencode" or "opencode.ai" in base_url

    non_standard = (
        is_nvidia
        or is_cerebras
        or is_grok
        or is_together
        or is_chutes
        or is_deepseek
        or is_zai
        or is_moonshot
        or is_opencode
        or is_cf_workers
        or is_cf_gateway
        or is_ant_ling
    )
    use_max_tokens = (
        is_chutes
        or is_deepseek
        or is_moonshot
        or is_cf_gateway
        or is_together
        or is_nvidia
        or is_ant_ling
        or is_zai
    )
    openrouter_developer = is_openrouter and (
        model["id"].startswith("anthropic/") or model["id"].startswith("openai/")
    )
    if is_deepseek:
        thinking_format = "deepseek"
    elif is_zai:
        thinking_format = "zai"
    elif is_together:
        thinking_format = "together"
    elif is_ant_ling:
        thinking_format = "ant-ling"
    elif is_openrouter:
        thinking_format = "openrouter"
    else:
        thinking_format = "openai"
    return {
        "supportsStore": not non_standard,
        "supportsDeveloperRole": openrouter_developer or (not non_standard and not is_openrouter),
        "supportsReasoningEffort": not (
            is_grok or is_zai or is_moonshot or is_together or is_cf_gateway or is_nvidia or is_ant_ling
        ),
        "supportsUsageInStreaming": True,
        "maxTokensField": "max_tokens" if use_max_tokens else "max_completion_tokens",
        "requiresToolResultName": False,
        "requiresAssistantAfterToolResult": False,
        "requiresThinkingAsText": False,
        "requiresReasoningContentOnAssistantMessages": is_deepseek,
        "thinkingFormat": thinking_format,
        "chatTemplateKwargs": {},
        "chatTemplateArgs": {},
        "zaiToolStream": False,
        "supportsThinkingTokenBudget": False,
        "thinkingTokenBudgetField": None,
        # OpenAI compatibility alone does not imply strict JSON-schema tool support.
        "supportsStrictMode": False,
        "supportsOpenAIGrammarTools": False,
        "supportsMidConvoSystemMessages": False,
        "supportsMidConvoToolAdditions": False,
        "cacheControlFormat": "anthropic"
        if provider == "openrouter" and model["id"].startswith("anthropic/")
        else None,
        "sendSessionAffinityHeaders": is_openrouter,
        "sessionAffinityFormat": "openrouter" if is_openrouter else "openai",
        "supportsLongCacheRetention": not (
            is_together or is_cf_workers or is_cf_gateway or is_nvidia or is_ant_ling
        ),
    }


def completions_compat(model: Model) -> CompletionsCompat:
    """Detected dialect, each switch overridden by ``model.compat`` where it is set (not null)."""
    detected = _detect(model)
    explicit = model.get("compat") or {}

    def pick(name: str) -> Any:
        value = explicit.get(name)
        return detected[name] if value is None else value

    return CompletionsCompat(
        supports_store=bool(pick("supportsStore")),
        supports_developer_role=bool(pick("supportsDeveloperRole")),
        supports_reasoning_effort=bool(pick("supportsReasoningEffort")),
        supports_usage_in_streaming=pick("supportsUsageInStreaming") is not False,
        max_tokens_field=pick("maxTokensField"),
        requires_tool_result_name=bool(pick("requiresToolResultName")),
        requires_assistant_after_tool_result=bool(pick("requiresAssistantAfterToolResult")),
        requires_thinking_as_text=bool(pick("requiresThinkingAsText")),
        requires_reasoning_content_on_assistant_messages=bool(
            pick("requiresReasoningContentOnAssistantMessages")
        ),
        thinking_format=pick("thinkingFormat"),
        chat_template_kwargs=pick("chatTemplateKwargs"),
        chat_template_args=pick("chatTemplateArgs"),
        zai_tool_stream=bool(pick("zaiToolStream")),
        supports_thinking_token_budget=bool(pick("supportsThinkingTokenBudget")),
        thinking_token_budget_field=pick("thinkingTokenBudgetField"),
        supports_strict_mode=pick("supportsStrictMode") is not False,
        supports_openai_grammar_tools=bool(pick("supportsOpenAIGrammarTools")),
        supports_mid_convo_system_messages=pick("supportsMidConvoSystemMessages") is True,
        supports_mid_convo_tool_additions=pick("supportsMidConvoToolAdditions") is True,
        cache_control_format=pick("cacheControlFormat"),
        send_session_affinity_headers=bool(pick("sendSessionAffinityHeaders")),
        session_affinity_format=pick("sessionAffinityFormat"),
        supports_long_cache_retention=bool(pick("supportsLongCacheRetention")),
        vllm_priority=(explicit["vllmPriority"],) if "vllmPriority" in explicit else None,
    )
