"""The inspector's views for foreign sessions and the what-if replay, on their own (X1, X2, X3).

Each view gets the plain data the worker would send (built here from the real fixture
sessions through the same functions the worker calls) and is checked for what a user sees.
The window tests (``test_window_inspect.py``) run the same views through the worker thread.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from desktop.session.foreign import browse, open_foreign, route_model
from desktop.session.foreign.display import Prices
from desktop.session.whatif import request_sequence, what_if
from desktop.ui import rowinfo
from desktop.ui.foreign_bar import ForeignBar
from desktop.ui.foreign_rows import ForeignRows
from desktop.ui.inspect_ops import open_foreign_info
from desktop.ui.messages import ForeignBranchRows, SessionOpened
from desktop.ui.payload_view import PayloadView
from desktop.ui.session_browser import SessionBrowser, browse_rows
from desktop.ui.whatif_view import WhatIfView, table_rows
from tests.foreign.support import CLAUDE, PI

ROUTES = ["anthropic/claude-opus-5-5", "deepseek/deepseek-flash"]


def shown_rows(path: Path) -> tuple[SessionOpened, list[dict[str, Any]]]:
    """A foreign session as the window gets it, and every row of its branch built."""
    _session, opened = open_foreign_info(path)
    assert isinstance(opened.rows, ForeignBranchRows)
    return opened, [opened.rows.reader.row(i) for i in range(len(opened.rows.reader))]


def test_pi_rows_keep_their_own_kinds_and_system_rows_carry_diffs() -> None:
    opened, rows = shown_rows(PI / "v3_compaction.jsonl")
    by_kind = {row["foreign"]: row for row in rows}
    # Desktop-shaped rows where one exists, so the chat views show them unchanged (design X1).
    assert by_kind["user"]["type"] == "user" and by_kind["tool"]["type"] == "toolResult"
    system = by_kind["system"]
    assert system["type"] == "system" and "sections" in system["modelSystem"]["message"]
    assert rowinfo.row_kind(system) == rowinfo.SYSTEM
    diffs = [row["diff"] for row in rows if row["foreign"] == "system"]
    assert [c.name for c in diffs[0].changes] == ["preamble", "agents"]
    assert diffs[-1].tools_removed == ["ToolSearch"]
    # Their own kinds otherwise: a context edit is not a note, a model change is not "other".
    edit, model = by_kind["context_edit"], by_kind["model_change"]
    assert rowinfo.row_kind(edit) != rowinfo.row_kind(model)
    assert {rowinfo.KIND_NAMES[rowinfo.row_kind(r)] for r in (edit, model)} == {"edit", "model"}
    assert rowinfo.row_summary(model) == "model: anthropic/claude-opus-5-5"
    foreign = opened.session.foreign
    assert foreign is not None and foreign.leaf == "9312cd44" and len(foreign.branches) == 2


def test_claude_reminders_hide_with_system_rows_and_usage_is_priced() -> None:
    opened, rows = shown_rows(CLAUDE / "basic.jsonl")
    reminders = [r for r in rows if r["foreign"] == "reminder"]
    assert reminders and all(rowinfo.filter_kind(rowinfo.row_kind(r)) == rowinfo.SYSTEM for r in reminders)
    assert rowinfo.KIND_NAMES[rowinfo.row_kind(reminders[0])] == "reminder"
    assistant = next(r for r in rows if r["type"] == "assistant")
    usage = assistant["message"]["usage"]
    # Claude Code records tokens, not dollars: priced from the catalog and said so.
    assert usage["cost"]["total"] > 0 and assistant["message"]["costFrom"].startswith("catalog prices")
    assert isinstance(opened.rows, ForeignBranchRows)
    reader = opened.rows.reader
    position = next(i for i in range(len(reader)) if reader.row(i)["type"] == "assistant")
    reader.close()  # built again (the reader keeps only the latest rows): still priced and said so
    assert reader.row(position)["message"]["costFrom"].startswith("catalog prices")
    _opened, compact = shown_rows(CLAUDE / "compact.jsonl")
    summary = next(r for r in compact if r["foreign"] == "compaction_summary")
    assert rowinfo.KIND_NAMES[rowinfo.row_kind(summary)] == "summary"
    assert rowinfo.filter_kind(rowinfo.row_kind(summary)) == rowinfo.COMPACTION


def test_foreign_bar_lists_branches_and_emits_the_chosen_leaf(qtbot: Any) -> None:
    _session, opened = open_foreign_info(PI / "v3_branches.jsonl")
    bar = ForeignBar()
    qtbot.addWidget(bar)
    bar.show_session(opened.session.foreign)
    assert not bar.isHidden() and "read-only" in bar.label.text()
    assert bar.branches.count() == 3 and bar.branches.isEnabled()
    assert "[current]" in bar.branches.itemText(0)
    chosen: list[str] = []
    bar.branch_chosen.connect(chosen.append)
    bar.branches.setCurrentIndex(2)
    bar.branches.activated.emit(2)
    assert chosen == ["03d30125"]
    forks: list[str] = []
    bar.continue_requested.connect(forks.append)
    qtbot.mouseClick(bar.continue_button, Qt.MouseButton.LeftButton)
    assert forks == ["03d30125"]
    bar.show_session(None)  # a Desktop session: no bar
    assert bar.isHidden()


def place(target: Path, source: Path, mtime: float) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(source.read_bytes())
    os.utime(target, (mtime, mtime))


def test_session_browser_groups_by_workspace_filters_and_opens(qtbot: Any, tmp_path: Path) -> None:
    place(tmp_path / ".pi/agent/sessions/--home-dev-projects-demo--/a.jsonl", PI / "v3_branches.jsonl", 2_000)
    place(tmp_path / ".claude/projects/-home-dev-projects-demo/b.jsonl", CLAUDE / "basic.jsonl", 1_000)
    dialog = SessionBrowser()
    qtbot.addWidget(dialog)
    dialog.show_workspaces(browse_rows(browse(home=tmp_path, env={})))
    paths = dialog.session_paths()
    assert [Path(p).name for p in paths] == ["a.jsonl", "b.jsonl"]
    assert (
        dialog.tree.topLevelItem(0).text(1) == "pi" and dialog.tree.topLevelItem(1).text(1) == "Claude Code"
    )
    assert "2 sessions in 2 workspaces" in dialog.note.text()
    dialog.filter.setText("list files")  # the Claude Code title
    assert dialog.tree.topLevelItem(0).isHidden() and not dialog.tree.topLevelItem(1).isHidden()
    opened: list[str] = []
    dialog.open_requested.connect(opened.append)
    dialog.tree.setCurrentItem(dialog.tree.topLevelItem(1).child(0))
    assert dialog.open_button.isEnabled()
    qtbot.mouseClick(dialog.open_button, Qt.MouseButton.LeftButton)
    assert opened == [paths[1]]
    dialog.show_workspaces([])
    assert dialog.note.text().startswith("No sessions under ")


def test_whatif_view_table_chart_and_assumptions(qtbot: Any) -> None:
    result = what_if(request_sequence(PI / "v3_compaction.jsonl"), ROUTES).to_json()
    view = WhatIfView()
    qtbot.addWidget(view)
    view.resize(900, 700)
    view.set_route_options([*ROUTES, "openai/gpt-5.5"], ROUTES)
    asked: list[list[str]] = []
    view.routes_changed.connect(asked.append)
    view.route_actions["openai/gpt-5.5"].setChecked(True)
    assert asked == [[*ROUTES, "openai/gpt-5.5"]] and view.route_button.text() == "Routes (3)"
    view.show_result(result)
    rows = table_rows(result)
    assert view.table.rowCount() == len(rows) == sum(len(r["strategies"]) for r in result["routes"])
    first = result["routes"][0]["strategies"][0]
    assert view.table.item(0, 0).text() == "anthropic/claude-opus-5-5"
    assert view.table.item(0, 3).text() == f"{first['uncachedTokens']:,}"
    assert view.table.item(0, 7).text().startswith(f"{first['minimumRatio']:.2f}x")
    # The assumptions are on screen: caches expiring by retention, prices and the catalog date.
    text = view.assumptions.text()
    for needle in ("expire by each provider", "retention", "catalog", result["catalog"]["piVersion"]):
        assert needle in text
    # The chart draws one panel per route, with ink in each.
    view.show()
    qtbot.waitExposed(view)
    chart = view.chart
    panels = chart.panels()
    assert len(panels) == 2
    image = chart.grab().toImage()

    def coloured(x: int, y: int) -> bool:  # a strategy line, not the grey background or grid
        c = image.pixelColor(x, y)
        return max(c.red(), c.green(), c.blue()) - min(c.red(), c.green(), c.blue()) > 80

    for panel in panels:
        inked = sum(
            coloured(x, y)
            for x in range(int(panel.left()) + 60, int(panel.right()) - 8, 2)
            for y in range(int(panel.top()) + 30, int(panel.bottom()) - 24, 2)
        )
        assert inked > 5, "a route's panel has no strategy line"
    chart.set_result(None)
    image = chart.grab().toImage()
    assert not any(coloured(x, y) for x in range(0, image.width(), 4) for y in range(0, image.height(), 4))
    chart.set_result(result)
    view.show_result({"error": "boom"})
    assert "boom" in view.status.text() and view.table.rowCount() == len(rows)


def test_payload_pane_marks_the_cached_prefix_and_keeps_the_byte_diff_secondary(qtbot: Any) -> None:
    body = b'{"system":"s","messages":[{"role":"user","content":"hello"},{"role":"user","content":"new"}]}'
    previous = b'{"system":"s","messages":[{"role":"user","content":"hello"}]}'
    end = body.index(b'{"role":"user","content":"new"}')
    preview = {
        "route": "r",
        "api": "anthropic-messages",
        "url": "http://x",
        "headers": {},
        "body": body,
        "pretty": body.decode(),
        "previous": previous,
        "previousLabel": "the last request sent on this route",
        "breakBytes": len(previous) - 2,
        "breakChars": len(previous) - 2,
        "breakPretty": len(previous) - 2,
        "tailBytes": 2,
        "cache": {
            "total": 4000,
            "cached": 3000,
            "written": 500,
            "cost": 0.0123,
            "endChars": end,
            "endPretty": end,
            "why": "at message 2 (user): it is new since the last request",
        },
        "check": {"ok": False, "text": "Reported 2,900 cached: 100 fewer than predicted"},
    }
    view = PayloadView()
    qtbot.addWidget(view)
    view.show_preview("main", preview)
    pane = view.main
    headline = pane.cache.text()
    assert "Predicted: 3,000 of 4,000 input tokens cached (75%), 1,000 uncached" in headline
    assert "message 2" in headline and "100 fewer than predicted" in headline and "$0.012" in headline
    # The misleading byte-share headline is gone; the byte diff is labelled as what it is.
    assert "match the previous request" not in headline + pane.changes.text()
    assert pane.changes.text().startswith("What changed since the last request")
    assert pane.break_position() == end
    assert pane.jump_to_break() and pane.body.textCursor().position() == end
    view.changes_box.setChecked(True)
    assert pane.break_position() == len(previous) - 2
    assert view.jump_button.text() == "Go to first change"
    view.show_preview("main", {**preview, "cache": None, "previous": None})
    assert pane.break_position() is None
    assert "no earlier request" in pane.changes.text()


def test_one_pass_diffs_cover_each_system_row() -> None:
    """The window diffs every system row of a branch in one pass (``system_diffs``): one diff
    for each system and compaction row, on every branch of every pi fixture."""
    checked = 0
    for path in sorted(PI.glob("*.jsonl")):
        session = open_foreign(path)
        for branch in session.branches():
            diffs = session.system_diffs(branch.leaf)
            rows = [r for r in session.timeline(branch.leaf) if r.kind in ("system", "compaction")]
            assert set(diffs) == {r.id for r in rows}
            checked += len(rows)
    assert checked == 19  # every system and compaction row of every branch of the fixtures


def test_foreign_rows_kind_bytes_match_the_rows_and_nothing_is_built_up_front() -> None:
    """The window paints a foreign branch from kind bytes computed without building a row; each
    byte must be what ``row_kind`` says of the row once it is built (X1)."""
    checked = 0
    for path in [*sorted(PI.glob("*.jsonl")), *sorted(CLAUDE.glob("*.jsonl"))]:
        session = open_foreign(path)
        for branch in session.branches():
            reader = ForeignRows(session.timeline(branch.leaf), session.system_diffs(branch.leaf), Prices())
            assert len(reader._cache) == 0  # nothing built to open it
            for entry, code in enumerate(reader.kinds):
                assert rowinfo.row_kind(reader.row(entry)) == code, (path.name, entry)
                checked += 1
    assert checked >= 190  # every row of every branch of the fixtures


def test_the_cache_countdown_ticks_from_the_stored_last_use(qtbot: Any) -> None:
    """Design P9: the Payload tab shows "cache warm · 3:12 left" and re-derives it every
    second on the GUI thread from the preview's last use; at zero it says expired."""
    now = [1_000_000]
    last = now[0] - (5 * 60 - 192) * 1000  # 3:12 left of five minutes
    cache = {
        "total": 4000,
        "cached": 3000,
        "cost": 0.0049,
        "clock": {"state": "warm", "retention": "anthropic", "retentionSeconds": 300, "lastUseMs": last},
        "nextSend": {"now": 0.0049, "afterExpiry": 0.0394},
    }
    view = PayloadView()
    qtbot.addWidget(view)
    view.main.now_ms = lambda: now[0]
    view.show_preview("main", {"route": "r", "body": b"{}", "pretty": "{}", "cache": cache})
    label = view.main.cache_clock
    assert label.text() == "cache warm · 3:12 left · next send $0.0049 now, $0.039 after expiry"
    now[0] += 12_000
    qtbot.waitUntil(lambda: label.text().startswith("cache warm · 3:00 left"), timeout=5000)
    now[0] += 180_000
    qtbot.waitUntil(lambda: label.text() == "cache expired · next send $0.039", timeout=5000)
    assert not view.main.clock_timer.isActive()


def test_whatif_view_a_route_without_a_price_says_price_unknown(qtbot: Any) -> None:
    """Design X9: "price unknown" in the table and the chart, never $0.00, and never the
    cheapest row."""
    free = {**route_model("deepseek/deepseek-flash"), "cost": {"input": 0, "output": 0}}
    sequence = request_sequence(PI / "v3_compaction.jsonl")
    result = what_if(
        sequence,
        ["local/free", "deepseek/deepseek-flash"],
        models={"local/free": free},  # type: ignore[dict-item]
    ).to_json()
    view = WhatIfView()
    qtbot.addWidget(view)
    view.resize(900, 700)
    view.show_result(result)
    unknown = [r for r in range(view.table.rowCount()) if view.table.item(r, 0).text() == "local/free"]
    assert unknown and all(view.table.item(r, 6).text() == "price unknown" for r in unknown)
    assert not any("$" in view.table.item(r, 6).text() for r in unknown)
    cheapest = view._cheapest(result)
    assert cheapest is not None and view.table.item(cheapest, 0).text() == "deepseek/deepseek-flash"
    assert view.table.item(cheapest, 6).font().bold() and not view.table.item(unknown[0], 6).font().bold()
