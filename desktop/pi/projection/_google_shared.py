"""The Gemini request body shared by ``google-generative-ai`` and ``google-vertex``.

Gemini has no mid-conversation system messages and no tool deltas, so the transcript is always
folded: the replayed system state becomes ``systemInstruction`` and the complete current tool
list is sent as ``functionDeclarations`` on every request (pi-ai ``google-shared.ts``).

The body is built directly in the shape the Google GenAI SDK puts on the wire: the SDK moves
``systemInstruction``/``tools``/``toolConfig`` out of the config, and orders part fields by its
own schema, which differs between the Gemini API (``mldev``) and Vertex (e.g. a function call is
``{args, id, name}`` on one and ``{name, args, id}`` on the other).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from desktop.pi.projection import ProjectionError, RequestOptions
from desktop.pi.projection._budget import base_max_tokens
from desktop.pi.projection._google_thinking import GoogleFamily, thinking_config
from desktop.pi.projection._headers import merge_headers
from desktop.pi.projection._js import js_blank, js_value, normalize_tool_call_id, sanitize_surrogates
from desktop.pi.projection._strict import json_schema_tool_parameters, resolve_json_schema_strict
from desktop.pi.text import system_message_text
from desktop.pi.transcript import collapse_system_messages, leading_system_message
from desktop.pi.transform import transform_messages
from desktop.pi.types import AssistantMessage, Message, Model

_GEMINI_MAJOR = re.compile(r"^gemini(?:-live)?-(\d+)")
_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")
_API_VERSION_SEGMENT = re.compile(r"v\d+(?:beta\d*)?")
_API_VERSION_IN_TEXT = re.compile(r"(?:^|/)v\d+(?:beta\d*)?(?:/|$)")

TOOL_RESULT_IMAGE_TEXT = "Tool result image:"


# --- model traits ---------------------------------------------------------------------------


def gemini_major_version(model_id: str) -> int | None:
    match = _GEMINI_MAJOR.match(model_id.lower())
    return int(match.group(1)) if match else None


def requires_tool_call_id(model_id: str) -> bool:
    """Gemini 3+, and Claude / gpt-oss behind Google APIs, need ids on calls and responses."""
    major = gemini_major_version(model_id)
    return model_id.startswith(("claude-", "gpt-oss-")) or (major is not None and major >= 3)


def _multimodal_function_response(model_id: str) -> bool:
    """Gemini 3+ nests tool-result images in the function response; older Gemini cannot."""
    major = gemini_major_version(model_id)
    return major >= 3 if major is not None else True


def supports_strict_tools(model_id: str) -> bool:
    major = gemini_major_version(model_id)
    return major is not None and major >= 3


def _normalize_call_id(call_id: str, model: Model, message: AssistantMessage) -> str:
    return normalize_tool_call_id(call_id) if requires_tool_call_id(model["id"]) else call_id


def _signature(same_model: bool, signature: Any) -> str | None:
    """Replay a thought signature only to the model that produced it, and only if it is base64."""
    if not same_model or not isinstance(signature, str) or not signature:
        return None
    if len(signature) % 4 != 0 or not _BASE64.fullmatch(signature):
        return None
    return signature


# --- contents (parts in SDK wire order) -----------------------------------------------------


def _text_part(text: str, signature: str | None = None, thought: bool = False) -> dict[str, Any]:
    part: dict[str, Any] = {"text": sanitize_surrogates(text)}
    if thought:
        part["thought"] = True
    if signature:
        part["thoughtSignature"] = signature
    return part


class _Converter:
    """Builds ``contents`` for one model and wire dialect; model traits are resolved once."""

    def __init__(self, model: Model, vertex: bool) -> None:
        self.vertex = vertex
        self.provider = model["provider"]
        self.model_id = model["id"]
        self.include_id = requires_tool_call_id(model["id"])
        self.images = "image" in model["input"]
        self.multimodal_response = _multimodal_function_response(model["id"])
        self.contents: list[dict[str, Any]] = []

    def inline_data(self, image: Mapping[str, Any]) -> dict[str, Any]:
        if self.vertex:
            return {"inlineData": {"mimeType": image["mimeType"], "data": image["data"]}}
        return {"inlineData": {"data": image["data"], "mimeType": image["mimeType"]}}

    def function_call(self, call: Mapping[str, Any], signature: str | None) -> dict[str, Any]:
        args = call.get("arguments")
        args = {} if args is None else js_value(args)
        if self.vertex:
            body: dict[str, Any] = {"name": call["name"], "args": args}
            if self.include_id:
                body["id"] = call["id"]
        else:
            body = {"args": args}
            if self.include_id:
                body["id"] = call["id"]
            body["name"] = call["name"]
        part: dict[str, Any] = {"functionCall": body}
        if signature:
            part["thoughtSignature"] = signature
        return part

    def user(self, message: Mapping[str, Any]) -> None:
        content = message["content"]
        if isinstance(content, str):
            self.contents.append({"parts": [{"text": sanitize_surrogates(content)}], "role": "user"})
            return
        parts = [
            {"text": sanitize_surrogates(item["text"])}
            if item.get("type") == "text"
            else self.inline_data(item)
            for item in content
        ]
        if parts:
            self.contents.append({"parts": parts, "role": "user"})

    def assistant(self, message: Mapping[str, Any]) -> None:
        same = message.get("provider") == self.provider and message.get("model") == self.model_id
        parts: list[dict[str, Any]] = []
        for block in message["content"]:
            kind = block.get("type")
            if kind == "text":
                signature = _signature(same, block.get("textSignature"))
                if js_blank(block.get("text")) and not signature:
                    continue
                parts.append(_text_part(block["text"], signature))
            elif kind == "thinking":
                if same:
                    signature = _signature(same, block.get("thinkingSignature"))
                    if js_blank(block.get("thinking")) and not signature:
                        continue
                    parts.append(_text_part(block["thinking"], signature, thought=True))
                elif not js_blank(block.get("thinking")):
                    parts.append(_text_part(block["thinking"]))
            elif kind == "toolCall":
                parts.append(self.function_call(block, _signature(same, block.get("thoughtSignature"))))
        if parts:
            self.contents.append({"parts": parts, "role": "model"})

    def tool_result(self, message: Mapping[str, Any]) -> None:
        blocks = message["content"]
        texts = [block["text"] for block in blocks if block.get("type") == "text"]
        text = texts[0] if len(texts) == 1 else "\n".join(texts)
        images = [block for block in blocks if block.get("type") == "image"] if self.images else []
        value = sanitize_surrogates(text) if text else ("(see attached image)" if images else "")
        response: dict[str, Any] = {
            "name": message["toolName"],
            "response": {"error": value} if message.get("isError") else {"output": value},
        }
        if images and self.multimodal_response:
            # The SDK passes function responses through untouched: nested images keep pi-ai's order.
            response["parts"] = [
                {"inlineData": {"mimeType": i["mimeType"], "data": i["data"]}} for i in images
            ]
        if self.include_id:
            response["id"] = message["toolCallId"]
        part = {"functionResponse": response}
        # All function responses of a turn share one user content.
        contents = self.contents
        last = contents[-1] if contents else None
        if (
            last is not None
            and last["role"] == "user"
            and any("functionResponse" in p for p in last["parts"])
        ):
            last["parts"].append(part)
        else:
            contents.append({"parts": [part], "role": "user"})
        if images and not self.multimodal_response:
            parts = [{"text": TOOL_RESULT_IMAGE_TEXT}, *(self.inline_data(i) for i in images)]
            contents.append({"parts": parts, "role": "user"})


def convert_messages(model: Model, conversation: Sequence[Message], vertex: bool) -> list[dict[str, Any]]:
    """Gemini ``contents`` for a folded conversation (no system messages)."""
    converter = _Converter(model, vertex)
    handlers = {"user": converter.user, "assistant": converter.assistant, "toolResult": converter.tool_result}
    for message in transform_messages(conversation, model, _normalize_call_id):
        handler = handlers.get(message["role"])
        if handler is not None:
            handler(message)
    return converter.contents


# --- tools ----------------------------------------------------------------------------------


def function_declarations(tools: Sequence[Mapping[str, Any]], supports_strict: bool) -> list[dict[str, Any]]:
    declarations = []
    for tool in tools:
        parameters = json_schema_tool_parameters(tool, resolve_json_schema_strict(tool, supports_strict))
        declarations.append(
            {
                "name": tool["name"],
                "description": tool["description"],
                "parametersJsonSchema": js_value(parameters),
            }
        )
    return declarations


def function_calling_mode(
    tools: Sequence[Mapping[str, Any]], tool_choice: str | dict[str, Any] | None, supports_strict: bool
) -> str | None:
    if isinstance(tool_choice, str) and tool_choice in ("none", "any"):
        return tool_choice.upper()
    if any(resolve_json_schema_strict(tool, supports_strict) for tool in tools):
        return "VALIDATED"
    return "AUTO" if tool_choice else None


# --- body, URL and headers ------------------------------------------------------------------


def build_body(
    model: Model, messages: Sequence[Message], options: RequestOptions, family: GoogleFamily
) -> dict[str, Any]:
    """The ``generateContent`` body pi-ai's Google adapters send, in SDK wire order."""
    vertex = family == "google-vertex"
    folded = collapse_system_messages(messages)
    head = leading_system_message(folded)
    conversation = folded[1:] if head else folded
    contents = convert_messages(model, conversation, vertex)
    if not contents:
        raise ProjectionError(
            "Gemini requires at least one user or model turn in 'messages'; the transcript has only "
            "system state. Add a user message before projecting."
        )
    body: dict[str, Any] = {"contents": contents}
    instruction = system_message_text(head) if head else ""
    if instruction:
        body["systemInstruction"] = {"parts": [{"text": sanitize_surrogates(instruction)}], "role": "user"}
    tools = list(head.get("toolsAdded") or []) if head else []
    if tools:
        strict_ok = supports_strict_tools(model["id"])
        body["tools"] = [{"functionDeclarations": function_declarations(tools, strict_ok)}]
        mode = function_calling_mode(tools, options.tool_choice, strict_ok)
        if mode is not None:
            body["toolConfig"] = {"functionCallingConfig": {"mode": mode}}
    generation: dict[str, Any] = {}
    if options.temperature is not None:
        generation["temperature"] = js_value(options.temperature)
    generation["maxOutputTokens"] = base_max_tokens(model, messages, options)
    thinking = thinking_config(model, options, family)
    if thinking is not None:
        generation["thinkingConfig"] = thinking
    body["generationConfig"] = generation
    return body


