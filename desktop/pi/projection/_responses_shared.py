"""What the three OpenAI Responses APIs share (pi-ai ``openai-responses-shared.ts``).

OpenAI Responses, Azure OpenAI Responses and ChatGPT Codex take the same ``input`` item
list and the same tool shapes; they differ in the envelope (cache fields, reasoning,
instructions) which each API module builds. Mid-conversation system messages keep their
place as ``developer``/``system`` items on flagged models. Tools added later are loaded in
place — an ``additional_tools`` item, or a client-side ``tool_search_call`` plus
``tool_search_output`` pair — only while the retained history holds nothing but additions;
otherwise the request carries the full current list (``resolve_transcript_tools``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, cast

import orjson

from desktop.pi.projection import ProjectionError
from desktop.pi.projection._facts import TranscriptFacts
from desktop.pi.projection._js import js_length, js_stringify, sanitize_surrogates, short_hash
from desktop.pi.projection._strict import (
    grammar_input_properties,
    grammar_tool_input,
    json_schema_tool_parameters,
    resolve_grammar,
    resolve_json_schema_strict,
)
from desktop.pi.projection._tool_memo import ToolMemo
from desktop.pi.text import render_system_update, system_message_text
from desktop.pi.transcript import (
    TranscriptTools,
    declared_tool_tuple,
    resolve_transcript,
    resolve_transcript_tools,
)
from desktop.pi.transform import transform_messages
from desktop.pi.types import AssistantMessage, Message, Model, SystemMessage

#: OpenAI Responses rejects ``max_output_tokens`` below 16.
MIN_OUTPUT_TOKENS = 16
PROMPT_CACHE_KEY_MAX_LENGTH = 64

_ID_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


@dataclass(frozen=True)
class ToolOptions:
    """How tool definitions are written; the defaults differ per API."""

    #: Value of ``strict`` when no constrained sampling decides it (Codex sends ``null``).
    default_strict: bool | None = False
    supports_strict_mode: bool = True
    supports_grammar_tools: bool = False
    #: Tools loaded by a client tool search are marked ``defer_loading``.
    tool_search_result: bool = False


@dataclass(frozen=True)
class ResponsesRoute:
    """The compat switches that decide how one Responses API writes the ``input`` list."""

    allowed_tool_call_providers: frozenset[str]
    tool_options: ToolOptions
    supports_mid_convo_system: bool = False
    supports_additional_tools: bool = False
    supports_tool_search: bool = False
    #: Codex sends the leading system prompt as ``instructions`` instead.
    include_system_prompt: bool = True

    @classmethod
    def from_compat(
        cls,
        compat: Mapping[str, Any],
        allowed_tool_call_providers: frozenset[str],
        *,
        default_strict: bool | None,
        strict_by_default: bool,
        include_system_prompt: bool = True,
    ) -> ResponsesRoute:
        """The route from ``model.compat``, unset flags off (strict mode: ``strict_by_default``)."""
        strict = compat.get("supportsStrictMode")
        tool_options = ToolOptions(
            default_strict=default_strict,
            supports_strict_mode=strict_by_default if strict is None else bool(strict),
            supports_grammar_tools=bool(compat.get("supportsOpenAIGrammarTools")),
        )
        return cls(
            allowed_tool_call_providers=allowed_tool_call_providers,
            tool_options=tool_options,
            supports_mid_convo_system=bool(compat.get("supportsMidConvoSystemMessages")),
            supports_additional_tools=bool(compat.get("supportsAdditionalTools")),
            supports_tool_search=bool(compat.get("supportsToolSearch")),
            include_system_prompt=include_system_prompt,
        )


@dataclass(frozen=True)
class ResponsesInput:
    transcript: list[Message]
    tools: TranscriptTools
    items: list[Any]


def build_input(model: Model, messages: Sequence[Message], route: ResponsesRoute) -> ResponsesInput:
    """Resolve the transcript for the route, split its tools, and convert it to input items."""
    transcript = resolve_transcript(messages, route.supports_mid_convo_system)
    tools = resolve_transcript_tools(
        transcript, route.supports_additional_tools or route.supports_tool_search
    )
    grammar = grammar_input_properties(
        declared_tool_tuple(transcript), route.tool_options.supports_grammar_tools
    )
    facts = messages if isinstance(messages, TranscriptFacts) else None
    return ResponsesInput(transcript, tools, convert_input(model, transcript, route, tools, grammar, facts))


def reasoning_param(model: Model, effort: str | None, send_off: bool = True) -> dict[str, Any] | None:
    """The ``reasoning`` field: the mapped effort with a summary, or an explicit "off" level.

    No field for models without reasoning, nor when the level map disables "off" (a null) or
    the route cannot take one (``send_off``).
    """
    if not model.get("reasoning"):
        return None
    level_map = model.get("thinkingLevelMap") or {}
    if effort:
        return {"effort": mapped_level(level_map, effort, effort), "summary": "auto"}
    if send_off and level_map.get("off", "") is not None:
        return {"effort": mapped_level(level_map, "off", "none")}
    return None


def clamp_prompt_cache_key(key: str | None) -> str | None:
    """At most 64 code points, as pi-ai's ``clampOpenAIPromptCacheKey``."""
    if key is None or len(key) <= PROMPT_CACHE_KEY_MAX_LENGTH:
        return key
    return key[:PROMPT_CACHE_KEY_MAX_LENGTH]


