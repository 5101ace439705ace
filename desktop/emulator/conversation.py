"""What the emulator reads from a request body, per wire format.

Each family's body is reduced to the same few facts: the system text, the declared tool
names (with their schemas), the text of the last user message, the tool results the
request ends with (if it ends with results rather than a user turn), and the prompt in
the provider's cache order (read by ``desktop.emulator.provider_cache``, the emulator's own
rules, design P11).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from desktop.emulator.provider_cache import Block, blocks_of, canonical


@dataclass(frozen=True)
class ToolResult:
    name: str
    text: str


@dataclass
class Conversation:
    model: str
    system: str = ""
    tools: dict[str, Any] = field(default_factory=dict)  # name -> parameters schema
    last_user_text: str = ""
    tool_results: list[ToolResult] = field(default_factory=list)
    #: The prompt in the provider's cache order (``desktop.emulator.provider_cache``).
    segments: list[Block] = field(default_factory=list)
    cache_key: str | None = None
    max_tokens: int | None = None


def _text_of(content: Any) -> str:
    """Plain text of a content value in any family's shape (string, parts, blocks)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Mapping):
        for key in ("text", "output", "content", "result"):
            if key in content:
                return _text_of(content[key])
        return canonical(content)
    if isinstance(content, list):
        pieces = [_text_of(item) for item in content]
        return "\n".join(piece for piece in pieces if piece)
    return str(content)


def read_anthropic(body: Mapping[str, Any]) -> Conversation:
    conv = Conversation(
        model=str(body.get("model", "")),
        max_tokens=body.get("max_tokens"),
        segments=blocks_of("anthropic", body),
    )
    for tool in body.get("tools") or ():
        conv.tools[tool.get("name", "")] = tool.get("input_schema") or {}
    system = body.get("system")
    if isinstance(system, str):
        system = [{"type": "text", "text": system}]
    conv.system = _text_of(system or [])
    messages = body.get("messages") or []
    # Mid-conversation system messages (updates, effort-only controls) sit after the user turn.
    turns = [m for m in messages if m.get("role") != "system"]
    if turns and turns[-1].get("role") == "user":
        content = turns[-1].get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        names = _anthropic_tool_names(messages)
        for block in blocks:
            if block.get("type") == "tool_result":
                name = names.get(block.get("tool_use_id", ""), "tool")
                conv.tool_results.append(ToolResult(name, _text_of(block.get("content"))))
        texts = [b.get("text", "") for b in blocks if b.get("type") == "text"]
        conv.last_user_text = "\n".join(texts)
    return conv


def _anthropic_tool_names(messages: list[Any]) -> dict[str, str]:
    names: dict[str, str] = {}
    for message in messages:
        content = message.get("content")
        if message.get("role") == "assistant" and isinstance(content, list):
            for block in content:
                if block.get("type") == "tool_use":
                    names[block.get("id", "")] = block.get("name", "tool")
    return names


def _before_trailing_system(messages: list[Any]) -> list[Any]:
    """The messages without the system/developer updates that close them.

    A system update sent in place after tool results (an activation, ``additional_tools``)
    does not change what the request ends with: the model still answers the results.
    """
    end = len(messages)
    while end and messages[end - 1].get("role") in ("system", "developer"):
        end -= 1
    return messages[:end]


def read_chat(body: Mapping[str, Any]) -> Conversation:
    """OpenAI chat completions, DeepSeek and Mistral (same message shapes)."""
    conv = Conversation(
        model=str(body.get("model", "")),
        cache_key=body.get("prompt_cache_key"),
        max_tokens=body.get("max_completion_tokens") or body.get("max_tokens"),
        segments=blocks_of("chat", body),
    )
    for tool in body.get("tools") or ():
        function = tool.get("function") or tool
        conv.tools[function.get("name", "")] = function.get("parameters") or {}
    messages = body.get("messages") or []
    names: dict[str, str] = {}
    for message in messages:
        for call in message.get("tool_calls") or ():
            names[call.get("id", "")] = (call.get("function") or {}).get("name", "tool")
    conv.system = "\n".join(
        _text_of(m.get("content")) for m in messages if m.get("role") in ("system", "developer")
    )
    trailing: list[ToolResult] = []
    for message in reversed(_before_trailing_system(messages)):
        if message.get("role") != "tool":
            break
        name = message.get("name") or names.get(message.get("tool_call_id", ""), "tool")
        trailing.insert(0, ToolResult(name, _text_of(message.get("content"))))
    conv.tool_results = trailing
    users = [m for m in messages if m.get("role") == "user"]
    if users and not trailing:
        conv.last_user_text = _text_of(users[-1].get("content"))
    return conv


