"""The refusal matrix (design A5, A6, A7): every refusal is an error tool result stating its reason,
returned before any side effect (no file is written or changed, the command never runs)."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from desktop.host.permissions import HeadlessBridge, PermissionMode
from desktop.host.tools.catalog import ToolCatalog
from desktop.host.tools.executor import HostExecutor
from desktop.host.tools.extensions import ExtensionRegistry
from desktop.session.activation import SECTION_NAME, ActivationSigner, ActivationState, render_section
from desktop.session.gate import ToolGate
from tests.tools.conftest import FLASH, call, hook_runner, text_of


@dataclass
class Case:
    gate: ToolGate
    call: dict[str, Any]
    reason: str


def _marker(gate: ToolGate, ws: Path, reason: str, tool: str = "touch_marker") -> Case:
    """``tool`` asked to write the workspace's probe file, refused for ``reason``."""
    return Case(gate, call(tool, {"path": str(ws / "probe.txt")}), reason)


def _activate(gate: ToolGate, name: str) -> None:
    result = gate.execute(call("ToolSearch", {"query": f"select:{name}"}, "search"))
    assert result.ok and name in result.activated


def unknown_tool(ws: Path, catalog: ToolCatalog, host: HostExecutor) -> Case:
    gate = ToolGate(catalog, host, FLASH)
    return _marker(gate, ws, "Unknown tool 'nonexistent_tool'", tool="nonexistent_tool")


def not_activated(ws: Path, catalog: ToolCatalog, host: HostExecutor) -> Case:
    gate = ToolGate(catalog, host, FLASH)
    return _marker(gate, ws, "deferred tool that is not activated")


def after_route_change(ws: Path, catalog: ToolCatalog, host: HostExecutor) -> Case:
    gate = ToolGate(catalog, host, FLASH)
    _activate(gate, "touch_marker")
    assert gate.set_route(FLASH._replace(base_url="https://relay.example.com"))
    return _marker(gate, ws, "route change")


def after_account_change(ws: Path, catalog: ToolCatalog, host: HostExecutor) -> Case:
    gate = ToolGate(catalog, host, FLASH)
    _activate(gate, "touch_marker")
    assert gate.set_route(FLASH._replace(account="someone-else"))
    return _marker(gate, ws, "account change")


SIGNER = ActivationSigner.ephemeral("s")


def _restored(ws: Path, catalog: ToolCatalog, host: HostExecutor, section: str) -> ToolGate:
    gate = ToolGate(catalog, host, FLASH, signer=SIGNER)
    history = [
        {"role": "system", "content": "base", "sections": {SECTION_NAME: section}, "timestamp": 1},
        {"role": "user", "content": "hi", "timestamp": 2},
    ]
    gate.restore(history)
    return gate


def tampered_identity(ws: Path, catalog: ToolCatalog, host: HostExecutor) -> Case:
    honest = ToolGate(catalog, host, FLASH).identity()
    forged = ("0" if honest[0] != "0" else "1") + honest[1:]
    gate = _restored(
        ws, catalog, host, render_section(SIGNER.seal(ActivationState(forged, ("touch_marker",), 1)))
    )
    return _marker(gate, ws, "identity mismatch")


def unknown_version(ws: Path, catalog: ToolCatalog, host: HostExecutor) -> Case:
    identity = ToolGate(catalog, host, FLASH).identity()
    section = render_section(SIGNER.seal(ActivationState(identity, ("touch_marker",), 1))).replace(
        'version="2"', 'version="9"'
    )
    gate = _restored(ws, catalog, host, section)
    return _marker(gate, ws, "unknown-version")


def after_mode_change_between_runs(ws: Path, catalog: ToolCatalog, host: HostExecutor) -> Case:
    """Activated under ``ask``; a later run under ``full-access`` must not honour it (design A7)."""
    host.mode = PermissionMode.ASK
    asked = ToolGate(catalog, host, FLASH, signer=SIGNER)
    section = render_section(SIGNER.seal(ActivationState(asked.identity(), ("touch_marker",), 1)))
    host.mode = PermissionMode.FULL_ACCESS
    gate = _restored(ws, catalog, host, section)
    return _marker(gate, ws, "permission mode")


def _write(catalog: ToolCatalog, host: HostExecutor, path: str, reason: str) -> Case:
    """``write`` asked to create ``path``, refused for ``reason``."""
    return Case(ToolGate(catalog, host, FLASH), call("write", {"path": path, "content": "x"}), reason)


def _bash(catalog: ToolCatalog, host: HostExecutor, reason: str) -> Case:
    """``bash`` asked to create the workspace's probe file, refused for ``reason``."""
    return Case(ToolGate(catalog, host, FLASH), call("bash", {"command": "touch probe.txt"}), reason)


def _hook(host: HostExecutor, ws: Path, matcher: str, command: str) -> None:
    host.hooks = hook_runner(ws, command, matcher=matcher)