# ---------------------------------------------------------------------------
# Tools
# ---------------------------------------------------------------------------


def convert_tools(tools: Sequence[Mapping[str, Any]], options: ToolOptions) -> list[dict[str, Any]]:
    return _TOOLS.convert(tools, (options,), lambda tool: _convert_tool(tool, options))


#: Each tool converted once per option set (design X11).
_TOOLS = ToolMemo()


def _convert_tool(tool: Mapping[str, Any], options: ToolOptions) -> dict[str, Any]:
    grammar = resolve_grammar(tool, options.supports_grammar_tools)
    if grammar:
        custom: dict[str, Any] = {
            "type": "custom",
            "name": tool["name"],
            "description": tool["description"],
            "format": {"type": "grammar", "syntax": grammar.format, "definition": grammar.definition},
        }
        if options.tool_search_result:
            custom["defer_loading"] = True
        return custom
    constrained = resolve_json_schema_strict(tool, options.supports_strict_mode)
    strict = options.default_strict if constrained is None else constrained
    function: dict[str, Any] = {
        "type": "function",
        "name": tool["name"],
        "description": tool["description"],
        "parameters": json_schema_tool_parameters(tool, strict),
    }
    if options.tool_search_result:
        function["defer_loading"] = True
    if options.supports_strict_mode:
        function["strict"] = strict
    return function


# ---------------------------------------------------------------------------
# Input items
# ---------------------------------------------------------------------------


def _normalize_id_part(part: str) -> str:
    # JS regexes without the u flag see an astral character as two code units.
    if not part.isascii():
        part = _ASTRAL.sub("__", part)
    sanitized = _ID_UNSAFE.sub("_", part)
    return sanitized[:64].rstrip("_")


def _tool_call_id_normalizer(model: Model, allowed: frozenset[str]) -> Any:
    provider = model["provider"]
    api = model["api"]

    def normalize(call_id: str, _target: Model, source: AssistantMessage) -> str:
        if provider not in allowed or "|" not in call_id:
            return _normalize_id_part(call_id)
        parts = call_id.split("|")
        normalized_call = _normalize_id_part(parts[0])
        item = parts[1]
        foreign = source.get("provider") != provider or source.get("api") != api
        normalized_item = f"fc_{short_hash(item)}"[:64] if foreign else _normalize_id_part(item)
        if not normalized_item.startswith("fc_"):
            normalized_item = _normalize_id_part(f"fc_{normalized_item}")
        return f"{normalized_call}|{normalized_item}"

    return normalize


def _parse_text_signature(signature: str | None) -> tuple[str, str | None] | None:
    if not signature:
        return None
    if signature.startswith("{"):
        try:
            parsed = orjson.loads(signature)
        except orjson.JSONDecodeError:
            parsed = None
        if isinstance(parsed, dict) and parsed.get("v") == 1 and isinstance(parsed.get("id"), str):
            phase = parsed.get("phase")
            return parsed["id"], phase if phase in ("commentary", "final_answer") else None
    return signature, None


