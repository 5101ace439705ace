"""Anthropic Messages projection (pi-ai ``anthropic-messages.ts``, 1.0.1+ semantics).

Why it looks the way it does:

- Models flagged ``supportsMidConvoSystemMessages`` get later system messages *in place*, as
  ``role: "system"`` messages. Each is held back until just before the next assistant message
  so it can never split a ``tool_use`` from its ``tool_result`` (Anthropic rejects that).
  Unflagged models get the replayed state folded into the leading ``system`` field.
- Models also flagged ``supportsMidConvoToolChanges`` (with at least one initial tool) keep the
  request-level ``tools`` list fixed for the whole session: the initial tools plus a reserved,
  never-loaded placeholder that pins Anthropic's tool-change scaffolding into the cached
  prefix. Later tools travel by value in ``tool_addition`` blocks (a same-name definition
  replaces the old one) and ``tool_removal`` blocks, so a tool change never invalidates the
  prompt cache. Everyone else gets the current tool list.
- Cache breakpoints sit on the system prompt, the last tool and the last user/system turn.
- Managed-effort models (``supportsMidConvoEffort``) always use adaptive thinking with
  ``output_config.effort: "high"`` at the top and carry the per-turn effort in empty system
  messages, so changing the effort does not rewrite the cached prefix.

Dict key order mirrors pi-ai's object literals: the body bytes must equal JSON.stringify's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from desktop.pi.projection import ProviderRequest, RequestOptions, resolve_kind
from desktop.pi.projection._budget import (
    adjust_max_tokens_for_thinking,
    base_max_tokens,
    clamp_max_tokens_to_context,
    clamp_thinking_budget_to_answer_room,
)
from desktop.pi.projection._cache import resolve_cache_retention
from desktop.pi.projection._facts import TranscriptFacts
from desktop.pi.projection._headers import copilot_headers, last_header_value, merge_headers
from desktop.pi.projection._js import js_blank, normalize_tool_call_id, sanitize_surrogates
from desktop.pi.projection._strict import json_schema_tool_parameters, resolve_json_schema_strict
from desktop.pi.projection._tool_memo import ToolMemo
from desktop.pi.text import render_system_update, system_message_text
from desktop.pi.transcript import current_tools, leading_system_message, resolve_transcript
from desktop.pi.transform import transform_messages
from desktop.pi.types import JsonObject, Message, Model

API_VERSION = "2023-06-01"
FINE_GRAINED_TOOL_STREAMING_BETA = "fine-grained-tool-streaming-2025-05-14"
INTERLEAVED_THINKING_BETA = "interleaved-thinking-2025-05-14"
SERVER_SIDE_FALLBACK_BETA = "server-side-fallback-2026-07-01"
MID_CONVERSATION_OUTPUT_CONFIG_BETA = "mid-conversation-output-config-2026-07-01"
THINKING_BINDING_CONTROLS_BETA = "thinking-binding-controls-2026-08-01"
INLINE_TOOLS_BETA = "inline-tools-2026-09-15"
OAUTH_BETAS = ("claude-code-20250219", "oauth-2025-04-20")
CLAUDE_CODE_VERSION = "2.1.280"
CLAUDE_CODE_IDENTITY = "You are Claude Code, Anthropic's official CLI for Claude."

#: Declared from the first request whenever tool changes are native; never loaded or callable.
DEFERRED_TOOL_PLACEHOLDER: JsonObject = {
    "name": "__pi_deferred_placeholder__",
    "description": "Reserved placeholder. Never available. Never call this.",
    "input_schema": {"type": "object", "properties": {}, "required": []},
    "defer_loading": True,
}

_EFFORTS = frozenset({"low", "medium", "high", "xhigh", "max"})
_CLAUDE_CODE_TOOLS = {
    name.lower(): name
    for name in (
        "Read",
        "Write",
        "Edit",
        "Bash",
        "Grep",
        "Glob",
        "AskUserQuestion",
        "EnterPlanMode",
        "ExitPlanMode",
        "KillShell",
        "NotebookEdit",
        "Skill",
        "Task",
        "TaskOutput",
        "TodoWrite",
        "WebFetch",
        "WebSearch",
    )
}
_STRICT_UNSUPPORTED = frozenset(
    {
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "maxItems",
        "uniqueItems",
        "minContains",
        "maxContains",
        "minProperties",
        "maxProperties",
    }
)
_STRICT_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}
)


def _strict_unsupported(key: str, value: Any) -> bool:
    if key in _STRICT_UNSUPPORTED:
        return True
    if key == "minItems":
        return value not in (0, 1) or isinstance(value, bool)
    if key == "format":
        return not isinstance(value, str) or value not in _STRICT_FORMATS
    return False


class _Compat:
    """``getAnthropicCompat``: catalog flags with pi-ai's defaults filled in."""

    def __init__(self, model: Model) -> None:
        compat: Mapping[str, Any] = model.get("compat") or {}
        openrouter = model["provider"] == "openrouter" or "openrouter.ai" in model["baseUrl"]

        def flag(name: str, default: Any) -> Any:
            value = compat.get(name)
            return default if value is None else value

        self.eager_tool_input_streaming: bool = flag("supportsEagerToolInputStreaming", True)
        self.long_cache_retention: bool = flag("supportsLongCacheRetention", True)
        self.session_affinity_headers: bool = flag("sendSessionAffinityHeaders", openrouter)
        self.session_affinity_format: str | None = flag(
            "sessionAffinityFormat", "openrouter" if openrouter else None
        )
        self.cache_control_on_tools: bool = flag("supportsCacheControlOnTools", True)
        self.temperature: bool = flag("supportsTemperature", True)
        self.allow_empty_signature: bool = flag("allowEmptySignature", False)
        self.strict_tools: bool = flag("supportsStrictTools", False)
        self.mid_convo_system: bool = flag("supportsMidConvoSystemMessages", False)
        self.mid_convo_tools: bool = flag("supportsMidConvoToolChanges", False)
        self.managed_effort: bool = compat.get("supportsMidConvoEffort") is True
        self.force_adaptive: bool = compat.get("forceAdaptiveThinking") is True
        self.fallback_models: list[Mapping[str, Any]] = list(compat.get("allowedFallbackModels") or [])


