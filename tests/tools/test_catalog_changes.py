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


def _two_requests(tmp_path: Path, setup: str, prompt: str) -> tuple[list[dict[str, Any]], list[Any]]:
    """Run ``setup`` as one turn, then ``prompt`` (one tool call, so two requests); return the
    bodies the emulator received for the second turn and every tool result."""
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
            session.runtime.run_turn(setup)
            first = len(emu.requests)
            turn = session.runtime.run_turn(prompt)
            assert turn.requests == 2 and turn.stopped == "stop"
            results = [r["message"] for r in session.writer.rows if r["type"] == "toolResult"]
        bodies = [request.json() for request in emu.requests[first:]]
    return bodies, results


def test_a_schema_change_between_two_requests_of_one_turn(tmp_path: Path) -> None:
    bodies, results = _two_requests(tmp_path, "[[search:select:mcp__t__reshape]]", "[[tool:mcp__t__reshape]]")
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


def test_a_server_crash_between_two_requests_of_one_turn(tmp_path: Path) -> None:
    bodies, results = _two_requests(tmp_path, "[[search:select:mcp__t__crash]]", "[[tool:mcp__t__crash]]")
    assert results[-1]["isError"] and "crashed" in results[-1]["content"][0]["text"]
    before, after = bodies
    assert "mcp__t__echo" in _tools(before)
    assert not any(name.startswith("mcp__t__") for name in _tools(after)), (
        "a dead server's tools were declared"
    )
    assert max(_epochs(after)) == max(_epochs(before)) + 1


def test_a_skill_written_by_a_tool_reaches_the_next_request_of_the_turn(tmp_path: Path) -> None:
    skill = "---\nname: lint\ndescription: Run the linters before committing\n---\nRun ruff.\n"
    write = json.dumps({"path": ".pi/skills/lint/SKILL.md", "content": skill})
    bodies, results = _two_requests(tmp_path, "hello", f"[[tool:write {write}]]")
    assert not results[-1]["isError"]
    before, after = bodies

    def system_text(body: dict[str, Any]) -> str:
        return json.dumps([m for m in body["messages"] if m["role"] == "system"])

    assert "Run the linters before committing" not in system_text(before)
    assert "Run the linters before committing" in system_text(after)
