"""Transcript -> Chat Completions ``messages`` (pi-ai ``convertMessages`` for openai-completions).

Chronology is the point: on a route flagged for mid-conversation system messages, each later
system message is sent where it happened as an update, and (when the route also accepts tool
additions) a system message carrying ``tools`` declares new tools in place, so the cached
prefix never changes. Everything else reproduces pi-ai's per-dialect quirks exactly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from desktop.pi.projection._chat_compat import CompletionsCompat
from desktop.pi.projection._js import (
    js_blank,
    js_id_chars,
    js_stringify,
    js_value,
    sanitize_surrogates,
    short_hash,
)
from desktop.pi.projection._strict import (
    grammar_tool_input,
    json_schema_tool_parameters,
    resolve_grammar,
    resolve_json_schema_strict,
)
from desktop.pi.projection._tool_memo import ToolMemo
from desktop.pi.text import render_system_update, system_message_text
from desktop.pi.transform import transform_messages
from desktop.pi.types import AssistantMessage, Message, Model

REASONING_FIELDS = frozenset({"reasoning", "reasoning_content", "reasoning_text"})
BRIDGE_TEXT = "I have processed the tool results."


def normalize_tool_call_id(call_id: str, model: Model, _source: AssistantMessage) -> str:
    """Chat Completions ids: Responses-style ``call|item`` ids shortened to <= 40 safe chars."""
    if "|" in call_id:
        call_part, _, item_part = call_id.partition("|")
        call_part = js_id_chars(call_part)
        item_part = js_id_chars(item_part)
        combined = f"{call_part}_{item_part}" if item_part else call_part
        if len(combined) <= 40:
            return combined
        digest = short_hash(call_id)[:8]
        return f"{call_part[: max(1, 40 - len(digest) - 1)]}_{digest}"
    if model["provider"] == "openai":
        return call_id[:40] if len(call_id) > 40 else call_id
    return call_id


def convert_tools(tools: Sequence[Mapping[str, Any]], compat: CompletionsCompat) -> list[dict[str, Any]]:
    options = (compat.supports_openai_grammar_tools, compat.supports_strict_mode)
    return _TOOLS.convert(tools, options, lambda tool: _convert_tool(tool, compat))


#: Each tool converted once per option set (design X11).
_TOOLS = ToolMemo()


def _convert_tool(tool: Mapping[str, Any], compat: CompletionsCompat) -> dict[str, Any]:
    grammar = resolve_grammar(tool, compat.supports_openai_grammar_tools)
    if grammar is not None:
        return {
            "type": "custom",
            "custom": {
                "name": tool["name"],
                "description": tool["description"],
                "format": {
                    "type": "grammar",
                    "grammar": {"syntax": grammar.format, "definition": grammar.definition},
                },
            },
        }
    strict = resolve_json_schema_strict(tool, compat.supports_strict_mode)
    function: dict[str, Any] = {
        "name": tool["name"],
        "description": tool["description"],
        "parameters": js_value(json_schema_tool_parameters(tool, strict)),
    }
    if compat.supports_strict_mode:
        function["strict"] = bool(strict)
    return {"type": "function", "function": function}


# --- reasoning_details replay -------------------------------------------------------------


def _valid_common_detail_fields(detail: Mapping[str, Any]) -> bool:
    detail_id = detail.get("id")
    index = detail.get("index")
    return (
        (detail_id is None or isinstance(detail_id, str))
        and ("format" not in detail or isinstance(detail["format"], str))
        and ("index" not in detail or (isinstance(index, int | float) and not isinstance(index, bool)))
    )


def _is_reasoning_detail(detail: Any) -> bool:
    if not isinstance(detail, dict) or not _valid_common_detail_fields(detail):
        return False
    kind = detail.get("type")
    if kind == "reasoning.summary":
        return isinstance(detail.get("summary"), str)
    if kind == "reasoning.encrypted":
        return isinstance(detail.get("data"), str)
    if kind == "reasoning.text":
        signature = detail.get("signature")
        return isinstance(detail.get("text"), str) and (signature is None or isinstance(signature, str))
    return False


def _parse_json(text: str | None, opener: str) -> Any:
    # Cheap reject first: most signatures are field names or opaque tokens, not JSON.
    if not text or text.lstrip(" \t\n\r")[:1] != opener:
        return None
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return None


def _reasoning_details(signature: str | None) -> list[Any] | None:
    parsed = _parse_json(signature, "[")
    if isinstance(parsed, list) and parsed and all(_is_reasoning_detail(d) for d in parsed):
        return parsed
    return None


def _legacy_encrypted_detail(signature: str | None) -> dict[str, Any] | None:
    parsed = _parse_json(signature, "{")
    if (
        _is_reasoning_detail(parsed)
        and parsed["type"] == "reasoning.encrypted"
        and isinstance(parsed.get("id"), str)
        and parsed["id"]
        and parsed["data"]
    ):
        result: dict[str, Any] = parsed
        return result
    return None


# --- messages ------------------------------------------------------------------------------


def _user_message(content: Any) -> dict[str, Any] | None:
    if isinstance(content, str):
        return {"role": "user", "content": sanitize_surrogates(content)}
    parts: list[dict[str, Any]] = []
    for item in content:
        if item["type"] == "text":
            if item["text"]:
                parts.append({"type": "text", "text": sanitize_surrogates(item["text"])})
        else:
            parts.append(
                {"type": "image_url", "image_url": {"url": f"data:{item['mimeType']};base64,{item['data']}"}}
            )
    return {"role": "user", "content": parts} if parts else None


def _assistant_message(
    msg: Mapping[str, Any], model: Model, compat: CompletionsCompat, grammar_inputs: Mapping[str, str]
) -> dict[str, Any] | None:
    out: dict[str, Any] = {
        "role": "assistant",
        "content": "" if compat.requires_assistant_after_tool_result else None,
    }
    text_parts: list[dict[str, Any]] = []
    thinking_blocks: list[Mapping[str, Any]] = []
    tool_calls: list[Mapping[str, Any]] = []
    for block in msg["content"]:
        kind = block.get("type")
        if kind == "text":
            if not js_blank(block["text"]):
                text_parts.append({"type": "text", "text": sanitize_surrogates(block["text"])})
        elif kind == "thinking":
            thinking_blocks.append(block)
        elif kind == "toolCall":
            tool_calls.append(block)
    assistant_text = "".join(part["text"] for part in text_parts)

    preserved: list[Any] | None = None
    for block in thinking_blocks:
        preserved = _reasoning_details(block.get("thinkingSignature"))
        if preserved is not None:
            break
    if preserved is None and tool_calls:
        legacy = [
            d
            for d in (_legacy_encrypted_detail(call.get("thoughtSignature")) for call in tool_calls)
            if d is not None
        ]
        preserved = legacy or None

    thinking = [block for block in thinking_blocks if not js_blank(block["thinking"])]
    if thinking:
        if compat.requires_thinking_as_text:
            text = "\n\n".join(sanitize_surrogates(block["thinking"]) for block in thinking)
            out["content"] = [{"type": "text", "text": text}, *text_parts]
        else:
            if assistant_text:
                out["content"] = assistant_text
            if preserved is None:
                signature = thinking[0].get("thinkingSignature")
                if model["provider"] == "opencode-go" and signature == "reasoning":
                    signature = "reasoning_content"
                if signature in REASONING_FIELDS:
                    out[signature] = "\n".join(block["thinking"] for block in thinking)
    elif assistant_text:
        out["content"] = assistant_text

    if tool_calls:
        calls = []
        for call in tool_calls:
            input_property = grammar_inputs.get(call["name"])
            if input_property is not None:
                raw = grammar_tool_input(call["name"], call["arguments"], input_property)
                calls.append(
                    {
                        "id": call["id"],
                        "type": "custom",
                        "custom": {"name": call["name"], "input": sanitize_surrogates(raw)},
                    }
                )
            else:
                calls.append(
                    {
                        "id": call["id"],
                        "type": "function",
                        "function": {"name": call["name"], "arguments": js_stringify(call["arguments"])},
                    }
                )
        out["tool_calls"] = calls
    if preserved is not None:
        out["reasoning_details"] = preserved
    if (
        compat.requires_reasoning_content_on_assistant_messages
        and model.get("reasoning")
        and "reasoning_content" not in out
    ):
        out["reasoning_content"] = ""
    if not out["content"] and not tool_calls:
        return None
    return out


def convert_messages(
    model: Model,
    messages: Sequence[Message],
    compat: CompletionsCompat,
    anchors_additions: bool,
    grammar_inputs: Mapping[str, str],
) -> list[dict[str, Any]]:
    """``messages`` must already be resolved for the route (folded unless mid-conversation)."""
    transformed: list[Any] = transform_messages(messages, model, normalize_tool_call_id)
    instruction_role = "developer" if model.get("reasoning") and compat.supports_developer_role else "system"
    supports_images = "image" in model["input"]
    bridge = compat.requires_assistant_after_tool_result
    params: list[dict[str, Any]] = []
    last_role: str | None = None
    i = 0
    count = len(transformed)
    while i < count:
        msg = transformed[i]
        role = msg["role"]
        if bridge and last_role == "toolResult" and role == "user":
            params.append({"role": "assistant", "content": BRIDGE_TEXT})

        if role == "system":
            added = (msg.get("toolsAdded") or []) if i > 0 and anchors_additions else []
            if added:
                params.append({"role": "system", "tools": convert_tools(added, compat)})
            text = system_message_text(msg) if i == 0 else render_system_update(msg)
            if text:
                params.append({"role": instruction_role, "content": sanitize_surrogates(text)})
        elif role == "user":
            converted = _user_message(msg["content"])
            if converted is None:
                i += 1
                continue
            params.append(converted)
        elif role == "assistant":
            converted = _assistant_message(msg, model, compat, grammar_inputs)
            if converted is None:
                i += 1
                continue
            params.append(converted)
        elif role == "toolResult":
            images: list[dict[str, Any]] = []
            while i < count and transformed[i]["role"] == "toolResult":
                result = transformed[i]
                content = result["content"]
                text = "\n".join(block["text"] for block in content if block.get("type") == "text")
                has_images = any(block.get("type") == "image" for block in content)
                if not text:
                    text = "(see attached image)" if has_images else "(no tool output)"
                tool_message: dict[str, Any] = {
                    "role": "tool",
                    "content": sanitize_surrogates(text),
                    "tool_call_id": result["toolCallId"],
                }
                if compat.requires_tool_result_name and result.get("toolName"):
                    tool_message["name"] = result["toolName"]
                params.append(tool_message)
                if has_images and supports_images:
                    images.extend(
                        {
                            "type": "image_url",
                            "image_url": {"url": f"data:{block['mimeType']};base64,{block['data']}"},
                        }
                        for block in content
                        if block.get("type") == "image"
                    )
                i += 1
            if images:
                if bridge:
                    params.append({"role": "assistant", "content": BRIDGE_TEXT})
                params.append(
                    {
                        "role": "user",
                        "content": [{"type": "text", "text": "Attached image(s) from tool result:"}, *images],
                    }
                )
                last_role = "user"
            else:
                last_role = "toolResult"
            continue
        last_role = role
        i += 1
    return params


# --- Anthropic-style cache markers (OpenRouter relays of Anthropic models) -----------------


def _mark_text(message: dict[str, Any], marker: Mapping[str, Any]) -> bool:
    content = message.get("content")
    if isinstance(content, str):
        if not content:
            return False
        message["content"] = [{"type": "text", "text": content, "cache_control": dict(marker)}]
        return True
    if not isinstance(content, list):
        return False
    for part in reversed(content):
        if part.get("type") == "text":
            part["cache_control"] = dict(marker)
            return True
    return False


def apply_cache_control(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, marker: Mapping[str, Any]
) -> None:
    for message in messages:
        if message["role"] in ("system", "developer"):
            _mark_text(message, marker)
            break
    if tools:
        tools[-1]["cache_control"] = dict(marker)
    for message in reversed(messages):
        if message["role"] in ("user", "assistant", "tool") and _mark_text(message, marker):
            return