def hook_blocks_exit_code(ws: Path, catalog: ToolCatalog, host: HostExecutor) -> Case:
    _hook(host, ws, "write", "echo 'no writes on Fridays' >&2; exit 2")
    return _write(catalog, host, "probe.txt", "no writes on Fridays")


def hook_blocks_json(ws: Path, catalog: ToolCatalog, host: HostExecutor) -> Case:
    _hook(host, ws, "bash", 'echo \'{"decision": "block", "reason": "rm is banned"}\'')
    return _bash(catalog, host, "rm is banned")


def read_only_denies_write(ws: Path, catalog: ToolCatalog, host: HostExecutor) -> Case:
    host.mode = PermissionMode.READ_ONLY
    return _write(catalog, host, "probe.txt", "read-only mode")


def read_only_denies_bash(ws: Path, catalog: ToolCatalog, host: HostExecutor) -> Case:
    host.mode = PermissionMode.READ_ONLY
    return _bash(catalog, host, "read-only mode")


def user_declines(ws: Path, catalog: ToolCatalog, host: HostExecutor) -> Case:
    host.mode = PermissionMode.ASK
    host.bridge = HeadlessBridge(False)
    return _bash(catalog, host, "did not approve bash")


def escape_dotdot(ws: Path, catalog: ToolCatalog, host: HostExecutor) -> Case:
    return _write(catalog, host, "../outside.txt", "through '..'")


def escape_absolute(ws: Path, catalog: ToolCatalog, host: HostExecutor) -> Case:
    return _write(catalog, host, str(ws.parent / "outside.txt"), "outside the workspace")


def escape_symlink(ws: Path, catalog: ToolCatalog, host: HostExecutor) -> Case:
    outside = ws.parent / "elsewhere"
    outside.mkdir()
    os.symlink(outside, ws / "link")
    return _write(catalog, host, "link/evil.txt", "symlink")


def escape_symlink_edit(ws: Path, catalog: ToolCatalog, host: HostExecutor) -> Case:
    outside = ws.parent / "secret.txt"
    outside.write_text("token=1\n")
    os.symlink(outside, ws / "innocent.txt")
    edit = call("edit", {"path": "innocent.txt", "edits": [{"oldText": "token=1", "newText": "token=2"}]})
    return Case(ToolGate(catalog, host, FLASH), edit, "symlink")


CASES: dict[str, Callable[[Path, ToolCatalog, HostExecutor], Case]] = {
    "unknown tool": unknown_tool,
    "deferred tool not activated": not_activated,
    "activated tool after route change": after_route_change,
    "activated tool after account change": after_account_change,
    "restored activation with tampered identity": tampered_identity,
    "unknown section version": unknown_version,
    "activation from a run in another permission mode": after_mode_change_between_runs,
    "hook blocks (exit code)": hook_blocks_exit_code,
    "hook blocks (JSON answer)": hook_blocks_json,
    "read-only mode denies write": read_only_denies_write,
    "read-only mode denies bash": read_only_denies_bash,
    "user declines approval": user_declines,
    "path escapes with ..": escape_dotdot,
    "absolute path outside": escape_absolute,
    "symlink resolving outside (write)": escape_symlink,
    "symlink resolving outside (edit)": escape_symlink_edit,
}


@pytest.mark.parametrize("case_name", list(CASES))
def test_refused_before_any_side_effect(
    case_name: str, workspace: Path, catalog: ToolCatalog, host: HostExecutor, extensions: ExtensionRegistry
) -> None:
    case = CASES[case_name](workspace, catalog, host)
    before = _files(workspace.parent)
    result = case.gate.execute(case.call)
    message = result.message
    assert message["role"] == "toolResult"
    assert message["isError"] is True
    assert message["toolCallId"] == case.call["id"]
    assert case.reason in text_of(message), text_of(message)
    assert result.refused or message["details"]["refused"]
    assert _files(workspace.parent) == before, "the refused call left a side effect"


def _files(root: Path) -> dict[str, bytes | None]:
    """Every path below ``root`` with a file's bytes: what a side effect would change."""
    return {str(p): p.read_bytes() if p.is_file() else None for p in root.rglob("*")}


def test_allowed_counterparts_do_run(workspace: Path, catalog: ToolCatalog, host: HostExecutor) -> None:
    """The same calls succeed when nothing refuses them, so the matrix is not vacuous."""
    gate = ToolGate(catalog, host, FLASH)
    _activate(gate, "touch_marker")
    marker = workspace / "marker.txt"
    assert gate.execute(call("touch_marker", {"path": str(marker)})).ok
    assert marker.read_text() == "touched"
    assert gate.execute(call("write", {"path": "sub/../probe.txt", "content": "x"})).ok
    assert (workspace / "probe.txt").read_text() == "x"
    assert gate.execute(call("bash", {"command": "touch ran.txt"})).ok
    assert (workspace / "ran.txt").exists()
