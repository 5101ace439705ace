"""A Desktop journal of any length for the what-if replay (its benchmark and its equality test).

Turns of a coding session, written row by row with no clock and no random ids: a user
question, an assistant answer with a tool call, the tool's result, the final answer, and every fourth turn a
system update (a guidance section; every tenth also adds a tool, so fixed declarations are
replayed too). Replies are two minutes apart, with a long pause (``pause_every``) that a
short retention does not survive.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from desktop.host.journal import JournalWriter

ROUTE = {"provider": "anthropic", "model": "claude-opus-5-5", "api": "anthropic-messages", "baseUrl": "x"}
START_MS = 1_790_000_000_000
MINUTE_MS = 60_000


def _tool(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "description": f"The {name} tool: " + "reads and reports. " * 8,
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    }


def rows(turns: int, *, pause_every: int = 25) -> list[dict[str, Any]]:
    """Four rows per turn, five on update turns (every fourth)."""
    out: list[dict[str, Any]] = []
    ts = START_MS
    for turn in range(turns):
        ts += (61 if pause_every and turn % pause_every == pause_every - 1 else 2) * MINUTE_MS
        if turn % 4 == 0:
            system: dict[str, Any] = {
                "role": "system",
                "content": "",
                "sections": {"guidance": f"Be brief and exact (revision {turn})."},
                "timestamp": ts,
            }
            if turn % 10 == 0:
                system["toolsAdded"] = [_tool(f"tool{turn}")]
            out.append(
                {
                    "type": "system",
                    "v": 1,
                    "id": f"s{turn}",
                    "ts": ts,
                    "modelSystem": {"v": 1, "message": system},
                }
            )
        user = {
            "role": "user",
            "content": f"Question {turn}: why does test {turn} fail? " * 3,
            "timestamp": ts,
        }
        out.append({"type": "user", "v": 1, "id": f"u{turn}", "ts": ts, "message": user})
        call = {"type": "toolCall", "id": f"c{turn}", "name": "read", "arguments": {"path": f"m{turn}.py"}}
        answer = {
            "role": "assistant",
            "content": [{"type": "text", "text": f"Looking at m{turn}.py. " * 6}, call],
            **{k: ROUTE[k] for k in ("api", "provider", "model")},
            "usage": {"input": 100, "output": 40, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 140},
            "stopReason": "toolUse",
            "timestamp": ts + 1,
        }
        out.append(
            {"type": "assistant", "v": 1, "id": f"a{turn}", "ts": ts + 1, "route": ROUTE, "message": answer}
        )
        result = {
            "role": "toolResult",
            "toolCallId": f"c{turn}",
            "toolName": "read",
            "content": [{"type": "text", "text": f"def f{turn}():\n    return {turn}\n" * 12}],
            "isError": False,
            "timestamp": ts + 2,
        }
        out.append({"type": "toolResult", "v": 1, "id": f"r{turn}", "ts": ts + 2, "message": result})
        final = {
            **answer,
            "content": [{"type": "text", "text": f"Test {turn} fails because f{turn} returns early. " * 3}],
            "stopReason": "stop",
            "timestamp": ts + 3,
        }
        out.append(
            {"type": "assistant", "v": 1, "id": f"z{turn}", "ts": ts + 3, "route": ROUTE, "message": final}
        )
    return out


def write(path: Path, turns: int) -> Path:
    """Write a journal of ``turns`` turns at ``path`` (no lock left behind)."""

    with JournalWriter.create(path, cwd="/w", app_version="bench") as writer:
        writer.append(rows(turns))
    path.with_name(path.name + ".lock").unlink(missing_ok=True)
    return path