def _cache_control(retention: str, compat: _Compat) -> JsonObject | None:
    if retention == "none":
        return None
    if retention == "long" and compat.long_cache_retention:
        return {"type": "ephemeral", "ttl": "1h"}
    return {"type": "ephemeral"}


def _claude_code_name(name: str) -> str:
    return _CLAUDE_CODE_TOOLS.get(name.lower(), name)


# --- tools ----------------------------------------------------------------------------


def convert_tools(
    tools: Sequence[Mapping[str, Any]],
    oauth: bool,
    compat: _Compat,
    cache_control: JsonObject | None = None,
) -> list[JsonObject]:
    options = (oauth, compat.strict_tools, compat.eager_tool_input_streaming)
    converted = _TOOLS.convert(tools, options, lambda tool: _convert_tool(tool, oauth, compat))
    if cache_control is not None and converted:
        converted[-1]["cache_control"] = cache_control
    return converted


#: Each tool converted once per option set (design X11).
_TOOLS = ToolMemo()


def _convert_tool(tool: Mapping[str, Any], oauth: bool, compat: _Compat) -> JsonObject:
    strict = resolve_json_schema_strict(tool, compat.strict_tools, _strict_unsupported)
    parameters = json_schema_tool_parameters(tool, strict)
    properties = parameters.get("properties")
    required = parameters.get("required")
    legacy = {
        "type": "object",
        "properties": {} if properties is None else properties,
        "required": [] if required is None else required,
    }
    entry: JsonObject = {"name": _claude_code_name(tool["name"]) if oauth else tool["name"]}
    if "description" in tool:
        entry["description"] = tool["description"]
    if compat.eager_tool_input_streaming:
        entry["eager_input_streaming"] = True
    if strict:
        entry["strict"] = True
    entry["input_schema"] = {**parameters, **legacy} if strict else legacy
    return entry


