"""Continue a pi or Claude Code session in Pi Desktop (design X2, A5, A8, S5).

The fork is a new Desktop session: the source stays byte for byte as it was, the imported
history holds plain rows only, opening it adds Desktop's baseline system row after them, and a
ToolSearch result in the source grants nothing. The imported rows come before Desktop's first
``tool_activation`` section, and carry no ``details`` (where a ToolSearch result records what it
activated): a control shows that evidence kept after a signed section would be recovered.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from desktop.emulator import Emulator
from desktop.host.journal import JournalWriter, read_session
from desktop.host.settings import Settings
from desktop.session.assembly import SessionConfig
from desktop.session.foreign import fork_to_desktop, import_rows, open_foreign
from tests.foreign.support import append_lines
from tests.session.support import config, open_, reply, tool_result

EXTENSION = """
def register(api):
    props = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    api.register_tool("weather_lookup", "Look up the weather forecast for a city", props,
                      lambda a: "sunny in " + a["city"])
"""
CALL = json.dumps({"city": "Oslo"})


def fork_config(emu: Emulator, tmp_path: Path) -> SessionConfig:
    extension = tmp_path / "ext.py"
    extension.write_text(EXTENSION, encoding="utf-8")
    settings = {"extensions": [str(extension)], "permissions": {"mode": "full-access"}}
    return config(emu, tmp_path / "ws", settings=Settings.model_validate(settings))


def pi_source_with_toolsearch(copy: Callable[[str], Path]) -> Path:
    """pi's branches fixture plus a ToolSearch call whose result says it activated weather_lookup."""
    path = copy("pi_sessions/v3_branches.jsonl")
    leaf = orjson.loads(path.read_bytes().splitlines()[-1])["id"]
    stamp = "2026-10-01T10:00:00.000Z"
    call = {
        "type": "toolCall",
        "id": "call_ts",
        "name": "ToolSearch",
        "arguments": {"query": "select:weather_lookup"},
    }
    result = tool_result(
        "call_ts", "ToolSearch", "Activated: weather_lookup", 2, activated=["weather_lookup"]
    )
    entries = [
        {
            "type": "message",
            "id": "ts000001",
            "parentId": leaf,
            "timestamp": stamp,
            "message": reply([call], 1, input=1, output=1),
        },
        {"type": "message", "id": "ts000002", "parentId": "ts000001", "timestamp": stamp, "message": result},
    ]
    append_lines(path, *entries)
    return path


def claude_source_with_toolsearch(copy: Callable[[str], Path]) -> Path:
    path = copy("claude_code/compact.jsonl")
    last = orjson.loads(path.read_bytes().splitlines()[-1])
    common = {k: last[k] for k in ("isSidechain", "userType", "cwd", "sessionId", "version")}
    entries = [
        {
            **common,
            "parentUuid": last["uuid"],
            "type": "assistant",
            "uuid": "ts-1",
            "timestamp": "2026-10-02T11:00:00.000Z",
            "message": {
                "id": "msg_ts",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_ts",
                        "name": "ToolSearch",
                        "input": {"query": "select:weather_lookup"},
                    }
                ],
                "stop_reason": "tool_use",
                "usage": {"input_tokens": 1, "output_tokens": 1},
            },
        },
        {
            **common,
            "parentUuid": "ts-1",
            "type": "user",
            "uuid": "ts-2",
            "timestamp": "2026-10-02T11:00:01.000Z",
            "message": {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_ts",
                        "content": [{"type": "tool_reference", "tool_name": "weather_lookup"}],
                    }
                ],
            },
            "toolUseResult": {"matches": ["weather_lookup"], "activated": ["weather_lookup"]},
        },
    ]
    append_lines(path, *entries)
    return path