def model_path(model: Model, vertex: bool) -> str:
    """The SDK's model resource name (``tModel``)."""
    model_id = model["id"]
    if "?" in model_id or "&" in model_id or ".." in model_id:
        raise ProjectionError(
            f"invalid model id {model_id!r} in model field 'id': '?', '&' and '..' are not allowed"
        )
    if not vertex:
        return model_id if model_id.startswith(("models/", "tunedModels/")) else f"models/{model_id}"
    if model_id.startswith(("publishers/", "projects/", "models/")):
        return model_id
    if "/" in model_id:
        publisher, name = model_id.split("/")[:2]
        return f"publishers/{publisher}/models/{name}"
    return f"publishers/google/models/{model_id}"


def stream_suffix(model: Model, vertex: bool) -> str:
    return f"/{model_path(model, vertex)}:streamGenerateContent?alt=sse"


def base_url_has_api_version(base_url: str) -> bool:
    parts = urlsplit(base_url)
    if parts.scheme and parts.netloc:
        return any(_API_VERSION_SEGMENT.fullmatch(segment) for segment in parts.path.split("/"))
    return bool(_API_VERSION_IN_TEXT.search(base_url))


def merged_headers(model: Model, options: RequestOptions) -> dict[str, str]:
    """Model headers, then request headers, over the SDK's content type."""
    return merge_headers({"content-type": "application/json"}, model.get("headers"), options.headers)


def with_api_key(headers: dict[str, str], api_key: str) -> dict[str, str]:
    """The SDK adds the key header unless the caller already set one."""
    if not any(name.lower() == "x-goog-api-key" for name in headers):
        headers["x-goog-api-key"] = api_key
    return headers
