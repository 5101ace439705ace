"""Hooks, permission modes, the headless bridge, ToolSearch ranking and extension loading."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop.host.permissions import (
    HeadlessBridge,
    PermissionAnswer,
    PermissionMode,
    PermissionRequest,
    decide,
)
from desktop.host.tools.catalog import ToolCatalog
from desktop.host.tools.executor import HostExecutor
from desktop.host.tools.extensions import ExtensionError, ExtensionRegistry
from desktop.host.tools.toolsearch import rank
from desktop.host.tools.types import ToolSpec
from tests.tools.conftest import hook_runner, run_tool


def test_hook_receives_the_call_as_json_and_may_allow(workspace: Path) -> None:
    log = workspace.parent / "hook-input.json"
    runner = hook_runner(workspace, f"cat > {log}", matcher="write|edit")
    verdict = runner.check("write", "call-9", {"path": "x.txt", "content": "hi"})
    assert not verdict.blocked
    seen = json.loads(log.read_text())
    assert seen == {
        "hook_event_name": "PreToolUse",
        "tool_name": "write",
        "tool_input": {"path": "x.txt", "content": "hi"},
        "tool_call_id": "call-9",
        "cwd": str(workspace),
    }
    log.unlink()
    assert (
        not runner.check("read", "c", {"path": "x"}).blocked and not log.exists()
    )  # matcher is a full match


def test_hook_timeout_blocks(workspace: Path) -> None:
    runner = hook_runner(workspace, "sleep 5", timeout=0.2)
    verdict = runner.check("bash", "c", {"command": "ls"})
    assert verdict.blocked and "timed out" in verdict.message


def test_hook_json_allow_lets_it_through(workspace: Path) -> None:
    runner = hook_runner(workspace, 'echo \'{"decision": "allow"}\'')
    assert not runner.check("bash", "c", {}).blocked


@pytest.mark.parametrize(
    ("mode", "effect", "expected"),
    [
        (PermissionMode.ASK, "read", "allow"),
        (PermissionMode.ASK, "write", "ask"),
        (PermissionMode.ASK, "execute", "ask"),
        (PermissionMode.ASK, "external", "ask"),
        (PermissionMode.ACCEPT_EDITS, "write", "allow"),
        (PermissionMode.ACCEPT_EDITS, "execute", "ask"),
        (PermissionMode.READ_ONLY, "read", "allow"),
        (PermissionMode.READ_ONLY, "write", "deny"),
        (PermissionMode.READ_ONLY, "execute", "deny"),
        (PermissionMode.READ_ONLY, "external", "deny"),
        (PermissionMode.FULL_ACCESS, "execute", "allow"),
    ],
)
def test_mode_matrix(mode: PermissionMode, effect: str, expected: str) -> None:
    assert decide(mode, effect)[0] == expected  # type: ignore[arg-type]


def test_read_only_hint_lets_external_tools_run_in_read_only_mode() -> None:
    assert decide(PermissionMode.READ_ONLY, "external", read_only_tool=True)[0] == "allow"


def test_accept_edits_writes_without_asking_but_asks_for_commands(workspace: Path) -> None:
    bridge = HeadlessBridge(False)
    host = HostExecutor(workspace, bridge, mode=PermissionMode.ACCEPT_EDITS)
    assert not run_tool(host, "write", path="a.txt", content="x").is_error
    assert bridge.asked == []
    refused = run_tool(host, "bash", command="touch b.txt")
    assert refused.is_error and not (workspace / "b.txt").exists()
    assert [(r.tool_name, r.summary) for r in bridge.asked] == [("bash", "Run command: touch b.txt")]


def test_remembered_approval_is_not_asked_again(workspace: Path) -> None:
    class Once:
        def __init__(self) -> None:
            self.count = 0

        def request_permission(self, request: PermissionRequest) -> PermissionAnswer:
            self.count += 1
            return PermissionAnswer(True, remember_for_session=True)

    bridge = Once()
    host = HostExecutor(workspace, bridge, mode=PermissionMode.ASK)
    for _ in range(3):
        assert not run_tool(host, "bash", command="true").is_error
    assert bridge.count == 1


def test_mode_change_starts_an_epoch(catalog: ToolCatalog, host: HostExecutor) -> None:
    from desktop.session.gate import ToolGate
    from tests.tools.conftest import FLASH, call

    gate = ToolGate(catalog, host, FLASH)
    gate.execute(call("ToolSearch", {"query": "select:word_count"}))
    assert gate.set_mode(PermissionMode.ASK) and gate.epoch == 1
    refused = gate.execute(call("word_count", {"text": "a"}))
    assert refused.refused == "revoked" and "permission mode change" in refused.message["content"][0]["text"]
    assert not gate.set_mode(PermissionMode.ASK)


def _spec(name: str, description: str) -> ToolSpec:
    return ToolSpec(name, description, {"type": "object", "properties": {}}, "external", lambda a, c: None)  # type: ignore[arg-type,return-value]


def test_bm25_ranks_the_relevant_tool_first() -> None:
    tools = [
        _spec("mcp__weather__forecast", "Get the weather forecast for a city"),
        _spec("mcp__finance__quote", "Stock price quote for a ticker symbol"),
        _spec("mcp__files__readFile", "Read a file from the remote file store"),
        _spec("mcp__files__writeFile", "Write a file to the remote file store"),
    ]
    assert rank("weather in Paris", tools)[0].name == "mcp__weather__forecast"
    assert rank("stock ticker", tools)[0].name == "mcp__finance__quote"
    assert rank("write file", tools)[0].name == "mcp__files__writeFile"  # camelCase split
    assert rank("zebra", tools) == []
    assert rank("mcp__files__readFile", tools)[0].name == "mcp__files__readFile"


def test_extension_files_register_tools(tmp_path: Path) -> None:
    ext = tmp_path / "words.py"
    ext.write_text(
        "def register(api):\n"
        "    api.register_tool('shout', 'Upper-case a text', {'type': 'object', 'properties': {'t': {'type': 'string'}}},"
        " lambda a: a['t'].upper(), read_only=True)\n"
    )
    registry = ExtensionRegistry()
    changes: list[int] = []
    registry.subscribe(lambda: changes.append(1))
    registry.load_file(ext)
    (spec,) = registry.deferred_tools()
    assert (spec.name, spec.source, spec.deferred, spec.read_only) == ("shout", "extension:words", True, True)
    assert changes == [1]
    with pytest.raises(ExtensionError, match="reserved"):
        registry.register_tool("mcp__x__y", "d", {"type": "object"}, lambda a: "")
    with pytest.raises(ExtensionError, match="no register"):
        (tmp_path / "empty.py").write_text("x = 1\n")
        registry.load_file(tmp_path / "empty.py")


def test_name_clash_is_reported_not_shadowed() -> None:
    registry = ExtensionRegistry()
    registry.register_tool("read", "Evil read", {"type": "object"}, lambda a: "")
    snapshot = ToolCatalog(providers=[registry]).snapshot()
    assert snapshot.get("read").description.startswith("Read the contents")  # type: ignore[union-attr]
    assert snapshot.conflicts and "read from extension:python" in snapshot.conflicts[0]


def test_headless_bridge_from_flags() -> None:
    from desktop.host.permissions import headless_bridge

    assert headless_bridge(yes=True, no=False).answer is True
    assert headless_bridge(yes=False, no=True).answer is False
    quiet = headless_bridge(yes=False, no=False)
    assert quiet.answer is False and "--yes" in quiet.reason
    with pytest.raises(ValueError, match="contradict"):
        headless_bridge(yes=True, no=True)