def _tool_result_output(
    image_input: bool, content: Sequence[Mapping[str, Any]]
) -> str | list[dict[str, Any]]:
    if len(content) == 1 and content[0].get("type") == "text":
        text = content[0]["text"]
        return sanitize_surrogates(text) if text else "(no tool output)"
    text = "\n".join(block["text"] for block in content if block.get("type") == "text")
    images = [block for block in content if block.get("type") == "image"]
    if not images or not image_input:
        if text:
            return sanitize_surrogates(text)
        return "(see attached image)" if images else "(no tool output)"
    output: list[dict[str, Any]] = []
    if text:
        output.append({"type": "input_text", "text": sanitize_surrogates(text)})
    for image in images:
        output.append(
            {
                "type": "input_image",
                "detail": "auto",
                "image_url": f"data:{image['mimeType']};base64,{image['data']}",
            }
        )
    return output


def _user_content(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "input_text", "text": sanitize_surrogates(content)}]
    items: list[dict[str, Any]] = []
    for block in content:
        if block.get("type") == "text":
            items.append({"type": "input_text", "text": sanitize_surrogates(block["text"])})
        else:
            items.append(
                {
                    "type": "input_image",
                    "detail": "auto",
                    "image_url": f"data:{block['mimeType']};base64,{block['data']}",
                }
            )
    return items


def _reasoning_item(signature: str) -> Any:
    try:
        return orjson.loads(signature)
    except orjson.JSONDecodeError as error:
        raise ProjectionError(
            "thinking block field 'thinkingSignature' is not the JSON reasoning item an OpenAI "
            f"Responses model produced ({error}); drop the block or replay it on its own model"
        ) from error


def convert_input(
    model: Model,
    messages: Sequence[Message],
    route: ResponsesRoute,
    transcript_tools: TranscriptTools,
    grammar: Mapping[str, str],
    facts: TranscriptFacts | None = None,
) -> list[Any]:
    """The ``input`` item list for an already resolved (folded or in-place) transcript.

    Assistant items are named after their message position (``msg_pi_<n>``), so a stand-in
    transcript of the incremental projection passes the position its first message stands at
    and watches where given messages land (design P7).
    """
    provider = model["provider"]
    api = model["api"]
    model_id = model["id"]
    compat = model.get("compat") or {}
    instruction_role = (
        "developer"
        if model.get("reasoning") and compat.get("supportsDeveloperRole") is not False
        else "system"
    )
    anchors = transcript_tools.anchors_additions
    out: list[Any] = []

    def append_tool_additions(message: Mapping[str, Any], seed: str) -> None:
        tools = (message.get("toolsAdded") or []) if anchors else []
        if not tools:
            return
        if route.supports_additional_tools:
            out.append(
                {
                    "type": "additional_tools",
                    "role": "developer",
                    "tools": convert_tools(tools, route.tool_options),
                }
            )
            return
        if not route.supports_tool_search:
            return
        names = [tool["name"] for tool in tools]
        call_id = f"pi_tool_load_{short_hash(seed + ':' + ','.join(names))}"
        out.append(
            {
                "type": "tool_search_call",
                "call_id": call_id,
                "execution": "client",
                "status": "completed",
                "arguments": {"query": " ".join(names), "limit": len(names)},
            }
        )
        search_options = replace(route.tool_options, tool_search_result=True)
        out.append(
            {
                "type": "tool_search_output",
                "call_id": call_id,
                "execution": "client",
                "status": "completed",
                "tools": convert_tools(tools, search_options),
            }
        )

    transformed = transform_messages(
        messages, model, _tool_call_id_normalizer(model, route.allowed_tool_call_providers)
    )
    append = out.append
    image_input = "image" in model["input"]
    msg_index = facts.position_base if facts is not None else 0
    watched = facts.watched if facts is not None else None
    for source_index, message in enumerate(cast(list[dict[str, Any]], transformed)):
        if watched and id(message) in watched:
            watched[id(message)] = msg_index
        role = message["role"]
        if role == "assistant":
            same_provider_api = message.get("provider") == provider and message.get("api") == api
            same_model = same_provider_api and message.get("model") == model_id
            items = _assistant_items(
                message["content"], msg_index, same_model, same_provider_api and not same_model, grammar
            )
            if items:
                out.extend(items)
                msg_index += 1
        elif role == "toolResult":
            call_id = message["toolCallId"].partition("|")[0]
            output = _tool_result_output(image_input, message["content"])
            kind = "custom_tool_call_output" if message["toolName"] in grammar else "function_call_output"
            append({"type": kind, "call_id": call_id, "output": output})
            msg_index += 1
        elif role == "user":
            content = _user_content(message["content"])
            if content:
                append({"role": "user", "content": content})
                msg_index += 1
        elif role == "system":
            system = cast(SystemMessage, message)
            if source_index == 0:
                if route.include_system_prompt:
                    text = system_message_text(system)
                    if text:
                        append({"role": instruction_role, "content": sanitize_surrogates(text)})
                continue
            append_tool_additions(system, f"system:{msg_index}")
            text = render_system_update(system)
            if text:
                append({"role": instruction_role, "content": sanitize_surrogates(text)})
            msg_index += 1
        else:
            msg_index += 1
    return out


