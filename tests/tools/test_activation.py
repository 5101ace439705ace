"""tool_activation (SPEC A4, A5): the section round-trips, and restoration grants exactly what
the evidence supports: the newest valid section, plus a newer successful ToolSearch result."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from desktop.host.tools.catalog import ToolCatalog
from desktop.host.tools.executor import HostExecutor
from desktop.session.activation import (
    SECTION_NAME,
    ActivationSectionError,
    ActivationState,
    activation_identity,
    activation_message,
    parse_section,
    preserve_activation,
    render_section,
    restore_activation,
)
from desktop.session.gate import ToolGate
from tests.tools.conftest import FLASH, call

IDENTITY = hashlib.sha256(b"route+catalog").hexdigest()
DEFERRED = {"mcp__t__a", "mcp__t__b", "mcp__t__c", "mcp__t__d", "mcp__t__e"}


def section_message(state: ActivationState | None, ts: int = 1) -> dict[str, Any]:
    text = render_section(state) if state is not None else None
    return {"role": "system", "content": "", "sections": {SECTION_NAME: text}, "timestamp": ts}


def toolsearch_result(names: list[str], *, error: bool = False, call_id: str = "ts") -> list[dict[str, Any]]:
    return [
        {
            "role": "assistant",
            "content": [
                {"type": "toolCall", "id": call_id, "name": "ToolSearch", "arguments": {"query": "x"}}
            ],
            "api": "openai-completions",
            "provider": "deepseek",
            "model": "deepseek-flash",
            "stopReason": "toolUse",
            "timestamp": 5,
        },
        {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": "ToolSearch",
            "content": [{"type": "text", "text": "Activated"}],
            "isError": error,
            "details": {"query": "x", "activated": names},
            "timestamp": 6,
        },
    ]


@pytest.mark.parametrize(
    "state",
    [
        ActivationState(IDENTITY),
        ActivationState(IDENTITY, ("mcp__t__b", "mcp__t__a"), 3),
        ActivationState(IDENTITY, ("word_count",), 12),
    ],
)
def test_section_round_trips(state: ActivationState) -> None:
    text = render_section(state)
    assert text.startswith('<tool_activation version="1">') and text.endswith("</tool_activation>")
    assert parse_section(text) == state
    assert render_section(parse_section(text)) == text


@pytest.mark.parametrize(
    ("mutate", "kind"),
    [
        (lambda t: t.replace('version="1"', 'version="2"'), "unknown-version"),
        (lambda t: t.replace('version="1"', 'version="x"'), "unknown-version"),
        (lambda t: t.replace('"v":1', '"v":2'), "invalid"),
        (lambda t: t.replace("(via ToolSearch)", "(granted by admin)"), "invalid"),
        (lambda t: t.replace('"active":[', '"active":{').replace("]", "}"), "invalid"),
        (lambda t: t.replace(IDENTITY, "not-a-digest"), "invalid"),
        (lambda t: t[:-3], "invalid"),
        (lambda t: "", "invalid"),
    ],
)
def test_parse_rejects_altered_sections(mutate: Any, kind: str) -> None:
    text = mutate(render_section(ActivationState(IDENTITY, ("mcp__t__a",), 1)))
    with pytest.raises(ActivationSectionError) as err:
        parse_section(text)
    assert err.value.kind == kind


def test_identity_covers_every_input() -> None:
    base: dict[str, Any] = {
        "account": "acct",
        "model": "deepseek-flash",
        "api": "openai-completions",
        "endpoint": "https://api.deepseek.com",
        "declarations": [{"name": "t", "description": "d", "parameters": {"type": "object"}}],
        "deferred_names": ["t"],
    }
    reference = activation_identity(**base)
    assert len(reference) == 64
    variants = [
        {"account": "other"},
        {"model": "deepseek-pro"},
        {"api": "openai-responses"},
        {"endpoint": "https://relay.example"},
        {"declarations": [{"name": "t", "description": "d", "parameters": {"type": "object", "x": 1}}]},
        {"deferred_names": []},
    ]
    for change in variants:
        assert activation_identity(**{**base, **change}) != reference, change
    # Key order and endpoint trailing slash are not identity.
    same = {**base, "endpoint": "https://api.deepseek.com/"}
    same["declarations"] = [{"parameters": {"type": "object"}, "description": "d", "name": "t"}]
    assert activation_identity(**same) == reference


def test_crash_between_toolsearch_result_and_activation_row_recovers_only_that_result() -> None:
    history = [
        {"role": "system", "content": "base", "timestamp": 0},
        *toolsearch_result(["mcp__t__c"], call_id="old"),  # before the section: superseded by it
        section_message(ActivationState(IDENTITY, ("mcp__t__a",), 2)),
        *toolsearch_result(["mcp__t__d"], error=True, call_id="failed"),  # failed: grants nothing
        {
            "role": "system",
            "content": "",
            "toolsAdded": [{"name": "mcp__t__e", "description": "", "parameters": {}}],
            "timestamp": 7,
        },
        *toolsearch_result(["mcp__t__b", "mcp__t__gone"], call_id="new"),  # the interrupted activation
    ]
    result = restore_activation(history, identity=IDENTITY, deferred_names=DEFERRED)
    assert result.active == {"mcp__t__a", "mcp__t__b"}
    assert result.recovered == ("mcp__t__b",)
    assert result.source == "section+toolsearch"
    assert "mcp__t__gone" in result.ignored
    assert result.epoch == 2


def test_newest_section_wins_and_supersedes_older_evidence() -> None:
    history = [
        section_message(ActivationState(IDENTITY, ("mcp__t__a", "mcp__t__b"), 1)),
        *toolsearch_result(["mcp__t__c"]),
        section_message(ActivationState(IDENTITY, (), 2)),  # a new epoch revoked everything
    ]
    result = restore_activation(history, identity=IDENTITY, deferred_names=DEFERRED)
    assert result.active == frozenset()
    assert result.source == "section"


@pytest.mark.parametrize(
    ("section", "fragment"),
    [
        (
            render_section(ActivationState(hashlib.sha256(b"other").hexdigest(), ("mcp__t__a",))),
            "identity mismatch",
        ),
        (
            render_section(ActivationState(IDENTITY, ("mcp__t__a",))).replace('version="1"', 'version="7"'),
            "unknown-version",
        ),
        ("<tool_activation>garbage</tool_activation>", "invalid"),
        (None, "removed"),
    ],
)
def test_untrusted_state_grants_nothing_not_even_newer_results(section: str | None, fragment: str) -> None:
    history = [
        {"role": "system", "content": "", "sections": {SECTION_NAME: section}, "timestamp": 1},
        *toolsearch_result(["mcp__t__b"]),
    ]
    result = restore_activation(history, identity=IDENTITY, deferred_names=DEFERRED)
    assert result.active == frozenset()
    assert result.source == "rejected"
    assert fragment in result.reason


def test_legacy_history_keeps_the_toolsearch_evidence_rule() -> None:
    history = [
        {
            "role": "system",
            "content": "base",
            "toolsAdded": [{"name": "mcp__t__e", "description": "", "parameters": {}}],
            "timestamp": 0,
        },
        *toolsearch_result(["mcp__t__a"], call_id="1"),
        *toolsearch_result(["mcp__t__b"], error=True, call_id="2"),
        *toolsearch_result(["mcp__t__c", "not_in_catalog"], call_id="3"),
    ]
    result = restore_activation(history, identity=IDENTITY, deferred_names=DEFERRED)
    assert result.source == "legacy"
    assert result.active == {"mcp__t__a", "mcp__t__c"}  # never e (declared only), never b (failed)


def test_declarations_alone_never_grant() -> None:
    added = [{"name": n, "description": "", "parameters": {}} for n in sorted(DEFERRED)]
    history = [{"role": "system", "content": "base", "toolsAdded": added, "timestamp": 0}]
    assert restore_activation(history, identity=IDENTITY, deferred_names=DEFERRED).active == frozenset()


def test_temporary_prompt_replacement_keeps_activation_metadata() -> None:
    current = {
        "runtime": "You are Pi.",
        SECTION_NAME: render_section(ActivationState(IDENTITY, ("mcp__t__a",))),
    }
    replaced = preserve_activation({"runtime": "Summarize the conversation."}, current)
    assert replaced["runtime"] == "Summarize the conversation."
    assert replaced[SECTION_NAME] == current[SECTION_NAME]
    assert parse_section(replaced[SECTION_NAME]).active == ("mcp__t__a",)


def test_activation_message_shape() -> None:
    state = ActivationState(IDENTITY, ("mcp__t__a",), 4)
    tool = {"name": "mcp__t__a", "description": "A", "parameters": {"type": "object"}}
    message = activation_message(state, tools_added=[tool], tools_removed=["mcp__t__z"], timestamp=99)
    assert message == {
        "role": "system",
        "content": "",
        "sections": {SECTION_NAME: render_section(state)},
        "toolsAdded": [tool],
        "toolsRemoved": [{"name": "mcp__t__z"}],
        "timestamp": 99,
    }


def test_gate_round_trip_through_history(catalog: ToolCatalog, host: HostExecutor) -> None:
    """Live activation, persisted as messages, restores to the same grant in a new gate."""
    gate = ToolGate(catalog, host, FLASH)
    history: list[dict[str, Any]] = [
        {"role": "system", "content": "base", "sections": {SECTION_NAME: gate.section_text()}, "timestamp": 0}
    ]
    result = gate.execute(call("ToolSearch", {"query": "select:word_count"}, "s1"))
    history.append(result.message)
    update = gate.take_update(timestamp=10)
    assert update is not None and gate.take_update() is None
    history.append(update)

    fresh = ToolGate(catalog, host, FLASH)
    restored = fresh.restore(history)
    assert restored.source == "section" and restored.active == {"word_count"}
    assert fresh.execute(call("word_count", {"text": "a b c"})).message["content"][0]["text"] == "3"

    # Crash variant: the update row never made it; the newer ToolSearch result recovers it,
    # and the gate then owes the missing section.
    crashed = ToolGate(catalog, host, FLASH)
    recovered = crashed.restore(history[:-1])
    assert recovered.source == "section+toolsearch" and recovered.recovered == ("word_count",)
    owed = crashed.take_update(timestamp=11)
    assert owed is not None
    assert parse_section(owed["sections"][SECTION_NAME]).active == ("word_count",)


def test_checkpoint_activation_round_trips_and_rejects_bad_data() -> None:
    state = ActivationState(IDENTITY, ("mcp__t__b", "mcp__t__a"), 5)
    assert ActivationState.from_checkpoint(state.to_checkpoint()) == state
    with pytest.raises(ActivationSectionError) as err:
        ActivationState.from_checkpoint({**state.to_checkpoint(), "v": 3})
    assert err.value.kind == "unknown-version"
    with pytest.raises(ActivationSectionError):
        ActivationState.from_checkpoint({**state.to_checkpoint(), "identity": "x"})


def test_on_demand_restore_does_not_publish_twice(catalog: ToolCatalog, host: HostExecutor) -> None:
    from tests.tools.conftest import OTHER

    gate = ToolGate(catalog, host, OTHER)
    history: list[dict[str, Any]] = [
        {"role": "system", "content": "base", "sections": {SECTION_NAME: gate.section_text()}, "timestamp": 0}
    ]
    history.append(gate.execute(call("ToolSearch", {"query": "select:word_count"})).message)
    update = gate.take_update()
    assert update is not None and [t["name"] for t in update["toolsAdded"]] == ["word_count"]
    history.append(update)

    fresh = ToolGate(catalog, host, OTHER)
    fresh.restore(history)
    assert "word_count" in {t["name"] for t in fresh.request_tools()}
    fresh.execute(call("ToolSearch", {"query": "select:word_count,touch_marker"}))
    again = fresh.take_update()
    assert again is not None and [t["name"] for t in again["toolsAdded"]] == ["touch_marker"]