# --- messages -------------------------------------------------------------------------


def _image_block(block: Mapping[str, Any]) -> JsonObject:
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": block["mimeType"], "data": block["data"]},
    }


def _tool_result_content(content: Sequence[Mapping[str, Any]]) -> str | list[JsonObject]:
    for block in content:
        if block.get("type") == "image":
            break
    else:
        return sanitize_surrogates("\n".join([block["text"] for block in content]))
    blocks = [
        {"type": "text", "text": sanitize_surrogates(block["text"])}
        if block.get("type") == "text"
        else _image_block(block)
        for block in content
    ]
    if not any(block["type"] == "text" for block in blocks):
        blocks.insert(0, {"type": "text", "text": "(see attached image)"})
    return blocks


ToolDefinitions = Callable[[Sequence[Mapping[str, Any]]], list[JsonObject]]


class _Converted:
    __slots__ = ("levels", "messages")

    def __init__(self) -> None:
        self.messages: list[JsonObject] = []
        #: wire index of an assistant message -> the effort it was produced with.
        self.levels: dict[int, str] = {}


def _system_blocks(
    message: Mapping[str, Any], oauth: bool, definitions: ToolDefinitions | None
) -> list[JsonObject]:
    blocks: list[JsonObject] = []
    text = render_system_update(message)  # type: ignore[arg-type]
    if text:
        blocks.append({"type": "text", "text": sanitize_surrogates(text)})
    if definitions is not None:
        added = message.get("toolsAdded") or []
        redefined = {tool["name"] for tool in added}
        for ref in message.get("toolsRemoved") or []:
            # A new definition under the same name replaces the old one: no removal needed.
            if ref["name"] in redefined:
                continue
            name = _claude_code_name(ref["name"]) if oauth else ref["name"]
            blocks.append({"type": "tool_removal", "tool": {"type": "tool_reference", "name": name}})
        for definition in definitions(added):
            blocks.append(
                {"type": "tool_addition", "tool": {"type": "tool_definition", "definition": definition}}
            )
    return blocks


def _user_message(message: Mapping[str, Any]) -> JsonObject | None:
    content = message["content"]
    if isinstance(content, str):
        return None if js_blank(content) else {"role": "user", "content": sanitize_surrogates(content)}
    blocks: list[JsonObject] = []
    for item in content:
        if item.get("type") == "text":
            if not js_blank(item["text"]):
                blocks.append({"type": "text", "text": sanitize_surrogates(item["text"])})
        else:
            blocks.append(_image_block(item))
    return {"role": "user", "content": blocks} if blocks else None


def _assistant_blocks(
    message: Mapping[str, Any], oauth: bool, allow_empty_signature: bool
) -> list[JsonObject]:
    blocks: list[JsonObject] = []
    for block in message["content"]:
        kind = block.get("type")
        if kind == "text":
            if not js_blank(block["text"]):
                blocks.append({"type": "text", "text": sanitize_surrogates(block["text"])})
        elif kind == "thinking":
            signature = block.get("thinkingSignature")
            if block.get("redacted"):
                blocks.append({"type": "redacted_thinking", "data": signature})
                continue
            signed = bool(signature) and not js_blank(signature)
            if not signed and js_blank(block["thinking"]):
                continue
            thinking = sanitize_surrogates(block["thinking"])
            if signed:
                blocks.append({"type": "thinking", "thinking": thinking, "signature": signature})
            elif allow_empty_signature:
                blocks.append({"type": "thinking", "thinking": thinking, "signature": ""})
            else:
                # An unsigned block (e.g. an aborted stream) cannot be replayed as thinking.
                blocks.append({"type": "text", "text": thinking})
        elif kind == "toolCall":
            arguments = block.get("arguments")
            blocks.append(
                {
                    "type": "tool_use",
                    "id": block["id"],
                    "name": _claude_code_name(block["name"]) if oauth else block["name"],
                    "input": {} if arguments is None else arguments,
                }
            )
    return blocks


