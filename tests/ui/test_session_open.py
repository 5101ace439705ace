"""Opening a session in the window writes nothing, and changing it is an explicit act (design
G12, A5): a legacy history activates from its ToolSearch result (marked "legacy evidence"), a
route change says its cost first and is journaled after, a session whose route left the catalog
asks for one before it sends, and a corrupt cached catalog is reported."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from PySide6.QtWidgets import QMessageBox

from desktop import __version__
from desktop.emulator import Emulator
from desktop.host.catalog_cache import cache_path
from desktop.host.journal import JournalWriter, new_row_id
from desktop.ui.main_window import TAB_ACTIVATION
from tests.ui.conftest import TURN_TIMEOUT, Harness
from tests.ui.synthetic import usage

EXTENSION = """
def register(api):
    props = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    api.register_tool("weather_lookup", "Look up the weather forecast for a city", props,
                      lambda a: "sunny in " + a["city"])
"""
ROUTE = {"provider": "anthropic", "model": "claude-opus-5-5", "api": "anthropic-messages", "baseUrl": ""}


@pytest.fixture
def window(qtbot: Any, qsettings_isolated: Path, workspace: Path, emulator: Emulator) -> Iterator[Harness]:
    shown = Harness(qtbot, workspace, emulator=emulator)
    yield shown
    shown.close()


@pytest.fixture
def workspace(tmp_path: Path, _private_data_dir: Path) -> Path:
    """A workspace, with an extension tool (deferred) in the private data folder's settings."""
    folder = tmp_path / "workspace"
    folder.mkdir()
    extension = tmp_path / "ext.py"
    extension.write_text(EXTENSION, encoding="utf-8")
    settings = {"extensions": [str(extension)], "permissions": {"mode": "full-access"}}
    (_private_data_dir / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    return folder


def _row(kind: str, ts: int, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "v": 1, "id": new_row_id(), "ts": ts, **fields}


def _session(path: Path, workspace: Path, rows: list[dict[str, Any]]) -> Path:
    with JournalWriter.create(path, cwd=str(workspace), app_version=__version__) as writer:
        writer.append(rows)
    return path


def _legacy_rows() -> list[dict[str, Any]]:
    """A history written before ``tool_activation`` sections: a ToolSearch call and its result."""
    call = {
        "type": "toolCall",
        "id": "ts1",
        "name": "ToolSearch",
        "arguments": {"query": "select:weather_lookup"},
    }
    assistant = {
        "role": "assistant",
        "content": [call],
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-opus-5-5",
        "usage": usage(10, 0, 0, 2, 0.0),
        "stopReason": "toolUse",
        "timestamp": 2,
    }
    result = {
        "role": "toolResult",
        "toolCallId": "ts1",
        "toolName": "ToolSearch",
        "content": [{"type": "text", "text": "Activated weather_lookup"}],
        "details": {"query": "select:weather_lookup", "activated": ["weather_lookup"]},
        "isError": False,
        "timestamp": 3,
    }
    done = {
        **assistant,
        "content": [{"type": "text", "text": "Ready."}],
        "stopReason": "stop",
        "timestamp": 4,
    }
    return [
        _row("user", 1, message={"role": "user", "content": "find the weather tool", "timestamp": 1}),
        _row("assistant", 2, message=assistant, route={**ROUTE, "emulator": True, "emulated": True}),
        _row("toolResult", 3, message=result),
        _row("assistant", 4, message=done, route={**ROUTE, "emulator": True, "emulated": True}),
    ]


def test_a_legacy_history_activates_from_its_toolsearch_result(
    qtbot: Any, workspace: Path, tmp_path: Path, window: Harness
) -> None:
    path = _session(tmp_path / "legacy.jsonl", workspace, _legacy_rows())
    before = path.read_bytes()
    window.launch(session=str(path))
    window.window.tabs.setCurrentIndex(TAB_ACTIVATION)
    view = window.window.activation_view
    qtbot.waitUntil(lambda: bool(view.info.get("legacyEvidence")), timeout=TURN_TIMEOUT)
    assert view.info["active"] == ["weather_lookup"]
    assert "legacy evidence" in view.toPlainText()
    window.settle()
    assert path.read_bytes() == before  # opening wrote nothing
    city = json.dumps({"city": "Oslo"})
    window.window.send(f"weather please [[tool:weather_lookup {city}]]")
    qtbot.waitUntil(lambda: bool(window.window.permission_dialogs), timeout=TURN_TIMEOUT)
    window.window.permission_dialogs[0].allow_button.click()  # the mode still asks (A6)
    qtbot.waitUntil(lambda: bool(window.window.turn_results), timeout=TURN_TIMEOUT)
    assert window.window.turn_results[-1].error is None
    results = [r for r in window.worker.writer.rows if r["type"] == "toolResult"]
    assert results[-1]["message"]["isError"] is False
    assert "sunny in Oslo" in results[-1]["message"]["content"][0]["text"]


def test_a_route_change_says_its_cost_before_and_is_journaled_after(qtbot: Any, window: Harness) -> None:
    window.launch(route="emulator/anthropic/claude-opus-5-5")
    assert window.send("hello " + "padding words " * 400).error is None
    path = Path(window.window.session.path)
    before = path.read_bytes()
    combo = window.window.route_combo
    combo.setCurrentIndex(combo.findData("emulator/openai/gpt-5.5"))
    window.window.session_choices.route_chosen()
    qtbot.waitUntil(lambda: window.window.session_choices.confirm is not None, timeout=TURN_TIMEOUT)
    box = window.window.session_choices.confirm
    assert box is not None
    text = box.text()
    assert text.startswith("Switching to openai/gpt-5.5 on the offline emulator starts a cold cache: about $")
    assert "more on the next request" in text
    assert path.read_bytes() == before  # nothing changed before the answer
    assert window.toolbar()[0] == "emulator/anthropic/claude-opus-5-5"
    box.done(QMessageBox.StandardButton.Yes)
    qtbot.waitUntil(lambda: window.window.status.route_key == "emulator/openai/gpt-5.5", timeout=TURN_TIMEOUT)
    rows = [orjson.loads(line) for line in path.read_bytes().splitlines()[1:]]
    changed = [r for r in rows if r.get("data", {}).get("kind") == "session-settings"][-1]
    assert changed["data"]["changed"] == ["route"]
    assert changed["data"]["by"] == "the window" and "another route" in changed["data"]["why"]
    assert changed["data"]["previous"]["route"] == "emulator/anthropic/claude-opus-5-5"
    assert changed["data"]["settings"]["route"] == "emulator/openai/gpt-5.5"
    assert any(r["id"] == changed["id"] for r in window.window.timeline.rows)  # the timeline shows it


def test_a_route_without_a_key_is_refused_before_anything_changes(qtbot: Any, window: Harness) -> None:
    window.launch(route="emulator/anthropic/claude-opus-5-5")
    path = Path(window.window.session.path)
    before = path.read_bytes()
    answer = window.worker.change_cost("route", "openai/gpt-5.5")
    assert answer["allowed"] is False
    window.client.set_route.emit("openai/gpt-5.5")
    window.settle()
    assert window.window.status.route_key == "emulator/anthropic/claude-opus-5-5"
    assert path.read_bytes() == before


def test_a_session_whose_route_left_the_catalog_asks_for_one(
    qtbot: Any, workspace: Path, tmp_path: Path, window: Harness
) -> None:
    gone = {**ROUTE, "model": "claude-gone-1", "emulator": True, "emulated": True}
    rows = _legacy_rows()
    rows[3]["route"] = gone
    rows[3]["message"] = {**rows[3]["message"], "model": "claude-gone-1"}
    path = _session(tmp_path / "gone.jsonl", workspace, rows)
    before = path.read_bytes()
    window.launch(session=str(path))
    assert "claude-gone-1 is no longer in the model catalog" in window.window.status.route_needed
    banners = [b.text for b in window.window.banners.banners]
    assert any("claude-gone-1 is no longer in the model catalog" in t for t in banners)
    result = window.send("hello")
    assert "choose a route" in str(result.error)
    window.settle()
    assert path.read_bytes() == before  # nothing written until a route is chosen
    window.client.set_route.emit("emulator/anthropic/claude-opus-5-5")
    qtbot.waitUntil(lambda: window.window.status.route_needed is None, timeout=TURN_TIMEOUT)
    written = [orjson.loads(line) for line in path.read_bytes().splitlines()[1:]]
    note = written[-1]
    assert note["data"]["kind"] == "session-settings"
    assert note["data"]["settings"]["route"] == "emulator/anthropic/claude-opus-5-5"
    assert window.send("hello").error is None


def test_a_corrupt_cached_catalog_is_reported_when_a_session_opens(window: Harness) -> None:
    cached = cache_path("pi")
    cached.parent.mkdir(parents=True, exist_ok=True)
    cached.write_text("{ not json", encoding="utf-8")  # before the worker starts and loads the catalogs
    window.launch(route="emulator/anthropic/claude-opus-5-5")
    banners = [b.text for b in window.window.banners.banners]
    assert any("model catalog" in t and str(cached) in t for t in banners), banners


def test_reopening_keeps_activation_and_shows_a_pending_update_without_writing(
    qtbot: Any, qsettings_isolated: Path, workspace: Path, emulator: Emulator
) -> None:
    """Opening used to journal a tool_activation row and notes and revoke the activation; now
    the activation stands, a skill added meanwhile is shown as pending, and the file is as it was."""
    first = Harness(qtbot, workspace, emulator=emulator)
    try:
        first.launch(route="emulator/anthropic/claude-opus-5-5")
        search = json.dumps({"query": "select:weather_lookup"})
        assert first.send(f"find it [[tool:ToolSearch {search}]]").error is None
        first.window.tabs.setCurrentIndex(TAB_ACTIVATION)
        view = first.window.activation_view
        qtbot.waitUntil(lambda: view.info.get("active") == ["weather_lookup"], timeout=TURN_TIMEOUT)
        path = Path(first.window.session.path)
    finally:
        first.close()
    skill = workspace / ".pi" / "skills" / "lint" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: lint\ndescription: Run the linters\n---\nRun ruff.\n", encoding="utf-8")
    before = path.read_bytes()
    second = Harness(qtbot, workspace, emulator=emulator)
    try:
        second.launch(session=str(path), route="emulator/openai/gpt-5.5")
        second.window.tabs.setCurrentIndex(TAB_ACTIVATION)
        view = second.window.activation_view
        qtbot.waitUntil(lambda: bool(view.info.get("available")), timeout=TURN_TIMEOUT)
        assert view.info["active"] == ["weather_lookup"] and not view.info["legacyEvidence"]
        banners = [b.text for b in second.window.banners.banners]
        assert any("system update is pending" in t for t in banners), banners
        second.settle()
        assert path.read_bytes() == before
    finally:
        second.close()


def test_new_session_defaults_seed_the_compaction_thresholds_of_new_sessions(
    qtbot: Any, workspace: Path, window: Harness
) -> None:
    window.launch(route="emulator/anthropic/claude-opus-5-5")
    old = Path(window.window.session.path)
    window.window.new_defaults_action.trigger()
    dialog = window.window.session_choices.defaults_dialog
    dialog.reserve.setValue(4096)
    dialog.keep.setValue(1000)
    dialog.auto.setChecked(False)
    dialog.accept()
    window.client.new_session.emit(str(workspace))
    qtbot.waitUntil(lambda: Path(window.window.session.path) != old, timeout=TURN_TIMEOUT)
    window.wait_open()
    assert window.send("hello").error is None
    path = Path(window.window.session.path)
    notes = [
        r["data"]
        for r in (orjson.loads(line) for line in path.read_bytes().splitlines()[1:])
        if r.get("data", {}).get("kind") == "session-settings"
    ]
    assert notes[-1]["settings"]["compaction"] == {
        "enabled": False,
        "reserveTokens": 4096,
        "keepRecentTokens": 1000,
    }
    assert notes[-1]["why"] == "a new session"
    assert window.worker.session is not None
    assert window.worker.session.runtime.compaction.keep_recent_tokens == 1000
