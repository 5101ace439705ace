"""Fallback deliveries (P3): attributed user updates keep the prefix and never split a tool pair."""

from __future__ import annotations

from typing import Any

from desktop.pi.delivery import ATTRIBUTION_LABEL, attribute_updates, deliver
from desktop.pi.transcript import current_tools

TOOL = {"name": "grep", "description": "search", "parameters": {"type": "object"}}


def sys(**fields: Any) -> dict[str, Any]:
    return {"role": "system", "content": "", "timestamp": 1, **fields}


def test_attributed_update_becomes_labelled_user_message_in_place() -> None:
    messages: list[Any] = [
        sys(content="base", sections={"a": "A"}),
        {"role": "user", "content": "hi", "timestamp": 1},
        sys(sections={"a": "A2", "b": None}),
        {"role": "user", "content": "next", "timestamp": 1},
    ]
    out = attribute_updates(messages)
    assert out[0] == messages[0]
    assert out[2]["role"] == "user"
    text = out[2]["content"][0]["text"]
    assert text.startswith(ATTRIBUTION_LABEL)
    assert 'Updated system prompt section "a":\n\nA2' in text
    assert 'Removed system prompt section "b".' in text
    assert [m["role"] for m in out] == ["system", "user", "user", "user"]


def test_tool_changes_stay_system_state_and_updates_wait_for_tool_results() -> None:
    call = {"type": "toolCall", "id": "c1", "name": "read", "arguments": {}}
    messages: list[Any] = [
        sys(content="base"),
        {"role": "assistant", "content": [call], "stopReason": "toolUse"},
        sys(sections={"x": "X"}, toolsAdded=[TOOL]),
        {"role": "toolResult", "toolCallId": "c1", "toolName": "read", "content": [], "isError": False},
    ]
    out = attribute_updates(messages)
    assert [m["role"] for m in out] == ["system", "assistant", "toolResult", "user", "system"]
    assert out[4] == {"role": "system", "content": "", "toolsAdded": [TOOL], "timestamp": 1}
    assert current_tools(out) == [TOOL]


def test_native_routes_and_folded_fallback_pass_through() -> None:
    messages: list[Any] = [sys(content="base"), sys(sections={"a": "A"})]
    native = {"compat": {"supportsMidConvoSystemMessages": True}}
    assert deliver(messages, native, "attributed") == messages  # type: ignore[arg-type]
    assert deliver(messages, {}, "folded") == messages  # type: ignore[arg-type]
    assert deliver(messages, {}, "attributed")[1]["role"] == "user"  # type: ignore[arg-type]
