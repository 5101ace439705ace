"""Declaration policy (design A2, A3, C4): fixed complete declarations on the verified Flash
binding, on-demand schemas everywhere else, and a logged (never truncating) fallback."""

from __future__ import annotations

import orjson
import pytest

from desktop.host.tools.catalog import ToolCatalog, canonical_json
from desktop.host.tools.executor import HostExecutor
from desktop.host.tools.extensions import ExtensionRegistry
from desktop.session.declarations import (
    DEEPSEEK_MAX_FUNCTIONS,
    CompactionBudget,
    RouteBinding,
    decide_policy,
    estimate_tokens,
)
from desktop.session.gate import ToolGate
from tests.tools.conftest import FLASH, OTHER, call

CORE = {"ToolSearch", "bash", "edit", "find", "grep", "ls", "read", "skill", "write"}


def _many_tools(registry: ExtensionRegistry, count: int) -> None:
    for i in range(count):
        registry.register_tool(
            f"gen_{i:03d}",
            f"Generated tool number {i} for topic {i % 7}.",
            {"type": "object", "properties": {"value": {"type": "integer"}}, "required": ["value"]},
            lambda args: "ok",
        )


def test_fixed_route_declares_everything_and_never_changes_across_activations(
    catalog: ToolCatalog, host: HostExecutor, extensions: ExtensionRegistry
) -> None:
    _many_tools(extensions, 20)
    gate = ToolGate(catalog, host, FLASH)
    assert gate.policy.mode == "fixed", gate.policy.reason
    first = gate.request_tools()
    names = [tool["name"] for tool in first]
    assert names == sorted(names)
    assert set(names) == CORE | {"word_count", "touch_marker"} | {f"gen_{i:03d}" for i in range(20)}
    assert first == gate.snapshot.declarations()
    frozen = canonical_json(first)

    for query in ("select:word_count", "generated tool topic 3", "select:gen_007,gen_011", "marker file"):
        result = gate.execute(call("ToolSearch", {"query": query}))
        assert result.ok and result.activated, query
        update = gate.take_update()
        assert update is not None
        assert "toolsAdded" not in update and "toolsRemoved" not in update  # activation only
        assert canonical_json(gate.request_tools()) == frozen
    assert {"word_count", "gen_007", "gen_011", "touch_marker"} <= set(gate.state.active)


def test_other_routes_publish_schemas_only_after_activation(catalog: ToolCatalog, host: HostExecutor) -> None:
    gate = ToolGate(catalog, host, OTHER)
    assert gate.policy.mode == "on-demand" and not gate.policy.fallback
    assert {tool["name"] for tool in gate.request_tools()} == CORE

    result = gate.execute(call("ToolSearch", {"query": "count words"}))
    assert result.activated == ("word_count",)
    update = gate.take_update()
    assert update is not None
    assert update["toolsAdded"] == [gate.snapshot.get("word_count").declaration()]  # type: ignore[union-attr]
    assert {tool["name"] for tool in gate.request_tools()} == CORE | {"word_count"}

    # Re-activating publishes nothing twice.
    gate.execute(call("ToolSearch", {"query": "select:word_count"}))
    assert gate.take_update() is None
    assert "touch_marker" not in {tool["name"] for tool in gate.request_tools()}


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ({"transport_verified": False}, "not transport-verified"),
        ({"supports_mid_convo_system_messages": False}, "chronological system support"),
        ({"base_url": "https://relay.example.com/v1"}, "is not the official"),
        ({"model_id": "deepseek-pro"}, "is not the official"),
        ({"api": "anthropic-messages"}, "is not the official"),
        ({"provider": "opencode"}, "is not the official"),
    ],
)
def test_anything_but_the_exact_binding_is_on_demand(change: dict[str, object], fragment: str) -> None:
    policy = decide_policy(FLASH._replace(**change), [])  # type: ignore[arg-type]
    assert policy.mode == "on-demand"
    assert not policy.fallback
    assert fragment in policy.reason


def test_trailing_slash_is_still_the_official_endpoint() -> None:
    assert decide_policy(FLASH._replace(base_url="https://api.deepseek.com/"), []).mode == "fixed"


def test_more_than_128_functions_falls_back_without_truncating(
    catalog: ToolCatalog, host: HostExecutor, extensions: ExtensionRegistry
) -> None:
    _many_tools(extensions, DEEPSEEK_MAX_FUNCTIONS)  # + 2 extension + 9 core tools
    gate = ToolGate(catalog, host, FLASH)
    total = len(gate.snapshot.declarations())
    assert total == DEEPSEEK_MAX_FUNCTIONS + 11
    assert gate.policy.mode == "on-demand" and gate.policy.fallback
    assert f"{total} functions" in gate.policy.reason and "at most 128" in gate.policy.reason
    notes = gate.take_notes()
    assert any(n.level == "warning" and n.data.get("fallback") for n in notes)
    # Nothing truncated: every generated tool is still in the catalog and can be activated.
    assert len(gate.snapshot.deferred) == DEEPSEEK_MAX_FUNCTIONS + 2
    last = f"gen_{DEEPSEEK_MAX_FUNCTIONS - 1:03d}"
    assert gate.execute(call("ToolSearch", {"query": f"select:{last}"})).activated == (last,)
    update = gate.take_update()
    assert update is not None and [t["name"] for t in update["toolsAdded"]] == [last]


