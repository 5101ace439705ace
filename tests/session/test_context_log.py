"""The kept model order and context equal the full functions after any appends (design P7, T4)."""

from __future__ import annotations

import random
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from desktop.host.journal import model_order
from desktop.host.journal.lines import JournalRows
from desktop.session.context_log import ContextLog
from desktop.session.history import ContextView, context_view


def _row(rng: random.Random, rows: list[dict[str, Any]], n: int) -> dict[str, Any]:
    kind = rng.choice(["user", "assistant", "system", "system", "note", "compaction", "toolResult"])
    row_id = rng.choice([f"r{n}", f"r{n}", f"r{n}", f"r{rng.randint(0, n + 3)}"])  # repeats and forward names
    row: dict[str, Any] = {"type": kind, "v": 1, "id": row_id, "ts": n}
    if kind in ("user", "assistant", "toolResult"):
        role = kind
        row["message"] = {"role": role, "content": [{"type": "text", "text": f"m{n}"}], "timestamp": n}
    elif kind == "system":
        row["modelSystem"] = {"v": 1, "message": {"role": "system", "content": f"s{n}", "timestamp": n}}
        users = [r["id"] for r in rows[-6:] if r["type"] == "user"]
        choice = rng.random()
        if users and choice < 0.5:
            row["before"] = users[-1]
        elif choice < 0.6:
            row["before"] = f"r{rng.randint(0, n + 3)}"
    elif kind == "compaction":
        if rows and rng.random() < 0.7:
            row["firstKeptId"] = rng.choice(rows)["id"]
        row["summary"] = f"sum{n}"
        if rng.random() < 0.5:
            row["checkpoint"] = {"v": 1, "message": {"role": "system", "content": "cp", "timestamp": n}}
    return row


def _same_as_full(log: ContextLog, rows: list[dict[str, Any]]) -> ContextView:
    """Assert the log's kept order and view are the full functions' over ``rows``; the full view."""
    ordered = model_order(rows)
    assert list(log.ordered) == ordered
    full = context_view(ordered)
    assert list(log.view.messages) == full.messages
    assert (log.view.prefix, log.view.previous_summary, log.view.fresh) == (
        full.prefix,
        full.previous_summary,
        full.fresh,
    )
    assert log.system_messages() == [m for m in full.messages if m["role"] == "system"]
    return full


@settings(max_examples=300, deadline=None)
@given(st.randoms(use_true_random=False))
def test_kept_order_and_view_equal_full_rebuild(rng: random.Random) -> None:
    rows: list[dict[str, Any]] = []
    log = ContextLog()
    mark = None
    previous: list[Any] = []
    for _turn in range(rng.randint(1, 60)):
        for _ in range(rng.randint(1, 3)):
            rows.append(_row(rng, rows, len(rows)))
        log.sync(rows)
        full = _same_as_full(log, rows)
        assert [id(s) for s in log.view.sources] == [id(s) for s in full.sources]
        stable = log.stable_since(mark)
        assert all(a is b for a, b in zip(previous[:stable], log.view.messages[:stable], strict=True))
        mark, previous = log.mark(), list(log.view.messages)


def test_appends_in_turn_order_never_rebuild() -> None:
    rows: list[dict[str, Any]] = []
    log = ContextLog()
    for turn in range(200):
        user = {
            "type": "user",
            "v": 1,
            "id": f"u{turn}",
            "message": {"role": "user", "content": "q", "timestamp": turn},
        }
        rows.append(user)
        log.sync(rows)
        rows.append(
            {
                "type": "system",
                "v": 1,
                "id": f"s{turn}",
                "before": f"u{turn}",
                "modelSystem": {"v": 1, "message": {"role": "system", "content": "x", "timestamp": turn}},
            }
        )
        rows.append(
            {
                "type": "assistant",
                "v": 1,
                "id": f"a{turn}",
                "message": {"role": "assistant", "content": [], "timestamp": turn},
            }
        )
        log.sync(rows)
    assert log.rebuilds == 0
    assert list(log.ordered) == model_order(rows)