def _assistant_items(
    content: Sequence[Mapping[str, Any]],
    msg_index: int,
    same_model: bool,
    different_model: bool,
    grammar: Mapping[str, str],
) -> list[Any]:
    """One assistant turn as output items: reasoning, messages and tool calls, in order."""
    items: list[Any] = []
    text_index = 0
    for block in content:
        kind = block.get("type")
        if kind == "text":
            parsed = _parse_text_signature(block.get("textSignature"))
            msg_id = parsed[0] if parsed else None
            if not msg_id:
                msg_id = f"msg_pi_{msg_index}" if text_index == 0 else f"msg_pi_{msg_index}_{text_index}"
            elif len(msg_id) > 64 or js_length(msg_id) > 64:
                msg_id = f"msg_{short_hash(msg_id)}"
            text_index += 1
            item: dict[str, Any] = {
                "type": "message",
                "role": "assistant",
                "content": [
                    {"type": "output_text", "text": sanitize_surrogates(block["text"]), "annotations": []}
                ],
                "status": "completed",
                "id": msg_id,
            }
            if parsed and parsed[1]:
                item["phase"] = parsed[1]
            items.append(item)
        elif kind == "toolCall":
            name = block["name"]
            call_id, bar, item_id = block["id"].partition("|")
            if bar:
                # Only the first two '|' parts count, as pi-ai's array destructuring.
                item_id = item_id.partition("|")[0]
            input_property = grammar.get(name)
            if input_property is None:
                call: dict[str, Any] = {"type": "function_call"}
                if bar and not different_model and item_id.startswith("fc_"):
                    call["id"] = item_id
                call["call_id"] = call_id
                call["name"] = name
                call["arguments"] = js_stringify(block["arguments"])
            else:
                call = {"type": "custom_tool_call"}
                if bar and not different_model and item_id.startswith("ctc_"):
                    call["id"] = item_id
                call["call_id"] = call_id
                call["name"] = name
                call["input"] = sanitize_surrogates(
                    grammar_tool_input(name, block["arguments"], input_property)
                )
            if same_model and "namespace" in block:
                call["namespace"] = block["namespace"]
            items.append(call)
        elif kind == "thinking":
            signature = block.get("thinkingSignature")
            if signature:
                items.append(_reasoning_item(signature))
    return items


def mapped_level(level_map: Mapping[str, Any], level: str, fallback: str) -> str:
    """``thinkingLevelMap[level] ?? fallback``."""
    value = level_map.get(level)
    return fallback if value is None else str(value)


# ---------------------------------------------------------------------------
# URLs as the OpenAI SDK builds them (``new URL(base + path)``)
# ---------------------------------------------------------------------------

_PATH_ESCAPES = frozenset(' "<>`{}')


def _encode_path(path: str) -> str:
    out: list[str] = []
    for ch in path:
        if ch in _PATH_ESCAPES or ord(ch) < 0x21 or ord(ch) > 0x7E:
            out.extend(f"%{byte:02X}" for byte in ch.encode("utf-8"))
        else:
            out.append(ch)
    return "".join(out)


@lru_cache(maxsize=64)
def join_url(base_url: str, path: str) -> str:
    """The OpenAI SDK's ``buildURL``: one slash between base and path, path characters escaped
    (kept per route: every request of a route asks the same)."""
    joined = base_url + (path[1:] if base_url.endswith("/") and path.startswith("/") else path)
    scheme, sep, rest = joined.partition("://")
    if not sep:
        return joined
    slash = rest.find("/")
    if slash < 0:
        return f"{scheme.lower()}://{rest.lower()}/"
    host, tail = rest[:slash], rest[slash:]
    cut = min((i for i in (tail.find("?"), tail.find("#")) if i >= 0), default=len(tail))
    tail, query = tail[:cut], tail[cut:]
    return f"{scheme.lower()}://{host.lower()}{_encode_path(tail)}{query}"
