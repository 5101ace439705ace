"""The inspector in the window, through the real worker thread (X1, X2, X3, P5, P6, M1).

Foreign sessions opened by content with their branch switcher, section diffs, usage and
preview; "Continue in Pi Desktop"; the session browser; an unknown file and malformed lines
reported in full; the What-if tab computed on the worker and following the session as it
grows; the payload preview following the composer's draft byte for byte with the cache view
checked against the emulator's usage; and the catalog refresh changing the route status.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import orjson
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from desktop.host import catalog_cache
from desktop.pi.catalog.transport import SYSTEM_MESSAGES
from desktop.session.foreign import next_request, open_foreign
from desktop.session.foreign.request import route_model
from desktop.ui import inspect_ops, rowinfo
from desktop.ui.main_window import TAB_DIFF, TAB_PAYLOAD, TAB_USAGE
from tests.catalog.conftest import find_model, pi_doc  # noqa: F401  (fixtures)
from tests.foreign.support import CLAUDE, FIXTURES, PI
from tests.ui.conftest import Harness

ROUTE = "emulator/anthropic/claude-opus-5-5"
TIMEOUT = 30_000


@pytest.fixture
def harness(qtbot: Any, tmp_path: Path, qsettings_isolated: Path) -> Iterator[Harness]:
    h = Harness(qtbot, tmp_path, route=ROUTE, data=tmp_path / "data")
    yield h
    h.close()


def copy(source: Path, target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(source.read_bytes())
    return target


def test_pi_session_opens_read_only_with_branches_diffs_and_preview(harness: Harness) -> None:
    path = copy(PI / "v3_branches.jsonl", harness.tmp / "elsewhere" / "named-anything.jsonl")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    harness.start(path)
    w = harness.window
    bar = w.inspect.bar
    assert not bar.isHidden() and bar.branches.count() == 3
    assert w.composer.editor.isReadOnly()
    kinds = [r["foreign"] for r in harness.rows()]
    assert {"system", "model_change", "label", "custom_message", "bash"} <= set(kinds)
    # The system row is hidden until asked for, then shows pi's section diff.
    assert w.filter.hidden_system_rows() >= 1
    w.set_show_hidden(True)
    harness.select(lambda r: r.get("foreign") == "system")
    assert w.tabs.currentIndex() == TAB_DIFF
    assert w.diff_view.current is not None and [c.name for c in w.diff_view.current.changes] == [
        "preamble",
        "cwd",
    ]
    # The preview is the session's next request on the current route, byte for byte.
    session = open_foreign(path)
    expected = next_request(session, route_model("anthropic/claude-opus-5-5"), leaf="3ff4cdd5")
    w.tabs.setCurrentIndex(TAB_PAYLOAD)
    harness.qtbot.waitUntil(lambda: w.payload_view.main.body_bytes == expected.body_bytes, timeout=TIMEOUT)
    assert "Predicted:" in w.payload_view.main.cache.text()
    # Another branch: the timeline is rebuilt for it.
    bar.branches.setCurrentIndex(bar.branches.findData("03d30125"))
    bar.branches.activated.emit(bar.branches.currentIndex())
    harness.qtbot.waitUntil(lambda: harness.leaf() == "03d30125", timeout=TIMEOUT)
    assert any("Try again" in rowinfo.row_summary(r) for r in harness.rows())
    assert bar.current_leaf() == "03d30125"
    # Continue in Pi Desktop: first it says on which route, thinking level and workspace (the
    # source's route has no key here: its offline stand-in, said so), then a new Desktop session
    # on them, every imported row at its source time, the source untouched (design X2, G12).
    harness.qtbot.mouseClick(bar.continue_button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: w.inspect.continue_confirm is not None, timeout=TIMEOUT)
    question = w.inspect.continue_confirm.text()
    assert "route anthropic/claude-opus-5-5 has no API key here" in question
    assert "Continue on emulator/anthropic/claude-opus-5-5, thinking high, working in" in question
    assert "Its first request sends about" in question and "tokens uncached: about $" in question
    w.inspect.continue_confirm.done(QMessageBox.StandardButton.Yes)
    harness.qtbot.waitUntil(
        lambda: harness.shown is not None and harness.shown.foreign is None, timeout=TIMEOUT
    )
    new = Path(harness.shown.path)
    assert new != path and harness.data in new.parents
    assert bar.isHidden() and not w.composer.editor.isReadOnly()
    assert any(r.get("imported") for r in harness.rows())
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest
    harness.qtbot.waitUntil(lambda: b"session-settings" in new.read_bytes(), timeout=TIMEOUT)
    forked = [orjson.loads(line) for line in new.read_bytes().splitlines()[1:]]
    source_times = [m.get("timestamp") for m in session.context("03d30125").messages if m["role"] != "system"]
    assert [r["ts"] for r in forked if r.get("imported")] == source_times
    settings = [r for r in forked if r.get("data", {}).get("kind") == "session-settings"][-1]["data"][
        "settings"
    ]
    assert (settings["route"], settings["thinking"]) == ("emulator/anthropic/claude-opus-5-5", "high")
    assert harness.window.status.route_key == "emulator/anthropic/claude-opus-5-5"


def test_claude_session_usage_and_reminders(harness: Harness) -> None:
    path = copy(CLAUDE / "basic.jsonl", harness.tmp / "t.jsonl")
    harness.start(path)
    w = harness.window
    rows = harness.rows()
    assert [r["foreign"] for r in rows].count("reminder") == 2
    # Reminders, meta messages and unknown entries hide with the system rows, and the notice
    # counts them as hidden (the "show" link brings them back), not as filtered out.
    hidden = sum(r["foreign"] in ("reminder", "meta", "other") for r in rows)
    assert hidden == 4 and w.filter.hidden_system_rows() == hidden
    assert w.filter.filtered_out() == hidden and "4 hidden system rows" in w.hidden_notice.text()
    assert w.inspect.bar.branches.count() == 4  # three branches and a sub-agent sidechain
    w.tabs.setCurrentIndex(TAB_USAGE)
    replies = [r for r in rows if r["type"] == "assistant"]
    assert len(replies) == 6
    assert w.usage_view.model.rowCount() == 7  # the six replies and the Task's sub-agent call
    assert all(line.cost > 0 for line in w.usage_view.model.lines)


def test_unknown_file_and_malformed_lines_are_reported_in_full(harness: Harness) -> None:
    harness.start()
    w = harness.window
    text = harness.tmp / "notes.jsonl"
    text.write_text("just some notes\nnot json\n")
    w.client.open_session.emit(str(text))
    harness.qtbot.waitUntil(lambda: bool(w.inspect.problems), timeout=TIMEOUT)
    title, message = w.inspect.problems[-1]
    assert title == "Could not open this file"
    assert "supported formats" in message and "pi-coding-agent" in message and str(text) in message
    lines = (PI / "v3_compaction.jsonl").read_bytes().split(b"\n")
    lines.insert(3, b'{"type": "message", broken')
    bad = harness.tmp / "bad.jsonl"
    bad.write_bytes(b"\n".join(lines))
    w.client.open_session.emit(str(bad))
    harness.qtbot.waitUntil(lambda: len(w.inspect.problems) >= 2, timeout=TIMEOUT)
    _title, message = w.inspect.problems[-1]
    assert "line 4" in message and "the rest opened" in message
    harness.wait_open(bad)
    assert harness.shown.foreign.format == "pi"  # and the rest opened


def test_codex_rollout_and_parallel_claude_code_calls_in_the_window(harness: Harness) -> None:
    """A Codex rollout opens read-only with its model calls and usage; a Claude Code reply's
    parallel tool calls show as one branch with every result."""
    rollout = next((FIXTURES / "codex").glob("rollout-2026-*.jsonl"))
    path = copy(rollout, harness.tmp / rollout.name)
    harness.start(path)
    w = harness.window
    assert harness.shown.foreign.format == "codex"
    rows = harness.rows()
    assert [r["foreign"] for r in rows].count("assistant") == 5
    w.tabs.setCurrentIndex(TAB_USAGE)
    harness.qtbot.waitUntil(lambda: w.usage_view.model.rowCount() == 5, timeout=TIMEOUT)
    parallel = copy(CLAUDE / "parallel.jsonl", harness.tmp / "parallel.jsonl")
    w.client.open_session.emit(str(parallel))
    harness.qtbot.waitUntil(lambda: harness.shown.path == str(parallel), timeout=TIMEOUT)
    assert w.inspect.bar.branches.count() == 1
    tools = [r for r in harness.rows() if r["foreign"] == "tool"]
    assert len(tools) == 5 and all(r["inContext"] for r in tools)


def test_a_transcript_with_few_readable_lines_opens_under_one_banner(harness: Harness) -> None:
    """A file whose only readable lines are metadata still opens, and says so once."""
    harness.start()
    w = harness.window
    few = harness.tmp / "few.jsonl"
    lines = (CLAUDE / "basic.jsonl").read_bytes().splitlines()
    few.write_bytes(b"\n".join([lines[0], b'{"type":"user", broken', b"not json", lines[-1]]) + b"\n")
    w.client.open_session.emit(str(few))
    harness.wait_open(few)
    harness.qtbot.waitUntil(lambda: bool(w.inspect.problems), timeout=TIMEOUT)
    warnings = [b.text for b in w.banners.banners if b.level == "warning"]
    assert len(warnings) == 1  # once, not once by the window and again by the inspector
    assert "line 2" in warnings[0] and "line 3" in warnings[0] and "no conversation entry" in warnings[0]


def test_session_browser_lists_home_sessions_and_opens_one(harness: Harness, home: Path) -> None:
    pi = copy(PI / "v3_compaction.jsonl", home / ".pi/agent/sessions/--w--/s.jsonl")
    copy(CLAUDE / "compact.jsonl", home / ".claude/projects/-w/c.jsonl")
    harness.start()
    w = harness.window
    w.browse_action.trigger()
    browser = w.inspect.browser
    assert browser is not None
    foreign = [str(home / ".pi"), str(home / ".claude")]
    harness.qtbot.waitUntil(
        lambda: len([p for p in browser.session_paths() if p.startswith(tuple(foreign))]) == 2,
        timeout=TIMEOUT,
    )
    tops = [browser.tree.topLevelItem(i) for i in range(browser.tree.topLevelItemCount())]
    item = next(top for top in tops if top is not None and top.text(1) == "pi").child(0)
    browser.tree.setCurrentItem(item)
    harness.qtbot.mouseClick(browser.open_button, Qt.MouseButton.LeftButton)
    harness.wait_open(pi)


def test_whatif_tab_is_computed_on_the_worker_and_follows_the_session(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: list[int] = []
    real = inspect_ops.whatif

    def recording(*args: Any, **kwargs: Any) -> dict[str, Any]:
        threads.append(threading.get_ident())
        return real(*args, **kwargs)

    monkeypatch.setattr(inspect_ops, "whatif", recording)
    harness.start(route="emulator/deepseek/deepseek-flash")
    w = harness.window
    view = w.inspect.whatif
    w.composer.editor.setPlainText("Say hello")
    w.composer.submit()
    harness.qtbot.waitUntil(lambda: len(w.turn_results) == 1, timeout=TIMEOUT)
    w.tabs.setCurrentIndex(w.inspect.whatif_index)
    harness.qtbot.waitUntil(lambda: view.result.get("requests") == 1, timeout=TIMEOUT)
    assert view.table.rowCount() >= 3 * 3  # three routes by three strategies
    assert threads and threading.get_ident() not in threads
    w.composer.editor.setPlainText("And again")
    w.composer.submit()
    harness.qtbot.waitUntil(lambda: view.result.get("requests") == 2, timeout=TIMEOUT)
    assert "expire by each provider" in view.assumptions.text()  # design P9


def test_preview_follows_the_draft_and_equals_the_sent_body(harness: Harness) -> None:
    harness.start()
    w = harness.window
    w.tabs.setCurrentIndex(TAB_PAYLOAD)
    w.composer.editor.setPlainText("  Please list the files  ")
    harness.qtbot.waitUntil(
        lambda: harness.previews[-1].get("draft") == "Please list the files", timeout=TIMEOUT
    )
    preview = harness.previews[-1]
    assert b"Please list the files" in preview["body"]
    cache = preview["cache"]
    assert cache["total"] > 0 and cache["cached"] + cache["uncached"] == cache["total"]
    sent_before = len(harness.worker.emulator.requests)
    w.composer.submit()
    harness.qtbot.waitUntil(lambda: len(w.turn_results) == 1, timeout=TIMEOUT)
    first = harness.worker.emulator.requests[sent_before]
    assert first.body == preview["body"]  # byte for byte what the turn sent (design P5)
    # After the request: the prediction is checked against the usage the emulator reported.
    harness.qtbot.waitUntil(lambda: "check" in harness.previews[-1], timeout=TIMEOUT)
    check = harness.previews[-1]["check"]
    assert check["ok"], check
    assert "held" in w.payload_view.main.cache.text()
    # The check belongs to the route the request went to: another route shows none.
    w.client.set_route.emit("emulator/deepseek/deepseek-flash")
    harness.qtbot.waitUntil(lambda: "deepseek" in str(harness.previews[-1].get("route")), timeout=TIMEOUT)
    assert "check" not in harness.previews[-1] and "held" not in w.payload_view.main.cache.text()


class _CatalogHandler(BaseHTTPRequestHandler):
    body: ClassVar[bytes] = b""

    def do_GET(self) -> None:
        ok = self.path == "/pi_catalog.json"
        self.send_response(200 if ok else 404)
        self.send_header("Content-Length", str(len(self.body) if ok else 0))
        self.end_headers()
        if ok:
            self.wfile.write(self.body)

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_refresh_catalogs_changes_the_route_status(
    harness: Harness,
    monkeypatch: pytest.MonkeyPatch,
    pi_doc: dict[str, Any],  # noqa: F811
    find_model: Callable[[dict[str, Any], str, str], dict[str, Any]],  # noqa: F811
) -> None:
    opus = find_model(pi_doc, "anthropic", "claude-opus-5-5")
    opus["compat"][SYSTEM_MESSAGES] = False  # the flag that changed upstream
    pi_doc["generatedAt"] = "2999-01-01T00:00:00Z"
    pi_doc["source"]["version"] = "9.9.9"
    _CatalogHandler.body = orjson.dumps(pi_doc)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _CatalogHandler)
    serving = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    serving.start()
    monkeypatch.setenv("PI_DESKTOP_DATA_DIR", str(harness.data))
    monkeypatch.setenv(
        catalog_cache.PI_CATALOG_URL_ENV, f"http://127.0.0.1:{server.server_address[1]}/pi_catalog.json"
    )
    monkeypatch.setenv(
        catalog_cache.MODELS_DEV_URL_ENV, f"http://127.0.0.1:{server.server_address[1]}/none.json"
    )
    try:
        harness.start()
        w = harness.window
        before = w.status.capability
        assert before["delivery"] == "native system sections"
        assert "built-in catalog" in w.capability_label.text()
        assert "shipped with this version" in w.capability_label.toolTip()
        w.refresh_catalogs_action.trigger()
        harness.qtbot.waitUntil(lambda: "refreshed catalog" in w.capability_label.text(), timeout=TIMEOUT)
        after = w.status.capability
        flag = next(f for f in after["flags"] if f["flag"] == SYSTEM_MESSAGES)
        assert flag["value"] is False and "9.9.9" in flag["from"]
        assert after["delivery"] == "folded" and after["catalogs"]["pi"]["origin"] == "refreshed copy"
        assert "refreshed catalog" in w.capability_label.text()
        assert SYSTEM_MESSAGES in w.capability_label.toolTip()
    finally:
        server.shutdown()
        server.server_close()