@settings(max_examples=150, deadline=None)
@given(st.randoms(use_true_random=False))
def test_journal_rows_read_on_demand_give_the_same_order_and_view(rng: random.Random) -> None:
    """The journal's own rows (lines decoded when asked for, ids unique as the reader keeps
    them): the kept order and view equal the full functions."""
    rows: list[dict[str, Any]] = []
    journal = JournalRows()
    log = ContextLog()
    for _turn in range(rng.randint(1, 60)):
        for _ in range(rng.randint(1, 3)):
            row = _row(rng, rows, len(rows))
            if any(r["id"] == row["id"] for r in rows):
                continue  # the reader sets a repeated id aside
            rows.append(row)
            journal.add(orjson.dumps(row, option=orjson.OPT_APPEND_NEWLINE), row, row["id"])
        log.sync(journal)
        full = _same_as_full(log, rows)
        assert log.ordered.ids() == [row["id"] for row in model_order(rows)]
        assert list(log.view.sources) == full.sources


def test_a_search_of_the_lines_finds_text_across_its_chunks(monkeypatch: Any) -> None:
    """``lines_hold`` searches a chunk at a time (the window gets the GIL between two): text
    that straddles two chunks, or ends a chunk, is found all the same, and absent text is not."""
    from desktop.host.journal import lines

    monkeypatch.setattr(lines, "SEARCH_CHUNK", 64)
    journal = JournalRows()
    for n in range(40):
        row = {"type": "note", "v": 1, "id": f"n{n}", "ts": n, "text": f"line {n:03d}"}
        journal.add(orjson.dumps(row, option=orjson.OPT_APPEND_NEWLINE), row, row["id"])
    data = bytes(journal._data)
    for n in range(40):
        needle = f"line {n:03d}".encode()
        assert journal.lines_hold(needle), needle
    straddling = [n for n in range(40) if data.index(f"line {n:03d}".encode()) % 64 > 64 - 8]
    assert straddling  # some needle does cross a chunk boundary
    assert not journal.lines_hold(b"line 040") and not journal.lines_hold(b"\\u")
    assert JournalRows().lines_hold(b"") and not JournalRows().lines_hold(b"x")


def test_a_compacted_journal_is_viewed_without_walking_its_summarized_rows(monkeypatch: Any) -> None:
    """A long compacted session's view reads the facts of the kept tail, found from the
    compaction back, not of every row from the first: the first turn after opening a compacted
    100,000-row session walked all of them (design P7)."""
    from desktop.session import context_log

    journal = JournalRows()
    rows: list[dict[str, Any]] = []
    for n in range(20_000):
        row = {
            "type": "user",
            "v": 1,
            "id": f"u{n}",
            "ts": n,
            "message": {"role": "user", "content": f"q{n}"},
        }
        rows.append(row)
    compaction = {
        "type": "compaction",
        "v": 1,
        "id": "c1",
        "ts": 20_000,
        "summary": "s",
        "firstKeptId": "u19990",
    }
    rows.append(compaction)
    for row in rows:
        journal.add(orjson.dumps(row, option=orjson.OPT_APPEND_NEWLINE), row, row["id"])
    looked_at: list[int] = []
    of = context_log._Facts.of

    def counting(self: Any, index: int) -> Any:
        looked_at.append(index)
        return of(self, index)

    monkeypatch.setattr(context_log._Facts, "of", counting)
    log = ContextLog()
    log.sync(journal)

    full = context_view(model_order(rows))
    assert list(log.view.messages) == full.messages and log.view.prefix == full.prefix
    assert [m["content"] for m in log.view.messages[log.view.prefix :]] == [
        f"q{n}" for n in range(19_990, 20_000)
    ]
    assert len(looked_at) <= 20
