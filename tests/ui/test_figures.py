"""One definition per figure, and colours from the theme (design G5, G7, G14).

"Input" is every input token of a request wherever it is shown (the timeline, the message, the
Usage tab and its totals), with cached and uncached beside it; the context's size is one figure
in the compaction preview, the context meter and the Payload tab; a what-if minimum is never
shown below 1.00x or as "+-"; Help's diagrams and the conversation paint each kind in the
colour the timeline gives it.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from desktop.ui import rowinfo
from desktop.ui.help_page import picture
from desktop.ui.main_window import TAB_PAYLOAD
from desktop.ui.message_html import render_row
from desktop.ui.payload_view import describe_cache
from desktop.ui.theme import kind_style
from desktop.ui.timeline_delegate import usage_hint
from desktop.ui.usage_view import UsageView, totals_text
from desktop.ui.whatif_view import table_rows
from tests.ui.conftest import TURN_TIMEOUT, Harness
from tests.ui.synthetic import assistant_row

USAGE = {"input": 40, "output": 30, "cacheRead": 1000, "cacheWrite": 60, "cost": {"total": 0.29}}
ROW = assistant_row("a1", "ok", u=USAGE)


def test_input_means_every_input_token_everywhere(qtbot: Any) -> None:
    view = UsageView()
    qtbot.addWidget(view)
    view.model.set_rows([ROW])
    model = view.model
    headers = [model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())]
    cells = dict(zip(headers, (model.index(0, c).data() for c in range(model.columnCount())), strict=True))
    assert (cells["Input"], cells["Cached"], cells["Uncached"]) == ("1,100", "1,000", "100")
    assert cells["Cost"] == "$0.29"
    assert "input 1,100 (1,000 cached, 100 uncached" in totals_text(model.total)
    assert usage_hint(USAGE).startswith("in 1.1k ")  # the timeline
    assert "1,100 input tokens (1,000 cached, 100 uncached)" in render_row(ROW, dark=False).html


def test_a_replay_under_the_minimum_reads_as_at_the_minimum() -> None:
    figures = {
        "strategy": "native",
        "inputTokens": 5000,
        "uncachedTokens": 1964,
        "cacheWrites": 0,
        "hitRatio": 0.6,
        "cost": 0.01,
        "minimumUncachedTokens": 2000,
        "overMinimumTokens": -36,
        "minimumRatio": 0.982,
    }
    [row] = table_rows({"routes": [{"route": "deepseek/deepseek-flash", "strategies": [figures]}]})
    assert row[-1] == "1.00x (36 under)"
    over = table_rows(
        {
            "routes": [
                {"route": "r", "strategies": [{**figures, "overMinimumTokens": 36, "minimumRatio": 1.018}]}
            ]
        }
    )
    assert over[0][-1] == "1.02x (+36)"
    assert all("+-" not in cell for cell in row)


def test_help_diagram_and_conversation_use_the_timeline_colours(qtbot: Any) -> None:
    for dark in (False, True):
        image = picture("timeline-row", dark)
        badge = image.pixelColor(80 * 2, 18 * 2)  # inside the ASSISTANT badge, off its text
        assert badge.name() == kind_style(rowinfo.ASSISTANT, dark).accent.name()
        assert badge != kind_style(rowinfo.SYSTEM, dark).accent
    html = render_row(ROW, dark=False).html
    assert kind_style(rowinfo.ASSISTANT, False).accent.name() in html
    assert kind_style(rowinfo.SYSTEM, False).accent.name() not in html
    assert QColor(kind_style(rowinfo.ASSISTANT, False).accent).isValid()


def test_declaration_notes_say_what_they_mean() -> None:
    for text in (
        "fixed declarations: verified deepseek-flash binding: complete catalog declared from the first request",
        "on-demand declarations: the route's binding is not verified",
    ):
        note = {"type": "note", "id": "n1", "ts": 1_700_000_000_000, "level": "info", "text": text}
        shown = render_row(note, dark=False).html
        assert "What this means:" in shown
        assert "stay cached" in shown or "keeps reusing its cache" in shown


def test_compaction_meter_and_payload_count_the_context_alike(harness: Harness) -> None:
    """One context figure (design G14): the compaction preview's "before", the context meter and
    the Payload headline's input tokens are the same number, after a reply reported its usage."""
    h, window = harness, harness.window
    h.qtbot.waitUntil(lambda: window.compaction_preview is not None, timeout=TURN_TIMEOUT)
    opened = window.compaction_preview
    h.send("A long question. " + "context " * 6000 + " [[words:700]]")
    window.tabs.setCurrentIndex(TAB_PAYLOAD)
    h.qtbot.waitUntil(
        lambda: b"A long question" in h.previews[-1]["body"] and window.compaction_preview is not opened,
        timeout=TURN_TIMEOUT,
    )
    h.qtbot.waitUntil(lambda: window.context_meter.figures is not None, timeout=TURN_TIMEOUT)
    preview = window.compaction_preview
    assert preview is not None and window.context_meter.figures is not None
    figure = preview.tokens_before
    assert window.context_meter.figures[0] == figure
    assert h.previews[-1]["cache"]["context"] == figure
    assert f" of {figure:,} input tokens cached" in describe_cache(h.previews[-1])
    assert f"Estimated context: <b>~{figure:,} tokens</b>" in window.compact_button.toolTip()