def read_responses(body: Mapping[str, Any]) -> Conversation:
    conv = Conversation(
        model=str(body.get("model", "")),
        cache_key=body.get("prompt_cache_key"),
        max_tokens=body.get("max_output_tokens"),
        segments=blocks_of("responses", body),
    )
    for tool in body.get("tools") or ():
        conv.tools[tool.get("name", "")] = tool.get("parameters") or {}
    items = body.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    items = items or []
    names: dict[str, str] = {}
    system_texts = [str(body.get("instructions") or "")]
    for item in items:
        if item.get("type") == "function_call":
            names[item.get("call_id", "")] = item.get("name", "tool")
        if item.get("role") in ("system", "developer"):
            system_texts.append(_text_of(item.get("content")))
    conv.system = "\n".join(text for text in system_texts if text)
    trailing: list[ToolResult] = []
    for item in reversed(_before_trailing_system(items)):
        if item.get("type") != "function_call_output":
            break
        trailing.insert(
            0, ToolResult(names.get(item.get("call_id", ""), "tool"), _text_of(item.get("output")))
        )
    conv.tool_results = trailing
    users = [i for i in items if i.get("role") == "user"]
    if users and not trailing:
        conv.last_user_text = _text_of(users[-1].get("content"))
    return conv


def read_google(body: Mapping[str, Any], model: str) -> Conversation:
    conv = Conversation(
        model=model,
        max_tokens=(body.get("generationConfig") or {}).get("maxOutputTokens"),
        segments=blocks_of("google", body),
    )
    system = body.get("systemInstruction")
    if system:
        conv.system = _text_of((system or {}).get("parts"))
    for tool in body.get("tools") or ():
        for declaration in tool.get("functionDeclarations") or ():
            schema = declaration.get("parametersJsonSchema") or declaration.get("parameters") or {}
            conv.tools[declaration.get("name", "")] = schema
    contents = body.get("contents") or []
    if contents and contents[-1].get("role") == "user":
        parts = contents[-1].get("parts") or []
        for part in parts:
            response = part.get("functionResponse")
            if response:
                conv.tool_results.append(
                    ToolResult(response.get("name", "tool"), _text_of(response.get("response")))
                )
        if not conv.tool_results:
            conv.last_user_text = "\n".join(p.get("text", "") for p in parts if "text" in p)
    return conv


def read_bedrock(body: Mapping[str, Any], model: str) -> Conversation:
    """Converse: cache order tools -> system -> messages, with explicit ``cachePoint`` blocks."""
    inference = body.get("inferenceConfig") or {}
    conv = Conversation(
        model=model, max_tokens=inference.get("maxTokens"), segments=blocks_of("bedrock", body)
    )
    tools = (body.get("toolConfig") or {}).get("tools") or []
    for tool in tools:
        spec = tool.get("toolSpec")
        if isinstance(spec, Mapping):
            conv.tools[spec.get("name", "")] = (spec.get("inputSchema") or {}).get("json") or {}
    system = body.get("system") or []
    conv.system = "\n".join(b.get("text", "") for b in system if "text" in b)
    messages = body.get("messages") or []
    names: dict[str, str] = {}
    for message in messages:
        content = message.get("content") or []
        for block in content:
            use = block.get("toolUse")
            if isinstance(use, Mapping):
                names[use.get("toolUseId", "")] = use.get("name", "tool")
    if messages and messages[-1].get("role") == "user":
        blocks = messages[-1].get("content") or []
        for block in blocks:
            result = block.get("toolResult")
            if isinstance(result, Mapping):
                name = names.get(result.get("toolUseId", ""), "tool")
                conv.tool_results.append(ToolResult(name, _text_of(result.get("content"))))
        if not conv.tool_results:
            conv.last_user_text = "\n".join(b["text"] for b in blocks if isinstance(b.get("text"), str))
    return conv