def test_compaction_budget_fallback() -> None:
    tools = [{"name": f"t{i}", "description": "x" * 400, "parameters": {"type": "object"}} for i in range(50)]
    cost = estimate_tokens(tools)
    budget = CompactionBudget(reserve_tokens=16_384, retained_tail_tokens=20_000)
    roomy = FLASH._replace(context_window=16_384 + 20_000 + cost)
    assert decide_policy(roomy, tools, budget=budget).mode == "fixed"
    tight = FLASH._replace(context_window=16_384 + 20_000 + cost - 1)
    policy = decide_policy(tight, tools, budget=budget)
    assert policy.mode == "on-demand" and policy.fallback
    assert "retained-tail budget of 20000" in policy.reason
    # The base prompt counts against the same budget.
    assert decide_policy(roomy, tools, budget=budget, prompt_tokens=1).fallback


def test_estimate_is_chars_over_four() -> None:
    tool = {"name": "abcd", "description": "x" * 10, "parameters": {"type": "object"}}
    chars = 4 + 10 + len(orjson.dumps({"type": "object"}))
    assert estimate_tokens([tool]) == -(-chars // 4)


def test_from_model_reads_the_pi_model_dict() -> None:
    model = {
        "id": "deepseek-flash",
        "provider": "deepseek",
        "api": "openai-completions",
        "baseUrl": "https://api.deepseek.com",
        "contextWindow": 1_000_000,
        "compat": {"supportsMidConvoSystemMessages": True},
    }
    binding = RouteBinding.from_model(model, transport_verified=True, account="a")
    assert decide_policy(binding, []).mode == "fixed"
    assert decide_policy(RouteBinding.from_model(model, transport_verified=False), []).mode == "on-demand"


def test_catalog_change_starts_an_epoch_and_repolicies(
    catalog: ToolCatalog, host: HostExecutor, extensions: ExtensionRegistry
) -> None:
    gate = ToolGate(catalog, host, FLASH)
    gate.execute(call("ToolSearch", {"query": "select:word_count"}))
    gate.take_update()
    assert gate.epoch == 0
    _many_tools(extensions, DEEPSEEK_MAX_FUNCTIONS)
    assert gate.refresh() and gate.epoch == 1
    assert gate.policy.mode == "on-demand" and gate.policy.fallback
    assert gate.state.active == ()
    update = gate.take_update()
    assert update is not None and "(via ToolSearch): none." in update["sections"]["tool_activation"]


def test_reactivation_after_a_schema_change_republishes_before_any_update(
    catalog: ToolCatalog, host: HostExecutor, extensions: ExtensionRegistry
) -> None:
    gate = ToolGate(catalog, host, OTHER)
    gate.execute(call("ToolSearch", {"query": "select:word_count"}))
    gate.take_update()
    extensions.register_tool(
        "word_count",
        "Count the words in a text (v2).",
        {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        lambda args: "n",
    )
    # Epoch change and re-activation happen before the runtime takes the next update.
    gate.execute(call("ToolSearch", {"query": "select:word_count"}))
    update = gate.take_update()
    assert update is not None
    assert update["toolsRemoved"] == [{"name": "word_count"}]
    assert [t["description"] for t in update["toolsAdded"]] == ["Count the words in a text (v2)."]


def test_on_demand_preference_on_the_fixed_binding(catalog: ToolCatalog, host: HostExecutor) -> None:
    assert decide_policy(FLASH, [], preference="auto").mode == "fixed"
    policy = decide_policy(FLASH, [], preference="on-demand")
    assert policy.mode == "on-demand" and not policy.fallback
    assert "tools.declarations" in policy.reason
    # Elsewhere the preference changes nothing: those routes are on demand anyway.
    assert decide_policy(OTHER, [], preference="on-demand").reason == decide_policy(OTHER, []).reason
    with pytest.raises(ValueError, match="not one of auto, on-demand"):
        decide_policy(FLASH, [], preference="sometimes")  # type: ignore[arg-type]

    gate = ToolGate(catalog, host, FLASH, preference="on-demand")
    assert {tool["name"] for tool in gate.request_tools()} == CORE
    gate.execute(call("ToolSearch", {"query": "count words"}))
    update = gate.take_update()
    assert update is not None and [t["name"] for t in update["toolsAdded"]] == ["word_count"]