_CACHEABLE_BLOCKS = frozenset({"text", "image", "tool_result", "tool_addition", "tool_removal"})


def convert_messages(
    messages: Sequence[Mapping[str, Any]],
    oauth: bool,
    cache_control: JsonObject | None,
    compat: _Compat,
    managed_provider: str | None,
    definitions: ToolDefinitions | None,
) -> _Converted:
    out = _Converted()
    wire = out.messages
    pending: list[JsonObject] = []
    count = len(messages)
    i = 0
    while i < count:
        message = messages[i]
        role = message["role"]
        if role == "system":
            blocks = _system_blocks(message, oauth, definitions)
            if blocks:
                pending.append({"role": "system", "content": blocks})
        elif role == "user":
            user = _user_message(message)
            if user is not None:
                wire.append(user)
        elif role == "assistant":
            wire.extend(pending)
            pending.clear()
            blocks = _assistant_blocks(message, oauth, compat.allow_empty_signature)
            if blocks:
                level = message.get("providerThinkingLevel")
                if (
                    managed_provider is not None
                    and message.get("api") == "anthropic-messages"
                    and message.get("provider") == managed_provider
                    and level in _EFFORTS
                ):
                    out.levels[len(wire)] = level
                wire.append({"role": "assistant", "content": blocks})
        elif role == "toolResult":
            results: list[JsonObject] = []
            while i < count and messages[i]["role"] == "toolResult":
                result = messages[i]
                block: JsonObject = {
                    "type": "tool_result",
                    "tool_use_id": result["toolCallId"],
                    "content": _tool_result_content(result["content"]),
                }
                if "isError" in result:
                    block["is_error"] = result["isError"]
                results.append(block)
                i += 1
            wire.append({"role": "user", "content": results})
            continue
        i += 1
    wire.extend(pending)

    if cache_control is not None and wire:
        last = wire[-1]
        if last["role"] in ("user", "system"):
            content = last["content"]
            if isinstance(content, list):
                if content and content[-1].get("type") in _CACHEABLE_BLOCKS:
                    content[-1]["cache_control"] = cache_control
            elif isinstance(content, str):
                last["content"] = [{"type": "text", "text": content, "cache_control": cache_control}]
    return out


def _with_effort_messages(converted: _Converted, active_effort: str) -> list[JsonObject]:
    messages: list[JsonObject] = []
    for index, message in enumerate(converted.messages):
        effort = converted.levels.get(index)
        if effort is not None:
            messages.append({"role": "system", "content": [], "output_config": {"effort": effort}})
        messages.append(message)
    messages.append({"role": "system", "content": [], "output_config": {"effort": active_effort}})
    return messages


# --- options (pi-ai streamSimple) -------------------------------------------------------


@dataclass(frozen=True)
class _Thinking:
    """What ``streamSimple`` decided: thinking on/off, effort or budget, and the output ceiling."""

    enabled: bool
    max_tokens: int
    effort: str | None = None
    budget: int | None = None


def _effort_for_level(model: Model, level: str) -> str:
    mapped = (model.get("thinkingLevelMap") or {}).get(level)
    if isinstance(mapped, str):
        return mapped
    return {"minimal": "low", "low": "low", "medium": "medium", "high": "high"}.get(level, "high")


