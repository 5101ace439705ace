"""Make a neutral history replayable on one target model (pi-ai ``transformMessages``).

Histories cross models: thinking from another model becomes text, signatures that only the
producing model can read are dropped, tool call ids are normalized where the target needs
it, images become placeholders for text-only models, failed assistant turns are skipped,
and orphaned tool calls get a synthetic error result so every API accepts the sequence.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from desktop.pi.types import AssistantMessage, Message, Model

USER_IMAGE_PLACEHOLDER = "(image omitted: model does not support images)"
TOOL_IMAGE_PLACEHOLDER = "(tool image omitted: model does not support images)"

ToolCallIdNormalizer = Callable[[str, Model, AssistantMessage], str]


def _replace_images(content: Sequence[Mapping[str, Any]], placeholder: str) -> list[Any]:
    result: list[Any] = []
    previous_was_placeholder = False
    for block in content:
        if block.get("type") == "image":
            if not previous_was_placeholder:
                result.append({"type": "text", "text": placeholder})
            previous_was_placeholder = True
            continue
        result.append(block)
        previous_was_placeholder = block.get("text") == placeholder
    return result


def _without_images(message: dict[str, Any], placeholder: str) -> dict[str, Any]:
    """The message with image blocks replaced by a placeholder (itself when it has none)."""
    content = message["content"]
    if isinstance(content, list) and any(block.get("type") == "image" for block in content):
        return {**message, "content": _replace_images(content, placeholder)}
    return message


def _same_model(message: Mapping[str, Any], model: Model) -> bool:
    return bool(
        message.get("provider") == model["provider"]
        and message.get("api") == model["api"]
        and message.get("model") == model["id"]
    )


def _dropped_for_same_model(block: Mapping[str, Any]) -> bool:
    """Of a thinking block: unsigned and blank, the one thing dropped even on the producing model."""
    return (
        not block.get("redacted")
        and not block.get("thinkingSignature")
        and not (block.get("thinking") or "").strip()
    )


def _transform_assistant(
    message: dict[str, Any],
    model: Model,
    normalize_id: ToolCallIdNormalizer | None,
    id_map: dict[str, str],
) -> dict[str, Any]:
    same = _same_model(message, model)
    if same:
        for block in message["content"]:
            if block.get("type") == "thinking" and _dropped_for_same_model(block):
                break
        else:
            # Replaying to the model that produced it: every block goes back as it is.
            return message
    content: list[dict[str, Any]] = []
    for block in message["content"]:
        kind = block.get("type")
        if kind == "thinking":
            if block.get("redacted"):
                if same:
                    content.append(block)
                continue
            if same and block.get("thinkingSignature"):
                content.append(block)
                continue
            thinking = block.get("thinking") or ""
            if not thinking.strip():
                continue
            content.append(block if same else {"type": "text", "text": thinking})
        elif kind == "text":
            content.append(block if same else {"type": "text", "text": block["text"]})
        elif kind == "toolCall":
            call = block
            if not same and call.get("thoughtSignature"):
                call = {k: v for k, v in call.items() if k != "thoughtSignature"}
            if not same and normalize_id is not None:
                new_id = normalize_id(call["id"], model, cast(AssistantMessage, message))
                if new_id != call["id"]:
                    id_map[call["id"]] = new_id
                    call = {**call, "id": new_id}
            content.append(call)
        else:
            content.append(block)
    return {**message, "content": content}


def transform_messages(
    messages: Sequence[Message],
    model: Model,
    normalize_tool_call_id: ToolCallIdNormalizer | None = None,
) -> list[Message]:
    id_map: dict[str, str] = {}
    text_only = "image" not in model["input"]
    # One pass, and a message is copied only where something in it changes.
    transformed: list[dict[str, Any]] = []
    for original in messages:
        message = cast(dict[str, Any], original)
        if message.get("content") is None:
            message = {**message, "content": []}
        role = message["role"]
        if role == "assistant":
            message = _transform_assistant(message, model, normalize_tool_call_id, id_map)
        elif role == "toolResult":
            if text_only:
                message = _without_images(message, TOOL_IMAGE_PLACEHOLDER)
            new_id = id_map.get(message["toolCallId"])
            if new_id and new_id != message["toolCallId"]:
                message = {**message, "toolCallId": new_id}
        elif role == "user" and text_only:
            message = _without_images(message, USER_IMAGE_PLACEHOLDER)
        transformed.append(message)

    # Second pass: close orphaned tool calls; system messages between a call and its
    # results are held back until the results are in, so they never split the pair.
    result: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []
    answered: set[str] = set()
    held: list[dict[str, Any]] = []

    def close_pending() -> None:
        nonlocal pending, answered
        if not pending and not held:
            return
        for call in pending:
            if call["id"] not in answered:
                result.append(
                    {
                        "role": "toolResult",
                        "toolCallId": call["id"],
                        "toolName": call["name"],
                        "content": [{"type": "text", "text": "No result provided"}],
                        "isError": True,
                        "timestamp": int(time.time() * 1000),
                    }
                )
        pending, answered = [], set()
        result.extend(held)
        held.clear()

    for message in transformed:
        role = message["role"]
        if role == "assistant":
            close_pending()
            if message.get("stopReason") in ("error", "aborted"):
                continue
            calls = [b for b in message["content"] if b.get("type") == "toolCall"]
            if calls:
                pending, answered = calls, set()
            result.append(message)
        elif role == "toolResult":
            answered.add(message["toolCallId"])
            result.append(message)
        elif role == "system":
            (held if pending else result).append(message)
        elif role == "user":
            close_pending()
            result.append(message)
        else:
            result.append(message)
    close_pending()
    return cast(list[Message], result)
