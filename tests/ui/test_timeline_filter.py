"""The bulk-mapped timeline filter agrees with a brute-force filter through appends, anchored
inserts, streaming rows and filter changes, and keeps the selection across a filter change; the
C++ layer the view gets (``ShownRows``) follows it row for row and keeps the view's per-row
layout calls out of Python."""

from __future__ import annotations

import random
from typing import Any

from PySide6.QtCore import QItemSelectionModel
from PySide6.QtWidgets import QListView

from desktop.ui import rowinfo
from desktop.ui.timeline_model import ID_ROLE, ShownRows, TimelineFilter, TimelineModel

KINDS = ("user", "assistant", "toolResult", "system", "note")


def make_row(i: int, kind: str, before: str | None = None) -> dict[str, Any]:
    row: dict[str, Any] = {
        "type": kind,
        "id": f"r{i}",
        "ts": 1,
        "text": f"note {i}" if kind == "note" else "",
    }
    if kind in ("user", "assistant", "toolResult"):
        row["message"] = {"role": "user", "content": f"word{i % 7}"}
    if before:
        row["before"] = before
    return row


def expected_ids(model: TimelineModel, proxy: TimelineFilter) -> list[str]:
    ids = []
    for position in range(model.rowCount()):
        row = model.row_at(position)
        assert row is not None
        kind = rowinfo.row_kind(row)
        bucket = rowinfo.filter_kind(kind)
        if bucket not in proxy.kinds or (bucket == rowinfo.SYSTEM and not proxy.show_hidden):
            continue
        if proxy.needle and proxy.needle not in model.search_text(position):
            continue
        ids.append(str(row.get("id")))
    return ids


def shown_ids(proxy: TimelineFilter | ShownRows) -> list[str]:
    return [str(proxy.index(i, 0).data(ID_ROLE)) for i in range(proxy.rowCount())]


def timeline_view(qtbot: Any) -> tuple[TimelineModel, TimelineFilter, ShownRows, QListView]:
    """The window's chain: the model, its filter, the C++ layer and a view on it."""
    model = TimelineModel()
    proxy = TimelineFilter()
    proxy.setSourceModel(model)
    shown = ShownRows(proxy)
    view = QListView()
    qtbot.addWidget(view)
    view.setModel(shown)
    return model, proxy, shown, view


def test_filter_matches_brute_force_under_random_edits(qtbot: Any) -> None:
    rng = random.Random(7)
    model, proxy, shown, _view = timeline_view(qtbot)
    model.set_rows([make_row(i, rng.choice(KINDS)) for i in range(300)])
    next_id = 300
    for step in range(200):
        action = rng.random()
        if action < 0.4:
            rows = [make_row(next_id + k, rng.choice(KINDS)) for k in range(rng.randint(1, 4))]
            next_id += len(rows)
            model.append_rows(rows)
        elif action < 0.55:
            users = [r for r in model.rows if r["type"] == "user"]
            if users:
                model.append_rows([make_row(next_id, "system", before=str(rng.choice(users)["id"]))])
                next_id += 1
        elif action < 0.65:
            model.set_streaming(
                {"role": "assistant", "content": [{"type": "text", "text": "…"}]}
                if rng.random() < 0.6
                else None
            )
        elif action < 0.8:
            proxy.set_show_hidden(not proxy.show_hidden)
        elif action < 0.9:
            proxy.set_kind_visible(rng.choice(rowinfo.FILTER_KINDS), rng.random() < 0.5)
        else:
            proxy.set_search(rng.choice(["", "word3", "note", "zzz"]))
        assert shown_ids(proxy) == expected_ids(model, proxy), f"diverged at step {step}"
        assert shown_ids(shown) == shown_ids(proxy), f"the view's rows diverged at step {step}"
        for i in range(proxy.rowCount()):
            assert proxy.mapFromSource(proxy.mapToSource(proxy.index(i, 0))).row() == i
            position = shown.position(shown.index(i, 0))
            assert model.index(position, 0).data(ID_ROLE) == shown.index(i, 0).data(ID_ROLE)


def test_selection_survives_a_filter_change(qtbot: Any) -> None:
    model, proxy, shown, view = timeline_view(qtbot)
    model.set_rows([make_row(i, k) for i, k in enumerate(["system", "user", "system", "assistant", "user"])])
    target = next(i for i in range(shown.rowCount()) if shown.index(i, 0).data(ID_ROLE) == "r3")
    view.selectionModel().setCurrentIndex(
        shown.index(target, 0), QItemSelectionModel.SelectionFlag.ClearAndSelect
    )
    proxy.set_show_hidden(True)
    assert view.currentIndex().data(ID_ROLE) == "r3"
    proxy.set_show_hidden(False)
    assert view.currentIndex().data(ID_ROLE) == "r3"


class CountingFilter(TimelineFilter):
    """The filter, counting the calls that reach Python for its row count."""

    calls = 0

    def rowCount(self, parent: Any = None) -> int:
        CountingFilter.calls += 1
        return super().rowCount() if parent is None else super().rowCount(parent)


def test_laying_out_a_long_timeline_asks_python_for_no_row(qtbot: Any) -> None:
    """Qt's list layout asks its model for an index once per row; given the Python filter,
    each of those checked its ``rowCount`` in Python (and waited for the GIL while the worker
    ran). Through ``ShownRows`` a 20,000-row layout asks it a handful of times."""
    model = TimelineModel()
    model.set_rows([make_row(i, KINDS[i % 3]) for i in range(20_000)])
    rows = CountingFilter()
    rows.setSourceModel(model)
    view = QListView()
    qtbot.addWidget(view)
    view.setUniformItemSizes(True)
    view.resize(400, 300)
    view.setModel(ShownRows(rows))
    view.show()
    CountingFilter.calls = 0
    view.doItemsLayout()
    view.scrollToBottom()
    view.viewport().repaint()
    assert view.indexAt(view.viewport().rect().topLeft()).isValid()
    assert CountingFilter.calls < 50, f"{CountingFilter.calls} Python row counts for one layout"
