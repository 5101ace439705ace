"""Synthetic journal rows in the interfaces.md shapes, for model and view tests."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def bench_session(path: Path, rows: int) -> Path:
    """A long session file as the timeline benchmark writes it."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        from timeline_bench import make_session
    finally:
        sys.path.remove(str(BENCHMARKS))
    make_session(path, rows)
    return path


def usage(inp: int, read: int, write: int, out: int, cost: float) -> dict[str, Any]:
    return {
        "input": inp,
        "output": out,
        "cacheRead": read,
        "cacheWrite": write,
        "totalTokens": inp + read + write + out,
        "cost": {"input": 0.0, "output": 0.0, "cacheRead": 0.0, "cacheWrite": 0.0, "total": cost},
    }


def system_row(
    row_id: str,
    sections: dict[str, str | None],
    *,
    before: str | None = None,
    tools: list[str] | None = None,
    label: str = "",
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "system", "content": "", "sections": sections, "timestamp": 1}
    if tools:
        message["toolsAdded"] = [
            {"name": n, "description": n, "parameters": {"type": "object"}} for n in tools
        ]
    row: dict[str, Any] = {
        "type": "system",
        "v": 1,
        "id": row_id,
        "ts": 1_700_000_000_000,
        "modelSystem": {"v": 1, "message": message},
    }
    if before:
        row["before"] = before
    if label:
        row["label"] = label
    return row


def user_row(row_id: str, text: str) -> dict[str, Any]:
    return {
        "type": "user",
        "v": 1,
        "id": row_id,
        "ts": 1_700_000_000_000,
        "message": {"role": "user", "content": text, "timestamp": 1},
    }


def assistant_row(
    row_id: str, text: str, *, u: dict[str, Any] | None = None, stop: str = "stop"
) -> dict[str, Any]:
    message = {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-opus-5-5",
        "usage": u or usage(10, 0, 0, 5, 0.001),
        "stopReason": stop,
        "timestamp": 1,
    }
    return {
        "type": "assistant",
        "v": 1,
        "id": row_id,
        "ts": 1_700_000_000_000,
        "message": message,
        "route": {"provider": "anthropic"},
    }


def tool_row(row_id: str, name: str, text: str, error: bool = False) -> dict[str, Any]:
    message = {
        "role": "toolResult",
        "toolCallId": "c1",
        "toolName": name,
        "content": [{"type": "text", "text": text}],
        "isError": error,
        "timestamp": 1,
    }
    return {"type": "toolResult", "v": 1, "id": row_id, "ts": 1_700_000_000_000, "message": message}


def compaction_row(
    row_id: str, first_kept: str, summary: str = "s", tokens_before: int = 10, checkpoint: Any = None
) -> dict[str, Any]:
    row = {
        "type": "compaction",
        "v": 1,
        "id": row_id,
        "ts": 1,
        "summary": summary,
        "firstKeptId": first_kept,
        "tokensBefore": tokens_before,
    }
    if checkpoint is not None:
        row["checkpoint"] = {"v": 1, "message": checkpoint}
    return row


def note_row(row_id: str, text: str, level: str = "info") -> dict[str, Any]:
    return {"type": "note", "v": 1, "id": row_id, "ts": 1_700_000_000_000, "level": level, "text": text}


def session_rows(turns: int) -> list[dict[str, Any]]:
    """A plausible model-order transcript: baseline, then turns with occasional section changes."""
    rows: list[dict[str, Any]] = [
        system_row("s0", {"runtime": "You are Pi.", "skills": "How to load skills."}, label="baseline")
    ]
    for t in range(turns):
        if t % 10 == 5:
            rows.append(system_row(f"s{t}", {"guidance": f"AGENTS.md revision {t}"}, before=f"u{t}"))
        rows.append(user_row(f"u{t}", f"question number {t} about the parser"))
        rows.append(assistant_row(f"a{t}", f"answer number {t}", u=usage(100, 900 * t, 50, 20, 0.002)))
        if t % 3 == 0:
            rows.append(tool_row(f"t{t}", "read", f"contents of file {t}"))
    return rows
