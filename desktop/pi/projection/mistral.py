"""mistral-conversations: Mistral's native chat endpoint as pi-ai 1.0.3 calls it.

Mistral has no mid-conversation tool declarations, so ``tools`` is always the full current
set at request level. System messages go where they happened only for models flagged
``supportsMidConvoSystemMessages``; otherwise the replayed state is folded into the first
message. Tool-call ids must be exactly nine alphanumerics, so ids from other providers are
re-derived deterministically (with collision probing) for the whole request.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from desktop.pi.projection import ProjectionError, ProviderRequest, RequestOptions
from desktop.pi.projection._budget import base_max_tokens
from desktop.pi.projection._headers import last_header_value, merge_headers
from desktop.pi.projection._js import (
    js_blank,
    js_stringify,
    js_trim,
    js_value,
    sanitize_surrogates,
    short_hash,
)
from desktop.pi.projection._strict import json_schema_tool_parameters, resolve_json_schema_strict
from desktop.pi.projection._thinking import resolve_reasoning
from desktop.pi.text import render_system_update, system_message_text
from desktop.pi.transcript import current_tools, resolve_transcript
from desktop.pi.transform import transform_messages
from desktop.pi.types import AssistantMessage, Message, Model

TOOL_CALL_ID_LENGTH = 9
USER_IMAGE_OMITTED = "(image omitted: model does not support images)"
_TOOL_CHOICES = ("auto", "none", "any", "required")


def _alnum(text: str) -> str:
    # JS /[^a-zA-Z0-9]/g: ASCII letters and digits survive, everything else is dropped.
    return "".join(c for c in text if c.isascii() and c.isalnum())


def derive_tool_call_id(call_id: str, attempt: int = 0) -> str:
    """pi-ai's nine-alphanumeric Mistral id for ``call_id`` (the stream parser's too), the
    ``attempt``-th when an earlier one is taken."""
    normalized = _alnum(call_id)
    if attempt == 0 and len(normalized) == TOOL_CALL_ID_LENGTH:
        return normalized
    seed_base = normalized or call_id
    seed = seed_base if attempt == 0 else f"{seed_base}:{attempt}"
    return _alnum(short_hash(seed))[:TOOL_CALL_ID_LENGTH]


class _ToolCallIds:
    """Mistral ids: nine alphanumerics, stable per source id, unique within the request."""

    def __init__(self) -> None:
        self._ids: dict[str, str] = {}
        self._owners: dict[str, str] = {}

    def __call__(self, call_id: str, _model: Model, _source: AssistantMessage) -> str:
        existing = self._ids.get(call_id)
        if existing:
            return existing
        attempt = 0
        while True:
            candidate = derive_tool_call_id(call_id, attempt)
            owner = self._owners.get(candidate)
            if not owner or owner == call_id:
                self._ids[call_id] = candidate
                self._owners[candidate] = call_id
                return candidate
            attempt += 1


def _tools(tools: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    converted = []
    for tool in tools:
        strict = resolve_json_schema_strict(tool, True)
        converted.append(
            {
                "type": "function",
                "function": {
                    "name": tool["name"],
                    "description": tool["description"],
                    "parameters": js_value(json_schema_tool_parameters(tool, strict)),
                    "strict": bool(strict),
                },
            }
        )
    return converted


def _image_url(block: Mapping[str, Any]) -> str:
    return f"data:{block['mimeType']};base64,{block['data']}"


def _tool_result_text(text: str, has_images: bool, supports_images: bool, is_error: bool) -> str:
    trimmed = js_trim(text)
    prefix = "[tool error] " if is_error else ""
    if trimmed:
        suffix = (
            "\n[tool image omitted: model does not support images]"
            if has_images and not supports_images
            else ""
        )
        return f"{prefix}{trimmed}{suffix}"
    if has_images:
        return f"{prefix}(see attached image)" if supports_images else f"{prefix}{USER_IMAGE_OMITTED}"
    return f"{prefix}(no tool output)"


def _messages(messages: Sequence[Any], supports_images: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for index, msg in enumerate(messages):
        role = msg["role"]
        if role == "system":
            text = system_message_text(msg) if index == 0 else render_system_update(msg)
            if text:
                out.append({"role": "system", "content": sanitize_surrogates(text)})
        elif role == "user":
            content = msg["content"]
            if isinstance(content, str):
                out.append({"role": "user", "content": sanitize_surrogates(content)})
                continue
            chunks: list[dict[str, Any]] = []
            had_images = False
            for item in content:
                if item["type"] == "text":
                    chunks.append({"type": "text", "text": sanitize_surrogates(item["text"])})
                else:
                    had_images = True
                    if supports_images:
                        chunks.append({"type": "image_url", "image_url": _image_url(item)})
            if chunks:
                out.append({"role": "user", "content": chunks})
            elif had_images and not supports_images:
                out.append({"role": "user", "content": USER_IMAGE_OMITTED})
        elif role == "assistant":
            parts: list[dict[str, Any]] = []
            calls: list[dict[str, Any]] = []
            for block in msg["content"]:
                kind = block.get("type")
                if kind == "text":
                    if not js_blank(block["text"]):
                        parts.append({"type": "text", "text": sanitize_surrogates(block["text"])})
                elif kind == "thinking":
                    if not js_blank(block["thinking"]):
                        parts.append(
                            {
                                "type": "thinking",
                                "thinking": [
                                    {"type": "text", "text": sanitize_surrogates(block["thinking"])}
                                ],
                            }
                        )
                else:
                    calls.append(
                        {
                            "id": block["id"],
                            "type": "function",
                            "function": {
                                "name": block["name"],
                                "arguments": js_stringify(block.get("arguments") or {}),
                            },
                            "index": 0,
                        }
                    )
            if parts or calls:
                assistant: dict[str, Any] = {"role": "assistant", "prefix": False}
                if parts:
                    assistant["content"] = parts
                if calls:
                    assistant["tool_calls"] = calls
                out.append(assistant)
        else:
            blocks = msg["content"]
            text = "\n".join(sanitize_surrogates(b["text"]) for b in blocks if b.get("type") == "text")
            has_images = any(b.get("type") == "image" for b in blocks)
            tool_content: list[dict[str, Any]] = [
                {"type": "text", "text": _tool_result_text(text, has_images, supports_images, msg["isError"])}
            ]
            if supports_images:
                tool_content.extend(
                    {"type": "image_url", "image_url": _image_url(b)}
                    for b in blocks
                    if b.get("type") == "image"
                )
            out.append(
                # pi-ai renames camelCase keys by re-inserting them, so tool_call_id comes last.
                {
                    "role": "tool",
                    "name": msg["toolName"],
                    "content": tool_content,
                    "tool_call_id": msg["toolCallId"],
                }
            )
    return out


def _tool_choice(choice: Any) -> Any:
    if choice in _TOOL_CHOICES:
        return choice
    return {"type": "function", "function": {"name": choice["function"]["name"]}}


def _reasoning(model: Model, reasoning: str | None) -> tuple[str | None, str | None]:
    """(prompt_mode, reasoning_effort): mapped effort when the model has a level map."""
    level = resolve_reasoning(model, reasoning)
    effort_map = model.get("thinkingLevelMap") if model.get("reasoning") else None
    effort: str | None = None
    if effort_map:
        if level:
            mapped = effort_map.get(level)
            effort = "high" if mapped is None else mapped
        else:
            effort = effort_map.get("off")
    prompt_mode = "reasoning" if model.get("reasoning") and not effort_map and level else None
    return prompt_mode, effort


def _url(base_url: str) -> str:
    # new URL("v1/chat/completions", base-with-trailing-slash)
    base = base_url.split("?", 1)[0].split("#", 1)[0].rstrip("/")
    return f"{base}/v1/chat/completions"


def _headers(model: Model, api_key: str, options: RequestOptions) -> dict[str, str]:
    sdk = {
        "accept": "text/event-stream",
        "authorization": f"Bearer {api_key}",
        "content-type": "application/json",
    }
    headers = merge_headers(sdk, model.get("headers"), options.headers)
    # An explicit x-affinity (even a null that removes it) is the caller's choice.
    explicit_affinity, _ = last_header_value((model.get("headers"), options.headers), "x-affinity")
    if options.cache_retention != "none" and options.session_id and not explicit_affinity:
        headers["x-affinity"] = options.session_id
    return headers


def project(model: Model, messages: list[Message], options: RequestOptions) -> ProviderRequest:
    if not options.api_key:
        raise ProjectionError(
            f"No API key for provider: {model['provider']}; pass RequestOptions.api_key (pi-ai options.apiKey)"
        )
    max_tokens = base_max_tokens(model, messages, options)
    prompt_mode, effort = _reasoning(model, options.reasoning)
    compat = model.get("compat") or {}
    transcript = resolve_transcript(messages, compat.get("supportsMidConvoSystemMessages"))
    transformed = transform_messages(transcript, model, _ToolCallIds())

    body: dict[str, Any] = {
        "model": model["id"],
        "stream": True,
        "messages": _messages(transformed, "image" in model["input"]),
    }
    tools = current_tools(transcript)
    if tools:
        body["tools"] = _tools(tools)
    if options.temperature is not None:
        body["temperature"] = js_value(options.temperature)
    body["max_tokens"] = max_tokens
    if options.tool_choice:
        body["tool_choice"] = _tool_choice(options.tool_choice)
    if effort:
        body["reasoning_effort"] = effort
    if prompt_mode:
        body["prompt_mode"] = prompt_mode
    if options.cache_retention != "none" and options.session_id:
        body["prompt_cache_key"] = options.session_id
    return ProviderRequest(
        method="POST",
        url=_url(model["baseUrl"]),
        headers=_headers(model, options.api_key, options),
        body=body,
    )
