"""ChatGPT Codex Responses request projection (pi-ai ``openai-codex-responses.ts``, SSE path).

Codex takes the leading system prompt as ``instructions`` (never as an input item), always
asks for encrypted reasoning, and authenticates with a ChatGPT access token whose JWT
payload names the account. pi-ai's WebSocket transport and its zstd request compression
are transport choices made at dispatch; the projection is the uncompressed SSE request.
"""

from __future__ import annotations

import binascii
from collections.abc import Mapping
from typing import Any

import orjson

from desktop.pi.projection import CREDENTIAL_PLACEHOLDER, ProjectionError, ProviderRequest, RequestOptions
from desktop.pi.projection._headers import merge_headers, pi_user_agent
from desktop.pi.projection._js import js_value
from desktop.pi.projection._responses_shared import (
    ResponsesRoute,
    build_input,
    clamp_prompt_cache_key,
    convert_tools,
    reasoning_param,
)
from desktop.pi.projection._thinking import resolve_reasoning
from desktop.pi.text import system_message_text
from desktop.pi.transcript import (
    leading_system_message,
)
from desktop.pi.types import Message, Model

TOOL_CALL_PROVIDERS = frozenset({"openai", "openai-codex", "opencode"})
DEFAULT_BASE_URL = "https://chatgpt.com/backend-api"
#: Stands in for the ChatGPT account id of the placeholder's token; the host fills it in from
#: the real token when sending (``desktop.session.dispatch.with_credential``).
ACCOUNT_PLACEHOLDER = "<chatgpt-account-id>"
DEFAULT_INSTRUCTIONS = "You are a helpful assistant."
JWT_CLAIM_PATH = "https://api.openai.com/auth"
_BASE64 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


def _atob(data: str) -> str:
    """The browser's forgiving ``atob``: standard alphabet, optional padding, Latin-1 result."""
    data = "".join(data.split())
    if len(data) % 4 == 0 and data.endswith("="):
        data = data[:-2] if data.endswith("==") else data[:-1]
    if len(data) % 4 == 1 or any(ch not in _BASE64 for ch in data):
        raise ValueError("invalid base64")
    return binascii.a2b_base64(data + "=" * (-len(data) % 4)).decode("latin-1")


def account_id(token: str) -> str:
    """The ChatGPT account id carried in the access token's JWT payload."""
    try:
        parts = token.split(".")
        if len(parts) != 3:
            raise ValueError("not a JWT")
        payload = orjson.loads(_atob(parts[1]))
        value = payload.get(JWT_CLAIM_PATH, {}).get("chatgpt_account_id")
        if not value:
            raise ValueError("no account id")
        return str(value)
    except (ValueError, AttributeError, orjson.JSONDecodeError) as error:
        raise ProjectionError(
            "Failed to extract accountId from token: options.apiKey must be a ChatGPT access token (JWT) "
            f"whose '{JWT_CLAIM_PATH}' claim holds chatgpt_account_id"
        ) from error


def codex_url(base_url: str | None) -> str:
    raw = base_url if base_url and base_url.strip() else DEFAULT_BASE_URL
    normalized = raw.rstrip("/")
    if normalized.endswith("/codex/responses"):
        return normalized
    if normalized.endswith("/codex"):
        return f"{normalized}/responses"
    return f"{normalized}/codex/responses"


def project(model: Model, messages: list[Message], options: RequestOptions) -> ProviderRequest:
    token = options.api_key
    if not token:
        raise ProjectionError(
            f"No API key for provider: {model['provider']}; pass RequestOptions.api_key (pi-ai options.apiKey)"
        )
    # The placeholder has no account in it: the host fills the account id in when sending.
    account = ACCOUNT_PLACEHOLDER if token == CREDENTIAL_PLACEHOLDER else account_id(token)
    compat: Mapping[str, Any] = model.get("compat") or {}
    route = ResponsesRoute.from_compat(
        compat,
        TOOL_CALL_PROVIDERS,
        default_strict=None,
        strict_by_default=True,
        include_system_prompt=False,
    )
    reasoning_effort = resolve_reasoning(model, options.reasoning)
    session_id = clamp_prompt_cache_key(None if options.cache_retention == "none" else options.session_id)
    converted = build_input(model, messages, route)
    tools = converted.tools
    head = leading_system_message(converted.transcript)
    instructions = system_message_text(head) if head else ""

    body: dict[str, Any] = {
        "model": model["id"],
        "store": False,
        "stream": True,
        "instructions": instructions or DEFAULT_INSTRUCTIONS,
        "input": converted.items,
        "text": {"verbosity": "low"},
        "include": ["reasoning.encrypted_content"],
    }
    if session_id is not None:
        body["prompt_cache_key"] = session_id
    body["tool_choice"] = options.tool_choice if options.tool_choice is not None else "auto"
    body["parallel_tool_calls"] = True
    if options.temperature is not None:
        body["temperature"] = js_value(options.temperature)
    if tools.request_tools:
        body["tools"] = convert_tools(tools.request_tools, route.tool_options)
    reasoning = reasoning_param(model, reasoning_effort)
    if reasoning is not None:
        body["reasoning"] = reasoning

    headers = merge_headers(model.get("headers"), options.headers)
    headers["authorization"] = f"Bearer {token}"
    headers["chatgpt-account-id"] = account
    headers["originator"] = "pi"
    headers["user-agent"] = pi_user_agent()
    headers["openai-beta"] = "responses=experimental"
    headers["accept"] = "text/event-stream"
    headers["content-type"] = "application/json"
    if session_id:
        headers["session-id"] = session_id
        headers["x-client-request-id"] = session_id
    return ProviderRequest("POST", codex_url(model.get("baseUrl")), headers, body)
