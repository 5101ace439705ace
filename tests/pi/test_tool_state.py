"""What a projection derives from the tool declarations is kept per tool set (design X13).

A long session's requests declare the same tool objects request after request, and the list
grows by a tool now and then: each projection finding its tool state, grammar inputs and
converted entries again walked every tool (a what-if pass on a session that adds a tool every
tenth turn spent most of its time there). These tests read what a projection reads of the
tools, with real projections.
"""

from __future__ import annotations

from typing import Any, cast

import pytest

from desktop.pi.projection import CREDENTIAL_PLACEHOLDER, RequestOptions, project
from desktop.pi.routes import resolve_model, route_from_string
from desktop.pi.transcript import current_tools, declared_tools, has_non_additive_tool_changes
from desktop.pi.types import Message, Model

OPTIONS = RequestOptions(session_id="s", api_key=CREDENTIAL_PLACEHOLDER)
ROUTES = ["anthropic/claude-opus-5-5", "openai/gpt-5.5", "deepseek/deepseek-flash"]


class _Read(dict[str, Any]):
    """A tool declaration that counts how often its fields are read."""

    reads = 0

    def __getitem__(self, key: str) -> Any:
        _Read.reads += 1
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:
        _Read.reads += 1
        return super().get(key, default)


def _tool(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "description": f"The {name} tool.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    }


def _messages(tools: list[Any], later: list[Any] | None = None) -> list[Message]:
    out: list[dict[str, Any]] = [
        {"role": "system", "content": "Be brief.", "toolsAdded": tools, "timestamp": 1},
        {"role": "user", "content": "Hello.", "timestamp": 2},
    ]
    if later:
        out.append({"role": "system", "content": "", "toolsAdded": later, "timestamp": 3})
        out.append({"role": "user", "content": "Again.", "timestamp": 4})
    return cast(list[Message], out)


def _model(route: str) -> Model:
    return cast(Model, resolve_model(route_from_string(route)).model)


@pytest.mark.parametrize("route", ROUTES)
def test_a_projection_of_known_tools_reads_none_of_them_again(route: str) -> None:
    """The second projection of the same leading tools (a later request) reads none of them:
    the tool state, the grammar inputs and the converted entries are kept by the tools'
    identities (a later message's own additions are read where they are rendered)."""
    model = _model(route)
    tools = [_Read(_tool(f"t{i}")) for i in range(20)]
    later = [_tool("added")]
    first = project(model, _messages(tools, later), OPTIONS)
    _Read.reads = 0
    again = project(model, _messages(tools, later), OPTIONS)
    assert _Read.reads == 0
    assert again.body == first.body


@pytest.mark.parametrize("route", ROUTES)
def test_a_list_that_adds_a_tool_shares_the_entries_of_the_others(route: str) -> None:
    """A new tool list converts its new tool alone: the entries of the tools it shares with an
    earlier list are the same objects (read-only, design X11), the last one copied."""
    model = _model(route)
    tools = [_tool(f"t{i}") for i in range(5)]
    first = project(model, _messages(tools), OPTIONS).body["tools"]
    grown = project(model, _messages([*tools, _tool("t5")]), OPTIONS).body["tools"]
    assert len(grown) == len(first) + 1
    assert all(a is b for a, b in zip(first[:4], grown[:4], strict=True))


def test_the_kept_tool_state_follows_the_changes_whichever_lists_carry_them() -> None:
    """The same lists in other messages or another order are another state: the state is
    named by the changes in the order they apply."""
    a, b = _tool("a"), _tool("b")
    adds, removes = [a, b], [{"name": "a"}]
    one = cast(
        list[Message],
        [
            {"role": "system", "content": "", "toolsAdded": adds, "timestamp": 1},
            {"role": "system", "content": "", "toolsRemoved": removes, "timestamp": 2},
        ],
    )
    other = cast(
        list[Message],
        [
            {"role": "system", "content": "", "toolsRemoved": removes, "timestamp": 1},
            {"role": "system", "content": "", "toolsAdded": adds, "timestamp": 2},
        ],
    )
    assert [t["name"] for t in current_tools(one)] == ["b"]
    assert [t["name"] for t in current_tools(other)] == ["a", "b"]
    assert has_non_additive_tool_changes(one) and has_non_additive_tool_changes(other)
    assert (
        [t["name"] for t in declared_tools(one)] == ["a", "b"] == [t["name"] for t in declared_tools(other)]
    )
    both = cast(
        list[Message], [{"role": "system", "content": "", "toolsAdded": adds, "toolsRemoved": removes}]
    )
    assert [t["name"] for t in current_tools(both)] == ["a", "b"]
    assert not has_non_additive_tool_changes(cast(list[Message], [one[0]]))
