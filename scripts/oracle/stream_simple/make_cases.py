"""Write the streamSimple credential-kind cases for the OpenAI-family APIs (dev only).

Every OpenAI-family API (completions, responses on OpenAI's own endpoint and on another,
Azure responses, Codex) with both credential kinds (an ``sk-`` API key and a ChatGPT sign-in
token, a JWT), each under the same option sets: pi-ai's default max tokens, explicit max tokens
and temperature, long and no cache retention, reasoning, ``PI_CACHE_RETENTION`` from the
process environment, the key read from the provider's variable instead of ``options.apiKey``,
and a tool-call history. ``env`` is set in the *process* environment by ``capture.mjs`` (as a
shell would), never in ``options.env``.

    python3 scripts/oracle/stream_simple/make_cases.py > scripts/oracle/stream_simple/cases.json
"""

from __future__ import annotations

import base64
import json
import sys
from typing import Any


def jwt(account: str) -> str:
    def part(value: Any) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")

    claims = {"https://api.openai.com/auth": {"chatgpt_account_id": account}, "exp": 2000000000}
    return f"{part({'alg': 'RS256'})}.{part(claims)}.{part('signature')}"


API_KEY = "sk-proj-oracle-key-0123456789"
TOKEN = jwt("acct-oracle-7")
KINDS = {"api-key": API_KEY, "chatgpt-token": TOKEN}

#: (label, model spec, the provider's key variable, process environment every case needs)
ROUTES: list[tuple[str, str, str, dict[str, str]]] = [
    ("completions deepseek", "deepseek/deepseek-flash", "DEEPSEEK_API_KEY", {}),
    ("completions groq", "groq/llama-3.1-8b-instant", "GROQ_API_KEY", {}),
    ("responses openai gpt-4.1", "openai/gpt-4.1", "OPENAI_API_KEY", {}),
    ("responses openai gpt-5.5", "openai/gpt-5.5", "OPENAI_API_KEY", {}),
    ("responses xai", "xai/grok-4.3", "XAI_API_KEY", {}),
    (
        "azure responses",
        "azure/gpt-4.1",
        "AZURE_OPENAI_API_KEY",
        {"AZURE_OPENAI_RESOURCE_NAME": "pi-oracle-res"},
    ),
    ("codex", "openai-codex/gpt-5.5", "OPENAI_CODEX_API_KEY", {}),
]

TOOLS = [
    {
        "name": "read",
        "description": "Read a file",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
            "required": ["path"],
        },
    }
]


def simple_context() -> dict[str, Any]:
    return {
        "systemPrompt": "You are a careful coding agent.",
        "messages": [{"role": "user", "content": "Summarize the README.", "timestamp": 1700000000000}],
    }


def tool_context(model: str) -> dict[str, Any]:
    provider, model_id = model.split("/", 1)
    usage = {
        "input": 10,
        "output": 5,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 15,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }
    return {
        "systemPrompt": "You are a careful coding agent.",
        "tools": TOOLS,
        "messages": [
            {"role": "user", "content": "Open a.txt", "timestamp": 1700000000000},
            {
                "role": "assistant",
                "content": [
                    {"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": "a.txt"}}
                ],
                "api": "openai-responses",
                "provider": provider,
                "model": model_id,
                "usage": usage,
                "stopReason": "toolUse",
                "timestamp": 1700000001000,
            },
            {
                "role": "toolResult",
                "toolCallId": "call_1",
                "toolName": "read",
                "content": [{"type": "text", "text": "hello"}],
                "isError": False,
                "timestamp": 1700000002000,
            },
            {"role": "user", "content": "Thanks. What does it say?", "timestamp": 1700000003000},
        ],
    }


def variants(
    model: str, variable: str, key: str
) -> list[tuple[str, dict[str, Any], dict[str, str], dict[str, Any]]]:
    """(name, options, process env, context) per option set."""
    base = {"apiKey": key}
    return [
        ("default max tokens", base, {}, simple_context()),
        ("maxTokens and temperature", {**base, "maxTokens": 1000, "temperature": 0.3}, {}, simple_context()),
        (
            "session, long retention",
            {**base, "sessionId": "sess-1", "cacheRetention": "long"},
            {},
            simple_context(),
        ),
        (
            "session, no retention",
            {**base, "sessionId": "sess-1", "cacheRetention": "none"},
            {},
            simple_context(),
        ),
        ("reasoning high", {**base, "sessionId": "sess-2", "reasoning": "high"}, {}, simple_context()),
        (
            "PI_CACHE_RETENTION=long in the process env",
            {**base, "sessionId": "sess-3"},
            {"PI_CACHE_RETENTION": "long"},
            simple_context(),
        ),
        (
            "key from the provider variable",
            {"apiKey": None, "sessionId": "sess-4"},
            {variable: key},
            simple_context(),
        ),
        (
            "tool-call history, temperature",
            {**base, "sessionId": "sess-5", "temperature": 0.5},
            {},
            tool_context(model),
        ),
    ]


def cases() -> list[dict[str, Any]]:
    out = []
    for label, model, variable, route_env in ROUTES:
        for kind, key in KINDS.items():
            for name, options, env, context in variants(model, variable, key):
                if model.startswith("openai-codex/") and options.get("apiKey") is None:
                    continue  # pi-ai reads no variable for Codex (a sign-in only provider)
                case: dict[str, Any] = {
                    "name": f"{label} / {kind} / {name}",
                    "model": model,
                    "context": context,
                    "options": {"transport": "sse", **options}
                    if model.startswith("openai-codex/")
                    else options,
                    "meta": {"kind": kind, "key": key},
                }
                if route_env or env:
                    case["env"] = {**route_env, **env}
                out.append(case)
    return out


if __name__ == "__main__":
    json.dump(cases(), sys.stdout, indent=1)
    sys.stdout.write("\n")
