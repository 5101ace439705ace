"""Hand-built request bodies for each API family (the lead's projections replace these later).

A conversation is a list of neutral turns: ``("user", text)``, ``("assistant", message)``
(a pi-ai AssistantMessage as returned by the client) and ``("tool", call, text)``. Each
family renders it in its own wire shape, with cache markers where pi-ai puts them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from desktop.emulator import Emulator
from desktop.host.providers import WireRequest

Turn = tuple[Any, ...]

READ_TOOL = {
    "name": "read",
    "description": "Read a file from the workspace",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
}
COST = {"input": 3.0, "output": 15.0, "cacheRead": 0.3, "cacheWrite": 3.75}


@dataclass(frozen=True)
class Family:
    name: str  # emulator family
    api: str
    provider: str
    model_id: str

    def model(self, emu: Emulator) -> dict[str, Any]:
        return {
            "id": self.model_id,
            "name": self.model_id,
            "api": self.api,
            "provider": self.provider,
            "baseUrl": emu.base_url(self.name),
            "cost": COST,
        }

    def request(
        self, emu: Emulator, system: str, turns: list[Turn], tools: list[dict[str, Any]] | None = None
    ) -> WireRequest:
        tools = tools or []
        base = emu.base_url(self.name)
        if self.api == "anthropic-messages":
            body = anthropic_body(self.model_id, system, turns, tools)
            return WireRequest(base + "/v1/messages", _dump(body), {"anthropic-version": "2023-06-01"})
        if self.api in ("openai-completions", "mistral-conversations"):
            body = chat_body(self.model_id, system, turns, tools, mistral=self.api == "mistral-conversations")
            path = "/v1/chat/completions" if self.name == "mistral" else "/chat/completions"
            return WireRequest(base + path, _dump(body))
        if self.api.endswith("responses"):
            body = responses_body(self.model_id, system, turns, tools)
            path = {"codex": "/codex/responses", "azure": "/responses?api-version=v1"}.get(
                self.name, "/responses"
            )
            return WireRequest(base + path, _dump(body))
        body = google_body(system, turns, tools)
        return WireRequest(base + f"/models/{self.model_id}:streamGenerateContent?alt=sse", _dump(body))


FAMILIES = [
    Family("anthropic", "anthropic-messages", "anthropic", "claude-sonnet-4-5"),
    Family("openai", "openai-completions", "openai", "gpt-4.1"),
    Family("deepseek", "openai-completions", "deepseek", "deepseek-chat"),
    Family("openai", "openai-responses", "openai", "gpt-5"),
    Family("azure", "azure-openai-responses", "azure", "gpt-5"),
    Family("codex", "openai-codex-responses", "openai-codex", "gpt-5-codex"),
    Family("mistral", "mistral-conversations", "mistral", "mistral-large-latest"),
    Family("google", "google-generative-ai", "google", "gemini-2.5-flash"),
]
FAMILY_IDS = [f"{f.name}-{f.api}" for f in FAMILIES]


def _dump(body: dict[str, Any]) -> bytes:
    return orjson.dumps(body)


def _text(message: dict[str, Any]) -> str:
    return "".join(b["text"] for b in message["content"] if b["type"] == "text")


def _calls(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in message["content"] if b["type"] == "toolCall"]


def anthropic_body(model: str, system: str, turns: list[Turn], tools: list[dict[str, Any]]) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    for turn in turns:
        if turn[0] == "user":
            messages.append({"role": "user", "content": [{"type": "text", "text": turn[1]}]})
        elif turn[0] == "assistant":
            blocks: list[dict[str, Any]] = []
            if _text(turn[1]):
                blocks.append({"type": "text", "text": _text(turn[1])})
            blocks += [
                {"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["arguments"]}
                for c in _calls(turn[1])
            ]
            messages.append({"role": "assistant", "content": blocks})
        else:
            result = {
                "type": "tool_result",
                "tool_use_id": turn[1]["id"],
                "content": turn[2],
                "is_error": False,
            }
            messages.append({"role": "user", "content": [result]})
    # pi-ai: cache_control on the system prompt, the last tool and the last user message.
    marker = {"type": "ephemeral"}
    for message in reversed(messages):
        if message["role"] == "user":
            message["content"][-1]["cache_control"] = marker
            break
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": 1024,
        "stream": True,
        "system": [{"type": "text", "text": system, "cache_control": marker}],
        "messages": messages,
    }
    if tools:
        body["tools"] = [
            {"name": t["name"], "description": t["description"], "input_schema": t["parameters"]}
            for t in tools
        ]
        body["tools"][-1]["cache_control"] = marker
    return body


def chat_body(
    model: str, system: str, turns: list[Turn], tools: list[dict[str, Any]], *, mistral: bool = False
) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}]
    for turn in turns:
        if turn[0] == "user":
            messages.append({"role": "user", "content": turn[1]})
        elif turn[0] == "assistant":
            message: dict[str, Any] = {"role": "assistant", "content": _text(turn[1]) or None}
            calls = _calls(turn[1])
            if calls:
                message["tool_calls"] = [
                    {
                        "id": c["id"],
                        "type": "function",
                        "function": {"name": c["name"], "arguments": orjson.dumps(c["arguments"]).decode()},
                    }
                    for c in calls
                ]
            messages.append(message)
        else:
            messages.append(
                {"role": "tool", "tool_call_id": turn[1]["id"], "name": turn[1]["name"], "content": turn[2]}
            )
    body: dict[str, Any] = {"model": model, "stream": True, "messages": messages}
    if not mistral:
        body["stream_options"] = {"include_usage": True}
    if tools:
        body["tools"] = [{"type": "function", "function": t} for t in tools]
    return body


def responses_body(model: str, system: str, turns: list[Turn], tools: list[dict[str, Any]]) -> dict[str, Any]:
    items: list[dict[str, Any]] = [{"role": "developer", "content": system}]
    for turn in turns:
        if turn[0] == "user":
            items.append({"role": "user", "content": [{"type": "input_text", "text": turn[1]}]})
        elif turn[0] == "assistant":
            if _text(turn[1]):
                items.append(
                    {
                        "type": "message",
                        "role": "assistant",
                        "status": "completed",
                        "content": [{"type": "output_text", "text": _text(turn[1]), "annotations": []}],
                    }
                )
            for c in _calls(turn[1]):
                call_id, item_id = c["id"].split("|", 1)
                items.append(
                    {
                        "type": "function_call",
                        "id": item_id,
                        "call_id": call_id,
                        "name": c["name"],
                        "arguments": orjson.dumps(c["arguments"]).decode(),
                    }
                )
        else:
            items.append(
                {"type": "function_call_output", "call_id": turn[1]["id"].split("|")[0], "output": turn[2]}
            )
    body: dict[str, Any] = {"model": model, "stream": True, "store": False, "input": items}
    if tools:
        body["tools"] = [{"type": "function", "strict": False, **t} for t in tools]
    return body


def google_body(system: str, turns: list[Turn], tools: list[dict[str, Any]]) -> dict[str, Any]:
    contents: list[dict[str, Any]] = []
    for turn in turns:
        if turn[0] == "user":
            contents.append({"role": "user", "parts": [{"text": turn[1]}]})
        elif turn[0] == "assistant":
            parts: list[dict[str, Any]] = []
            if _text(turn[1]):
                parts.append({"text": _text(turn[1])})
            parts += [{"functionCall": {"name": c["name"], "args": c["arguments"]}} for c in _calls(turn[1])]
            contents.append({"role": "model", "parts": parts})
        else:
            response = {"functionResponse": {"name": turn[1]["name"], "response": {"output": turn[2]}}}
            contents.append({"role": "user", "parts": [response]})
    body: dict[str, Any] = {"contents": contents, "systemInstruction": {"parts": [{"text": system}]}}
    if tools:
        body["tools"] = [
            {"functionDeclarations": [{**t, "parametersJsonSchema": t["parameters"]} for t in tools]}
        ]
        for declaration in body["tools"][0]["functionDeclarations"]:
            del declaration["parameters"]
    return body
