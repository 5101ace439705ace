"""Nothing stale (design S6, A7): a catalog change caused by a tool reaches the very next request
of the same turn, checked on the bytes the emulator received, with a real MCP server."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from desktop.emulator import Emulator
from desktop.host.permissions import headless_bridge
from desktop.host.settings import Settings
from desktop.pi.routes import emulator_route
from desktop.session.assembly import SessionConfig, open_session
from tests.tools.conftest import REPO, SERVER

pytestmark = pytest.mark.skipif(os.name == "nt", reason="the test MCP server runs under POSIX here")


def _tools(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["function"]["name"]: t["function"] for t in body.get("tools") or []}


def _epochs(body: dict[str, Any]) -> list[int]:
    text = json.dumps(body)
    return [int(m) for m in re.findall(r'\\"epoch\\":(\d+)', text)]


def test_a_schema_change_between_two_requests_of_one_turn(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    server = {
        "command": sys.executable,
        "args": [str(SERVER)],
        "env": {"PI_TEST_TOOL_COUNT": "1", "PYTHONPATH": str(REPO)},
        "cwd": str(REPO),
    }
    settings = Settings.model_validate({"permissions": {"mode": "full-access"}, "mcpServers": {"t": server}})
    with Emulator() as emu:
        config = SessionConfig(
            route=emulator_route("deepseek/deepseek-flash", emu.url, emulated=True),
            workspace=workspace,
            settings=settings,
            user_skills=tmp_path / "none",
        )
        with open_session(
            tmp_path / "s.jsonl", config, bridge=headless_bridge(yes=True, no=False)
        ) as session:
            session.runtime.run_turn("[[search:select:mcp__t__reshape]]")
            first = len(emu.requests)
            turn = session.runtime.run_turn("[[tool:mcp__t__reshape]]")
            assert turn.requests == 2 and turn.stopped == "stop"
            results = [r["message"] for r in session.writer.rows if r["type"] == "toolResult"]
        bodies = [request.json() for request in emu.requests[first:]]

    assert results[-1]["content"][0]["text"] == "reshaped"
    before, after = bodies
    # The request that asked for the tool declared the old schema ...
    assert "times" not in _tools(before)["mcp__t__echo"]["parameters"]["properties"]
    assert "mcp__t__sunshine" not in _tools(before)
    # ... and the very next request of the same turn declares the new one.
    assert "times" in _tools(after)["mcp__t__echo"]["parameters"]["properties"]
    assert "mcp__t__sunshine" in _tools(after)
    # The epoch moved before that request: its newest tool_activation section is a new epoch.
    assert max(_epochs(after)) == max(_epochs(before)) + 1
