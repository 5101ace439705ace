"""Amazon Bedrock Converse Stream projection (pi-ai ``bedrock-converse-stream.ts``).

pi-ai hands an input object to the AWS SDK, which moves ``modelId`` into the URL, encodes
blobs (images, redacted reasoning) as base64 and writes members in the service schema's
order. This module builds that serialized body directly, so the preview shows the bytes the
endpoint receives (the oracle records them from the SDK's own serializer).

Bedrock has no mid-conversation system messages: replayed system state is always folded
into the leading ``system`` field. Cache points are added only for Claude models that
support prompt caching.

Authentication: a bearer token (the API key, or ``AWS_BEARER_TOKEN_BEDROCK``) becomes an
``authorization: Bearer`` header here. Without one, the request must be SigV4-signed; that
needs credentials and the current time, so it is the host HTTP client's job, done over these
exact bytes, never the projection's.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote, urlsplit

from desktop.pi.projection import ProjectionError, ProviderRequest, RequestOptions, resolve_kind
from desktop.pi.projection._budget import (
    adjust_max_tokens_for_thinking,
    base_max_tokens,
    clamp_max_tokens_to_context,
    clamp_reasoning,
    clamp_thinking_budget_to_answer_room,
)
from desktop.pi.projection._cache import resolve_cache_retention
from desktop.pi.projection._headers import merge_headers
from desktop.pi.projection._js import js_blank, normalize_tool_call_id, sanitize_surrogates
from desktop.pi.projection._strict import json_schema_tool_parameters, resolve_json_schema_strict
from desktop.pi.text import system_message_text
from desktop.pi.transcript import collapse_system_messages, current_tools, leading_system_message
from desktop.pi.transform import transform_messages
from desktop.pi.types import JsonObject, Message, Model

EMPTY_TEXT_PLACEHOLDER = "<empty>"
THINKING_BINDING_CONTROLS_BETA = "thinking-binding-controls-2026-08-01"
INTERLEAVED_THINKING_BETA = "interleaved-thinking-2025-05-14"
DEFAULT_REGION = "us-east-1"
_BUDGET_DEFAULTS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384, "xhigh": 16384, "max": 16384}
_IMAGE_FORMATS = {
    "image/jpeg": "jpeg",
    "image/jpg": "jpeg",
    "image/png": "png",
    "image/gif": "gif",
    "image/webp": "webp",
}
_ARN_REGION = re.compile(r"^arn:aws(?:-[a-z0-9-]+)?:bedrock:([a-z0-9-]+):")
_STANDARD_ENDPOINT = re.compile(r"^bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$")
_SEPARATORS = re.compile(r"[\s_.:]+")
_ASCII_WHITESPACE = re.compile(r"[\t\n\f\r ]+")
_RESERVED_HEADERS = frozenset({"authorization", "host"})


# --- model capabilities (matched on id and name, as pi-ai does) ------------------------


def _candidates(model: Model) -> list[str]:
    values = [model["id"], model["name"]] if model.get("name") else [model["id"]]
    out: list[str] = []
    for value in values:
        lower = value.lower()
        out += [lower, _SEPARATORS.sub("-", lower)]
    return out


def _any_contains(model: Model, *needles: str) -> bool:
    return any(needle in candidate for candidate in _candidates(model) for needle in needles)


def is_claude(model: Model) -> bool:
    model_id = model["id"].lower()
    name = (model.get("name") or "").lower()
    return (
        "anthropic.claude" in model_id
        or "anthropic/claude" in model_id
        or "anthropic.claude" in name
        or "anthropic/claude" in name
        or "claude" in name
    )


def _adaptive(model: Model) -> bool:
    return _any_contains(
        model, "opus-4-6", "opus-4-7", "opus-4-8", "opus-5", "sonnet-4-6", "sonnet-5", "fable-5"
    )


def _native_xhigh(model: Model) -> bool:
    return _any_contains(model, "opus-4-7", "opus-4-8", "opus-5", "sonnet-5", "fable-5")


_block_binding = _native_xhigh  # same model set: Opus/Sonnet 4.6 reject thinking.block_binding


def _prompt_caching(model: Model, options: RequestOptions) -> bool:
    candidates = _candidates(model)
    if not any("claude" in c for c in candidates):
        # Application inference profile ARNs do not name the model; the user may force it.
        return options.env_value("AWS_BEDROCK_FORCE_CACHE") == "1"
    return any(
        needle in c
        for c in candidates
        for needle in ("fable-5", "opus-5", "sonnet-5", "-4-", "claude-3-7-sonnet", "claude-3-5-haiku")
    )


def _effort(model: Model, level: str) -> str:
    if level == "xhigh" and _native_xhigh(model):
        return "xhigh"
    mapped = (model.get("thinkingLevelMap") or {}).get(level)
    if isinstance(mapped, str):
        return mapped
    return {"minimal": "low", "low": "low", "medium": "medium", "high": "high"}.get(level, "high")


# --- options (pi-ai streamSimple) -------------------------------------------------------


def _region(options: RequestOptions) -> str | None:
    return options.env_value("AWS_REGION") or options.env_value("AWS_DEFAULT_REGION")


def _cache_point(retention: str) -> JsonObject:
    return {"cachePoint": {"type": "default", "ttl": "1h"} if retention == "long" else {"type": "default"}}


def _is_gov_cloud(model: Model, options: RequestOptions) -> bool:
    region = _region(options)
    if region and region.lower().startswith("us-gov-"):
        return True
    model_id = model["id"].lower()
    return model_id.startswith(("us-gov.", "arn:aws-us-gov:"))


def _reasoning_fields(
    model: Model, options: RequestOptions, level: str | None, budgets: Mapping[str, int] | None
) -> JsonObject | None:
    if not level or not model["reasoning"] or not is_claude(model):
        return None
    gov = _is_gov_cloud(model, options)
    display = {} if gov else {"display": "summarized"}
    binding = not gov and _block_binding(model)
    if _adaptive(model):
        thinking: JsonObject = {"type": "adaptive", **display}
        if binding:
            thinking["block_binding"] = {"prefix_mismatch_behavior": "drop_block"}
        fields: JsonObject = {"thinking": thinking, "output_config": {"effort": _effort(model, level)}}
        if binding:
            fields["anthropic_beta"] = [THINKING_BINDING_CONTROLS_BETA]
        return fields
    budget = (budgets or {}).get(clamp_reasoning(level))
    if budget is None:
        budget = _BUDGET_DEFAULTS.get(level, 16384)
    return {
        "thinking": {"type": "enabled", "budget_tokens": budget, **display},
        "anthropic_beta": [INTERLEAVED_THINKING_BETA],
    }


# --- content ----------------------------------------------------------------------------


def _atob(data: str) -> bytes:
    """Decode like the browser ``atob`` pi-ai uses: ASCII whitespace ignored, padding optional."""
    cleaned = _ASCII_WHITESPACE.sub("", data)
    if len(cleaned) % 4 == 0 and cleaned.endswith("="):
        cleaned = cleaned[:-2] if cleaned.endswith("==") else cleaned[:-1]
    if len(cleaned) % 4 == 1 or not re.fullmatch(r"[A-Za-z0-9+/]*", cleaned):
        raise ValueError("not base64")
    return base64.b64decode(cleaned + "=" * (-len(cleaned) % 4))


def _blob(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def _image(block: Mapping[str, Any]) -> JsonObject:
    mime = block.get("mimeType")
    image_format = _IMAGE_FORMATS.get(mime or "")
    if image_format is None:
        raise ProjectionError(f"Unknown image type: {mime!r} in an image block; use jpeg, png, gif or webp")
    try:
        raw = _atob(block["data"])
    except (ValueError, binascii.Error) as error:
        raise ProjectionError(f"image block ({mime}) has data that is not base64: {error}") from error
    return {"image": {"format": image_format, "source": {"bytes": _blob(raw)}}}


def _text(text: str) -> JsonObject | None:
    sanitized = sanitize_surrogates(text)
    return None if js_blank(sanitized) else {"text": sanitized}


def _document(value: Any) -> Any:
    """Bedrock documents reject empty keys; drop them at every depth."""
    if isinstance(value, list):
        return [_document(item) for item in value]
    if isinstance(value, dict):
        return {key: _document(item) for key, item in value.items() if key != ""}
    return value


def _blocks(content: Sequence[Mapping[str, Any]]) -> list[JsonObject]:
    """Text and image blocks (user and tool-result content) without the blank texts, or the
    placeholder when nothing is left."""
    out: list[JsonObject] = []
    for block in content:
        if block.get("type") == "image":
            out.append(_image(block))
        else:
            text = _text(block["text"])
            if text is not None:
                out.append(text)
    return out or [{"text": EMPTY_TEXT_PLACEHOLDER}]


def _tool_result(message: Mapping[str, Any]) -> JsonObject:
    return {
        "toolResult": {
            "toolUseId": message["toolCallId"],
            "content": _blocks(message["content"]),
            "status": "error" if message.get("isError") else "success",
        }
    }


def _user_content(content: str | Sequence[Mapping[str, Any]]) -> list[JsonObject]:
    if isinstance(content, str):
        return [_text(content) or {"text": EMPTY_TEXT_PLACEHOLDER}]
    return _blocks(content)


def _assistant_content(content: Sequence[Mapping[str, Any]], signatures: bool) -> list[JsonObject]:
    out: list[JsonObject] = []
    for block in content:
        kind = block.get("type")
        if kind == "text":
            text = _text(block["text"])
            if text is not None:
                out.append(text)
        elif kind == "toolCall":
            out.append(
                {
                    "toolUse": {
                        "toolUseId": block["id"],
                        "name": block["name"],
                        "input": _document(block["arguments"]),
                    }
                }
            )
        elif kind == "thinking":
            signature = block.get("thinkingSignature")
            if block.get("redacted"):
                # Encrypted reasoning is opaque: replay the stored payload as-is.
                try:
                    raw = _atob(signature) if signature else b""
                except (ValueError, binascii.Error):
                    raw = b""
                if raw:
                    out.append({"reasoningContent": {"redactedContent": _blob(raw)}})
                continue
            thinking = sanitize_surrogates(block["thinking"])
            if js_blank(thinking):
                continue
            if not signatures:
                out.append({"reasoningContent": {"reasoningText": {"text": thinking}}})
            elif not signature or js_blank(signature):
                # Bedrock rejects replayed reasoning without its signature.
                out.append({"text": thinking})
            else:
                out.append(
                    {"reasoningContent": {"reasoningText": {"text": thinking, "signature": signature}}}
                )
    return out


def convert_messages(
    messages: Sequence[Message], model: Model, retention: str, options: RequestOptions
) -> list[JsonObject]:
    transformed = transform_messages(messages, model, normalize_tool_call_id)
    signatures = is_claude(model)
    out: list[JsonObject] = []
    count = len(transformed)
    i = 0
    while i < count:
        message: Mapping[str, Any] = transformed[i]
        role = message["role"]
        if role == "user":
            out.append({"role": "user", "content": _user_content(message["content"])})
        elif role == "assistant":
            if message["content"]:
                blocks = _assistant_content(message["content"], signatures)
                if blocks:
                    out.append({"role": "assistant", "content": blocks})
        elif role == "toolResult":
            results: list[JsonObject] = []
            while i < count and transformed[i]["role"] == "toolResult":
                results.append(_tool_result(transformed[i]))
                i += 1
            out.append({"role": "user", "content": results})
            continue
        i += 1
    if out and retention != "none" and _prompt_caching(model, options) and out[-1]["role"] == "user":
        out[-1]["content"].append(_cache_point(retention))
    return out


def _tool_config(tools: Sequence[Mapping[str, Any]], choice: Any, supports_strict: bool) -> JsonObject | None:
    if not tools or choice == "none":
        return None
    specs: list[JsonObject] = []
    for tool in tools:
        strict = resolve_json_schema_strict(tool, supports_strict)
        spec: JsonObject = {
            "name": tool["name"],
            "inputSchema": {"json": json_schema_tool_parameters(tool, strict)},
        }
        if "description" in tool:
            spec["description"] = tool["description"]
        if strict:
            spec["strict"] = True
        specs.append({"toolSpec": spec})
    config: JsonObject = {"tools": specs}
    if choice == "auto":
        config["toolChoice"] = {"auto": {}}
    elif choice == "any":
        config["toolChoice"] = {"any": {}}
    elif isinstance(choice, Mapping) and choice.get("type") == "tool":
        config["toolChoice"] = {"tool": {"name": choice["name"]}}
    return config


# --- endpoint and headers ---------------------------------------------------------------


def _standard_endpoint_region(base_url: str) -> str | None:
    try:
        host = (urlsplit(base_url).hostname or "").lower()
    except ValueError:
        return None
    match = _STANDARD_ENDPOINT.match(host)
    return match.group(1) if match else None


def endpoint_url(model: Model, options: RequestOptions) -> str:
    """The Converse Stream URL the AWS SDK would resolve for this model and environment."""
    configured = _region(options)
    # pi-ai asks the process environment only (getProviderEnvValue without the scoped env).
    ambient_profile = bool(options.env.get("AWS_PROFILE"))
    endpoint_region = _standard_endpoint_region(model["baseUrl"])
    explicit = endpoint_region is None or (not configured and not ambient_profile)
    arn = _ARN_REGION.match(model["id"])
    if arn:
        region = arn.group(1)
    elif configured:
        region = configured
    elif endpoint_region and explicit:
        region = endpoint_region
    else:
        # With only an AWS profile the SDK reads the region from ~/.aws/config, which a pure
        # projection cannot; set AWS_REGION to pin it.
        region = DEFAULT_REGION
    path = f"/model/{quote(model['id'], safe='-_.~')}/converse-stream"
    if explicit:
        # The SDK appends to the endpoint's path verbatim (a bare "/" excepted) and drops its query.
        endpoint = urlsplit(model["baseUrl"])
        base_path = "" if endpoint.path == "/" else endpoint.path
        return f"{endpoint.scheme}://{endpoint.netloc}{base_path}{path}"
    suffix = "amazonaws.com.cn" if region.startswith("cn-") else "amazonaws.com"
    return f"https://bedrock-runtime.{region}.{suffix}{path}"


def _headers(model: Model, options: RequestOptions) -> dict[str, str]:
    headers = {"content-type": "application/json"}
    for key, value in merge_headers(options.headers).items():
        # SigV4 and auth headers belong to the signer, never to the caller.
        if not key.startswith("x-amz-") and key not in _RESERVED_HEADERS:
            headers[key] = value
    skip_auth = options.env_value("AWS_BEDROCK_SKIP_AUTH") == "1"
    # A bearer token (the account's Bedrock API key) or SigV4: the host decides (design P5).
    token = options.api_key or options.env_value("AWS_BEARER_TOKEN_BEDROCK")
    if token and not skip_auth and resolve_kind(model, options) == "bearer":
        headers["authorization"] = f"Bearer {token}"
    return headers


# --- the projection ---------------------------------------------------------------------


def project(model: Model, messages: list[Message], options: RequestOptions) -> ProviderRequest:
    """Build the Converse Stream request pi-ai's ``streamSimple`` would send."""
    max_tokens = base_max_tokens(model, messages, options)
    level = options.reasoning or None
    budgets: Mapping[str, int] | None = options.thinking_budgets
    if level and is_claude(model) and not _adaptive(model):
        allowance = adjust_max_tokens_for_thinking(max_tokens, model["maxTokens"], level, budgets)
        max_tokens = clamp_max_tokens_to_context(model, messages, allowance.max_tokens)
        budget = clamp_thinking_budget_to_answer_room(allowance.thinking_budget, max_tokens)
        budgets = {**(budgets or {}), clamp_reasoning(level): budget}

    folded = collapse_system_messages(messages)
    head = leading_system_message(folded)
    retention = resolve_cache_retention(options)

    body: JsonObject = {
        "messages": convert_messages(folded[1:] if head else folded, model, retention, options)
    }
    prompt = system_message_text(head) if head else ""
    if prompt:
        system: list[JsonObject] = [{"text": sanitize_surrogates(prompt)}]
        if retention != "none" and _prompt_caching(model, options):
            system.append(_cache_point(retention))
        body["system"] = system
    inference: JsonObject = {"maxTokens": max_tokens}
    if options.temperature is not None:
        inference["temperature"] = options.temperature
    body["inferenceConfig"] = inference
    supports_strict = bool((model.get("compat") or {}).get("supportsStrictMode", False))
    tool_config = _tool_config(current_tools(folded), options.tool_choice, supports_strict)
    if tool_config is not None:
        body["toolConfig"] = tool_config
    fields = _reasoning_fields(model, options, level, budgets)
    if fields is not None:
        body["additionalModelRequestFields"] = fields
    return ProviderRequest("POST", endpoint_url(model, options), _headers(model, options), body)