def _resolve_thinking(
    model: Model, messages: Sequence[Message], options: RequestOptions, compat: _Compat
) -> _Thinking:
    base_max = base_max_tokens(model, messages, options)
    level = options.reasoning
    if not level:
        return _Thinking(False, base_max)
    if compat.force_adaptive:
        return _Thinking(True, base_max, effort=_effort_for_level(model, level))
    allowance = adjust_max_tokens_for_thinking(base_max, model["maxTokens"], level, options.thinking_budgets)
    max_tokens = clamp_max_tokens_to_context(model, messages, allowance.max_tokens)
    return _Thinking(
        True, max_tokens, budget=clamp_thinking_budget_to_answer_room(allowance.thinking_budget, max_tokens)
    )


def _beta_features(
    model: Model,
    options: RequestOptions,
    oauth: bool,
    native_tool_changes: bool,
    has_tools: bool,
    thinking: _Thinking,
    compat: _Compat,
) -> list[str]:
    found, configured = last_header_value((model.get("headers"), options.headers), "anthropic-beta")
    features: list[str]
    if found and configured is None:
        return []
    if found and configured is not None:
        features = [feature.strip() for feature in configured.split(",") if feature.strip()]
    else:
        features = []
        if oauth:
            features.extend(OAUTH_BETAS)
        if has_tools and not compat.eager_tool_input_streaming:
            features.append(FINE_GRAINED_TOOL_STREAMING_BETA)
        if model["reasoning"] and thinking.enabled and not compat.force_adaptive:
            features.append(INTERLEAVED_THINKING_BETA)
        if compat.fallback_models:
            features.append(SERVER_SIDE_FALLBACK_BETA)
        if compat.managed_effort:
            features.extend((MID_CONVERSATION_OUTPUT_CONFIG_BETA, THINKING_BINDING_CONTROLS_BETA))
        if native_tool_changes:
            features.append(INLINE_TOOLS_BETA)
    return list(dict.fromkeys(features))


def _headers(
    model: Model,
    options: RequestOptions,
    resolved: Sequence[Mapping[str, Any]],
    oauth: bool,
    retention: str,
    compat: _Compat,
    betas: list[str],
) -> dict[str, str]:
    """The SDK's layering: its own headers, auth, client defaults, content type, per-request betas."""
    sdk = {"accept": "application/json", "anthropic-version": API_VERSION}
    api_key = options.api_key
    copilot = model["provider"] == "github-copilot"
    auth: dict[str, str | None] = {}
    if api_key:
        auth = {"authorization": f"Bearer {api_key}"} if copilot or oauth else {"x-api-key": api_key}
    defaults: list[Mapping[str, str | None] | None] = [{"accept": "application/json"}]
    if copilot:
        defaults += [model.get("headers"), copilot_headers(resolved), options.headers]
    elif oauth:
        defaults += [
            {"user-agent": f"claude-cli/{CLAUDE_CODE_VERSION}", "x-app": "cli"},
            model.get("headers"),
            options.headers,
        ]
    else:
        session_id = None if retention == "none" else options.session_id
        affinity: dict[str, str | None] = {}
        if session_id and compat.session_affinity_headers:
            name = "x-session-id" if compat.session_affinity_format == "openrouter" else "x-session-affinity"
            affinity[name] = session_id
        defaults += [affinity, model.get("headers"), options.headers]
    request = {"anthropic-beta": ",".join(betas)} if betas else None
    return merge_headers(sdk, auth, *defaults, {"content-type": "application/json"}, request)


def _url(base_url: str) -> str:
    return f"{base_url[:-1] if base_url.endswith('/') else base_url}/v1/messages?beta=true"


# --- the projection ---------------------------------------------------------------------


