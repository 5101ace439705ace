"""A system update sent in place after tool results does not hide the results from the
scripted model (chat and Responses): it answers the results instead of re-running the
user's marker, as Anthropic's reader already did."""

from __future__ import annotations

from desktop.emulator.conversation import read_chat, read_responses
from desktop.emulator.script import plan_reply


def test_chat_tool_results_followed_by_a_system_update() -> None:
    body = {
        "model": "deepseek-flash",
        "messages": [
            {"role": "user", "content": "find tools [[search:select:ci_log]]"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "ToolSearch"}}],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "Activated 1 tool(s)"},
            {"role": "system", "content": 'Updated system prompt section "tool_activation": ...'},
        ],
    }
    conv = read_chat(body)
    assert [(r.name, r.text) for r in conv.tool_results] == [("ToolSearch", "Activated 1 tool(s)")]
    reply = plan_reply(conv)
    assert reply.text == "Tool ToolSearch returned: Activated 1 tool(s)" and not reply.calls

    # Without results before it, a trailing update leaves the user's turn as the one answered.
    user_last = read_chat({"model": "m", "messages": [body["messages"][0], body["messages"][3]]})
    assert user_last.tool_results == [] and "[[search:" in user_last.last_user_text


def test_responses_tool_results_followed_by_additional_tools_and_an_update() -> None:
    body = {
        "model": "gpt-5.6-luna",
        "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "[[search:select:ci_log]]"}]},
            {"type": "function_call", "call_id": "c1", "name": "ToolSearch", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "Activated 1 tool(s)"},
            {
                "type": "additional_tools",
                "role": "developer",
                "tools": [{"type": "function", "name": "ci_log"}],
            },
            {"role": "developer", "content": 'Updated system prompt section "tool_activation": ...'},
        ],
    }
    reply = plan_reply(read_responses(body))
    assert reply.text == "Tool ToolSearch returned: Activated 1 tool(s)" and not reply.calls
