"""Deferred tools from a real MCP stdio server (tests/tools/mcp_server.py, official SDK):
a catalog past 128 functions, ToolSearch activation through the gate, tools/list_changed,
and crashes that are reported and survived."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from desktop.host.permissions import HeadlessBridge, PermissionMode
from desktop.host.tools.catalog import ToolCatalog
from desktop.host.tools.executor import HostExecutor
from desktop.host.tools.mcp_servers import McpHub, namespaced
from desktop.session.gate import ToolGate
from tests.tools.conftest import FLASH, OTHER, call, text_of

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX signals used to kill the server")


def wait_for(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("condition not reached in time")


def test_catalog_past_128_falls_back_activates_and_runs(
    start_hub: Callable[..., McpHub], workspace: Path, tmp_path: Path
) -> None:
    hub = start_hub(140)
    bridge = HeadlessBridge(True)
    host = HostExecutor(workspace, bridge, mode=PermissionMode.ASK)
    gate = ToolGate(ToolCatalog(providers=[hub]), host, FLASH)

    deferred = gate.snapshot.deferred_names
    assert len(deferred) == 144 and "mcp__t__metric_139" in deferred  # nothing truncated
    total = len(gate.snapshot.declarations())
    assert total == 153 > 128
    assert gate.policy.mode == "on-demand" and gate.policy.fallback
    assert f"{total} functions" in gate.policy.reason
    assert any(n.level == "warning" and "at most 128" in n.text for n in gate.take_notes())
    assert all(not name.startswith("mcp__") for name in (t["name"] for t in gate.request_tools()))

    refused = gate.execute(call("mcp__t__metric_013", {"value": 5}))
    assert refused.refused == "not-activated" and bridge.asked == []

    search = gate.execute(call("ToolSearch", {"query": "convert currency amounts", "max_results": 3}, "s1"))
    assert search.ok and len(search.activated) == 3
    assert all("currency" in gate.snapshot.get(n).description for n in search.activated)  # type: ignore[union-attr]
    assert search.message["details"]["activated"] == list(search.activated)
    update = gate.take_update()
    assert update is not None
    assert [t["name"] for t in update["toolsAdded"]] == sorted(search.activated)
    assert update["toolsAdded"][0]["parameters"]["properties"]["value"]["type"] == "integer"

    name = search.activated[0]
    result = gate.execute(call(name, {"value": 21}, "c2"))
    message = result.message
    assert message["role"] == "toolResult" and message["toolCallId"] == "c2" and message["toolName"] == name
    assert message["isError"] is False
    assert message["content"] == [{"type": "text", "text": f"{name.removeprefix('mcp__t__')}:42"}]
    assert message["details"]["server"] == "t"
    assert [r.tool_name for r in bridge.asked] == [name]  # ask mode asked once, for the MCP call

    bad = gate.execute(call(name, {"value": "many"}, "c3"))
    assert bad.message["isError"] and "Invalid arguments" in text_of(bad.message)
    assert len(bridge.asked) == 1  # refused before approval


def test_list_changed_is_a_catalog_change(start_hub: Callable[..., McpHub], host: HostExecutor) -> None:
    hub = start_hub(3)
    gate = ToolGate(ToolCatalog(providers=[hub]), host, OTHER)
    gate.execute(call("ToolSearch", {"query": "select:mcp__t__echo,mcp__t__reshape"}))
    gate.take_update()
    assert text_of(gate.execute(call("mcp__t__echo", {"text": "hi"})).message) == "echo:hi"
    old_schema = gate.snapshot.get("mcp__t__echo").parameters  # type: ignore[union-attr]

    assert gate.execute(call("mcp__t__reshape", {})).ok
    wait_for(lambda: any(e.kind == "tools_changed" for e in hub.events))

    revoked = gate.execute(call("mcp__t__echo", {"text": "hi"}))
    assert revoked.refused == "revoked" and "catalog or schema change" in text_of(revoked.message)
    assert gate.epoch == 1
    new_schema = gate.snapshot.get("mcp__t__echo").parameters  # type: ignore[union-attr]
    assert new_schema != old_schema and "times" in new_schema["properties"]
    assert "mcp__t__sunshine" in gate.snapshot.deferred_names

    update = gate.take_update()
    assert update is not None and update["toolsRemoved"] == [{"name": "mcp__t__echo"}]
    gate.execute(call("ToolSearch", {"query": "select:mcp__t__echo"}))
    republished = gate.take_update()
    assert republished is not None and republished["toolsAdded"][0]["parameters"] == new_schema
    assert text_of(gate.execute(call("mcp__t__echo", {"text": "ab", "times": 2})).message) == "echo:abab"


def test_server_crashes_are_reported_and_survived(
    start_hub: Callable[..., McpHub], host: HostExecutor
) -> None:
    hub = start_hub(2, names=("a", "b"))
    gate = ToolGate(ToolCatalog(providers=[hub]), host, OTHER)
    gate.execute(call("ToolSearch", {"query": "select:mcp__a__crash,mcp__a__echo,mcp__b__echo,mcp__b__pid"}))

    crashed = gate.execute(call("mcp__a__crash", {}))
    assert crashed.message["isError"] and "crashed" in text_of(crashed.message)
    wait_for(lambda: hub.status()["a"] == "crashed")
    assert any(e.server == "a" and e.kind == "crashed" for e in hub.events)
    assert "pi-test MCP server starting" in next(e.message for e in hub.events if e.kind == "crashed")

    removed = gate.execute(call("mcp__a__echo", {"text": "x"}))
    assert removed.refused == "removed" and "removed from the catalog" in text_of(removed.message)
    # The other server is untouched (activation is per epoch, so activate again).
    gate.execute(call("ToolSearch", {"query": "select:mcp__b__echo,mcp__b__pid"}))
    assert text_of(gate.execute(call("mcp__b__echo", {"text": "still here"})).message) == "echo:still here"

    # An idle server killed from outside is noticed too.
    pid = int(text_of(gate.execute(call("mcp__b__pid", {})).message))
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: hub.status()["b"] == "crashed")
    assert gate.snapshot is not None and not [n for n in hub.status().values() if n == "running"]


def test_namespacing_is_provider_safe() -> None:
    assert namespaced("files", "read_file") == "mcp__files__read_file"
    odd = namespaced("files", "read.file/v2")
    assert odd.startswith("mcp__files__read_file_v2") and len(odd) <= 64
    long = namespaced("server", "x" * 100)
    assert len(long) == 64 and long != namespaced("server", "x" * 101)


def test_session_tools_from_the_settings_file(workspace: Path, tmp_path: Path) -> None:
    import json
    import sys

    from desktop.host.settings import load_settings, settings_path
    from desktop.host.tools.session_tools import SessionTools
    from tests.tools.conftest import REPO, SERVER

    ext = tmp_path / "ext.py"
    ext.write_text(
        "def register(api):\n"
        "    api.register_tool('shout', 'Upper-case', {'type': 'object', 'properties': {}}, lambda a: 'HI')\n"
    )
    path = settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(
            {
                "permissions": {"mode": "read-only"},
                "mcpServers": {
                    "demo": {
                        "command": sys.executable,
                        "args": [str(SERVER)],
                        "env": {"PYTHONPATH": str(REPO)},
                    },
                    "off": {"command": "nothing", "disabled": True},
                    "broken": {"command": "definitely-not-a-command-xyz", "startupTimeout": 5},
                },
                "hooks": {"PreToolUse": [{"matcher": "bash", "hooks": [{"command": "exit 1"}]}]},
                "extensions": [str(ext), str(tmp_path / "missing.py")],
            }
        )
    )
    tools = SessionTools(workspace, HeadlessBridge(True), load_settings())
    with tools:
        assert tools.hub.status() == {"broken": "failed", "demo": "running"}
        names = tools.catalog.snapshot().deferred_names
        assert {"mcp__demo__echo", "mcp__demo__metric_000", "shout"} <= names
        assert tools.executor.mode is PermissionMode.READ_ONLY and tools.executor.hooks is not None
        missing, broken = tools.problems
        assert "missing.py" in missing
        assert broken.startswith("MCP server broken failed to start: ")
        assert "definitely-not-a-command" in broken
    assert tools.hub.status() == {"broken": "failed", "demo": "stopped"}
    assert tools.catalog.snapshot().deferred_names == {"shout"}