def project(model: Model, messages: list[Message], options: RequestOptions) -> ProviderRequest:
    """Build the Messages API request pi-ai's ``streamSimple`` would send for this transcript."""
    compat = _Compat(model)
    thinking = _resolve_thinking(model, messages, options, compat)
    resolved = resolve_transcript(messages, compat.mid_convo_system)
    oauth = resolve_kind(model, options) == "oauth" and model["provider"] != "github-copilot"
    retention = resolve_cache_retention(options)
    cache_control = _cache_control(retention, compat)

    initial = leading_system_message(resolved)
    initial_text = system_message_text(initial) if initial else ""
    transformed = transform_messages(resolved, model, normalize_tool_call_id)
    conversation = transformed[1:] if initial else transformed
    initial_tools: list[Mapping[str, Any]] = list(initial.get("toolsAdded") or []) if initial else []
    native_tool_changes = compat.mid_convo_system and compat.mid_convo_tools and bool(initial_tools)

    def definitions(tools: Sequence[Mapping[str, Any]]) -> list[JsonObject]:
        return convert_tools(tools, oauth, compat)

    converted = convert_messages(
        conversation,
        oauth,
        cache_control,
        compat,
        model["provider"] if compat.managed_effort else None,
        definitions if native_tool_changes else None,
    )
    known = messages.has_tools if isinstance(messages, TranscriptFacts) else None
    # Replayed once: the tool list grows with a session, and this runs for every request.
    current = current_tools(resolved) if known is None or not native_tool_changes else []
    request_tools = initial_tools if native_tool_changes else current
    has_tools = bool(current) if known is None else known
    betas = _beta_features(model, options, oauth, native_tool_changes, has_tools, thinking, compat)

    body: JsonObject = {
        "model": model["id"],
        "messages": _with_effort_messages(converted, thinking.effort or "high")
        if compat.managed_effort
        else converted.messages,
        "max_tokens": thinking.max_tokens,
        "stream": True,
    }

    cached = {"cache_control": cache_control} if cache_control is not None else {}
    if oauth:
        body["system"] = [{"type": "text", "text": CLAUDE_CODE_IDENTITY, **cached}]
        if initial_text:
            body["system"].append({"type": "text", "text": sanitize_surrogates(initial_text), **cached})
    elif initial_text:
        body["system"] = [{"type": "text", "text": sanitize_surrogates(initial_text), **cached}]

    if (
        options.temperature is not None
        and not thinking.enabled
        and not compat.managed_effort
        and compat.temperature
    ):
        body["temperature"] = options.temperature

    tool_cache_control = cache_control if compat.cache_control_on_tools else None
    if native_tool_changes:
        body["tools"] = [
            *convert_tools(initial_tools, oauth, compat, tool_cache_control),
            DEFERRED_TOOL_PLACEHOLDER,
        ]
    elif request_tools:
        body["tools"] = convert_tools(request_tools, oauth, compat, tool_cache_control)

    if compat.managed_effort:
        body["thinking"] = {
            "type": "adaptive",
            "display": "summarized",
            "block_binding": {"prefix_mismatch_behavior": "drop_block"},
        }
        body["output_config"] = {"effort": "high"}
    elif model["reasoning"]:
        if thinking.enabled:
            display = "summarized"  # streamSimple never forwards thinkingDisplay
            if compat.force_adaptive:
                body["thinking"] = {"type": "adaptive", "display": display}
                if thinking.effort:
                    body["output_config"] = {"effort": thinking.effort}
            else:
                body["thinking"] = {
                    "type": "enabled",
                    "budget_tokens": thinking.budget or 1024,
                    "display": display,
                }
        elif (model.get("thinkingLevelMap") or {}).get("off", "") is not None:
            body["thinking"] = {"type": "disabled"}

    user_id = (options.metadata or {}).get("user_id")
    if isinstance(user_id, str):
        body["metadata"] = {"user_id": user_id}

    choice: Any = options.tool_choice
    if choice:
        body["tool_choice"] = {"type": choice} if isinstance(choice, str) else choice

    if compat.fallback_models:
        body["fallbacks"] = [{"model": fallback["model"]} for fallback in compat.fallback_models]

    headers = _headers(model, options, resolved, oauth, retention, compat, betas)
    return ProviderRequest("POST", _url(model["baseUrl"]), headers, body)
