"""The session browser's listing of Pi Desktop sessions reads each file once and never blocks."""

from __future__ import annotations

import os
from pathlib import Path

import orjson

from desktop.host.desktop_sessions import list_sessions


def _write(path: Path, cwd: str, text: str, ts: int, cost: float) -> None:
    rows = [
        {"type": "session", "v": 1, "id": "h", "ts": ts, "cwd": cwd, "app": "pi-desktop", "appVersion": "t"},
        {"type": "user", "v": 1, "id": "u", "ts": ts, "message": {"role": "user", "content": text}},
        {
            "type": "assistant",
            "v": 1,
            "id": "a",
            "ts": ts + 5,
            "route": {"provider": "deepseek", "model": "deepseek-flash"},
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": "Answer about " + text}],
                "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "cost": {"total": cost}},
            },
        },
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))


def test_lists_sessions_in_workspace_folders_newest_first(tmp_path: Path) -> None:
    _write(tmp_path / "--w1--" / "a.jsonl", "/w1", "Old question\nsecond line", 1_000, 0.25)
    _write(tmp_path / "--w2--" / "b.jsonl", "/w2", "New question", 9_000, 0.04)
    (tmp_path / "--w2--" / "notes.jsonl").write_text('{"type": "user"}\n')
    os.mkfifo(tmp_path / "--w2--" / "pipe.jsonl")  # listed by name, never opened
    found = list_sessions(tmp_path)
    assert [s.title for s in found] == ["New question", "Old question"]
    assert [s.workspace for s in found] == ["/w2", "/w1"]
    assert found[0].route == "deepseek/deepseek-flash" and found[1].cost == 0.25
    assert found[0].last_activity == 9.005
    assert "answer about new question" in found[0].text
    assert list_sessions(tmp_path / "missing") == []