@pytest.mark.parametrize(
    "make_source", [pi_source_with_toolsearch, claude_source_with_toolsearch], ids=["pi", "claude-code"]
)
def test_fork_imports_plain_rows_grants_nothing_and_leaves_the_source_alone(
    make_source: Callable[[Callable[[str], Path]], Path],
    copy_fixture: Callable[[str], Path],
    tmp_path: Path,
    emulator: Emulator,
) -> None:
    source = make_source(copy_fixture)
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    listing = sorted(p.name for p in source.parent.iterdir())
    foreign = open_foreign(source)
    cfg = fork_config(emulator, tmp_path)

    path = fork_to_desktop(foreign, workspace=cfg.workspace, data_dir=str(tmp_path / "data"))
    assert path.parent.parent == tmp_path / "data" / "sessions"
    log = read_session(path)
    kinds = [row["type"] for row in log.rows]
    assert kinds[0] == "note" and "system" not in kinds
    assert log.rows[0]["data"]["kind"] == "import" and log.rows[0]["data"]["source"] == str(source)
    imported = log.rows[1:]
    assert [row["message"] for row in imported] == [
        {k: v for k, v in m.items() if not (m["role"] == "toolResult" and k == "details")}
        for m in foreign.context().messages
        if m["role"] != "system"
    ]
    assert all(row["imported"]["format"] == foreign.format for row in imported)
    assert imported[-1]["message"]["toolName"] == "ToolSearch"

    with open_(path, cfg) as session:
        rows = session.writer.rows
        assert len(rows) == len(log.rows)  # opening the fork writes nothing
        assert session.gate.state.active == ()  # nothing restored from the imported history
        result = session.runtime.run_turn(f"call it [[tool:weather_lookup {CALL}]]")
        assert result.stopped == "stop"
        user, baseline = rows[len(log.rows)], rows[len(log.rows) + 1]
        assert baseline["type"] == "system" and baseline["label"].startswith("baseline")
        assert baseline["before"] == user["id"]
        outcome = [r["message"] for r in session.writer.rows if r["type"] == "toolResult"][-1]
        assert outcome["isError"] and "not activated" in outcome["content"][0]["text"]

    assert hashlib.sha256(source.read_bytes()).hexdigest() == digest
    assert sorted(p.name for p in source.parent.iterdir()) == listing


@pytest.mark.parametrize("keep_details", [False, True], ids=["stripped", "control-with-details"])
def test_imported_evidence_after_a_signed_section_grants_only_with_its_details(
    keep_details: bool, copy_fixture: Callable[[str], Path], tmp_path: Path, emulator: Emulator
) -> None:
    """Why the import strips ``details``: rows that land after a verified ``tool_activation``
    section are recovery evidence (a ToolSearch result newer than the section, answering a real
    call). The fork puts imported rows before Desktop's first section, where they never count;
    the stripping holds even if they came after one, and the control shows it is load-bearing."""
    cfg = fork_config(emulator, tmp_path)
    path = tmp_path / "desktop.jsonl"
    with open_(path, cfg) as session:  # a Desktop session: its baseline carries a signed section
        assert session.gate.state.active == ()
        session.runtime.run_turn("hello")
    rows = import_rows(open_foreign(pi_source_with_toolsearch(copy_fixture)))
    assert "details" not in rows[-1]["message"]
    if keep_details:
        rows[-1]["message"]["details"] = {"activated": ["weather_lookup"]}
    with JournalWriter.open(path) as writer:
        writer.append(rows)
    with open_(path, cfg) as session:
        assert session.gate.state.active == (("weather_lookup",) if keep_details else ())


def test_a_fork_of_another_branch_imports_that_branch(
    tmp_path: Path, copy_fixture: Callable[[str], Path]
) -> None:
    foreign = open_foreign(copy_fixture("pi_sessions/v3_branches.jsonl"))
    other = next(b for b in foreign.branches() if b.title == "Now write a CHANGELOG.")
    rows: list[dict[str, Any]] = import_rows(foreign, other.leaf)
    assert rows[0]["data"]["leaf"] == other.leaf
    texts = [json.dumps(r["message"]) for r in rows[1:]]
    assert any("CHANGELOG" in t for t in texts) and not any("What does this image show" in t for t in texts)
    assert all(r["route"]["baseUrl"] == "" for r in rows if r["type"] == "assistant")
