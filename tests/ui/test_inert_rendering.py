"""What a file, a tool or a model wrote is shown, never followed (design G11).

Each hostile text names a FIFO (``tests/ui/fifo_probe.py``): if Qt opens the path the probe
says so and the test fails at once, where ``/dev/zero`` would abort the run and a plain FIFO
freeze it. The widgets are shown and grabbed, since Qt loads images when it lays out and paints.
"""

from __future__ import annotations

import base64
import struct
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt, QTimer, QUrl
from PySide6.QtGui import QTextCursor, QTextDocument
from PySide6.QtWidgets import QApplication, QListView, QMessageBox, QTextBrowser, QToolTip, QWidget

from desktop.ui import launch
from desktop.ui.activation_view import ActivationView
from desktop.ui.foreign_bar import ForeignBar
from desktop.ui.inert import MAX_IMAGE_BYTES, InertBrowser
from desktop.ui.main_window import MainWindow
from desktop.ui.message_view import MessageView
from desktop.ui.messages import DecodedRows, ForeignBranch, SessionOpened, ShownSession
from desktop.ui.payload_view import PayloadPane
from desktop.ui.permission_dialog import PermissionDialog
from desktop.ui.section_diff_view import SectionDiffView
from desktop.ui.session_browser import SessionBrowser
from desktop.ui.timeline_model import TimelineModel
from desktop.ui.whatif_view import WhatIfView
from tests.cli.helpers import make_session
from tests.ui.conftest import IGNORED_QT_MESSAGES, Harness
from tests.ui.fifo_probe import FifoProbe
from tests.ui.synthetic import assistant_row, user_row


@pytest.fixture
def probe(tmp_path: Path) -> Iterator[FifoProbe]:
    folder = tmp_path / "probe"  # beside, not inside, any workspace a test uses
    folder.mkdir()
    fifo = FifoProbe(folder)
    yield fifo
    fifo.close()


def laid_out(widget: QWidget) -> None:
    """Shown, laid out and painted: where Qt would ask for an image."""
    widget.resize(700, 500)
    widget.show()
    widget.grab()
    QApplication.processEvents()


def tip_shown(text: str, widget: QWidget) -> None:
    """A tooltip shown as Qt shows one on hover (it guesses rich text the same way)."""
    QToolTip.showText(QPoint(10, 10), text, widget)
    QApplication.processEvents()
    QToolTip.hideText()


def as_plain(rich: str) -> str:
    """What a rich text reads as (only our own escaped text reaches here after the fix)."""
    document = QTextDocument()
    document.setHtml(rich)
    return document.toPlainText()


# --- messages ---------------------------------------------------------------------------------

HOSTILE_MARKDOWN = {
    "markdown image": "See ![chart]({path}) here.",
    "reference image": "See ![chart][r] here.\n\n[r]: {path}",
    "css import": "<style>@import url({path});</style>\n\nSome text.",
    "background image": '<div style="background-image: url({path})">Some text.</div>',
    "table background": '<table background="{path}"><tr><td>Some text.</td></tr></table>',
}


@pytest.mark.parametrize("attack", list(HOSTILE_MARKDOWN))
@pytest.mark.parametrize("kind", ["user", "assistant"])
def test_a_message_reads_no_file_it_names(
    view: MessageView, probe: FifoProbe, kind: str, attack: str
) -> None:
    text = HOSTILE_MARKDOWN[attack].format(path=probe.path)
    row = user_row("m1", text) if kind == "user" else assistant_row("m1", text)
    view.show_row(row)
    laid_out(view)
    assert not probe.opened
    shown = view.browser.toPlainText()
    assert "Some text." in shown or "here." in shown
    if "image" in attack and "background" not in attack:
        assert f"[image “chart” not shown: {probe.path}]" in shown  # named, not loaded


def test_the_conversation_reads_no_file_a_reply_names(view: MessageView, probe: FifoProbe) -> None:
    rows = [user_row("u1", "Draw it"), assistant_row("a1", f"Here: ![plot]({probe.path})")]
    view.show_rows(rows, focus=1)
    laid_out(view)
    assert not probe.opened
    assert "[image “plot” not shown:" in view.browser.toPlainText()


def test_an_object_marker_in_a_message_hides_nothing(view: MessageView) -> None:
    """U+FFFC is rich text's marker for an image: a bare one made Qt drop its whole paragraph."""
    view.show_row(assistant_row("a1", "before \ufffc after"))
    assert "before \\ufffc after" in view.browser.toPlainText()


def image_row(data: bytes, mime: str = "image/png") -> dict[str, Any]:
    row = user_row("u1", "")
    row["message"]["content"] = [
        {"type": "text", "text": "look"},
        {"type": "image", "data": base64.b64encode(data).decode(), "mimeType": mime},
    ]
    return row


def test_an_svg_image_block_is_a_labelled_placeholder(view: MessageView, probe: FifoProbe) -> None:
    """An SVG can name other files and Qt's SVG reader loads them: it is not decoded at all."""
    svg = (
        '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="8" height="8">'
        f'<image xlink:href="{probe.path}" width="8" height="8"/></svg>'
    ).encode()
    view.show_row(image_row(svg, "image/svg+xml"))
    laid_out(view)
    assert not probe.opened
    assert "[image not shown: SVG, which can refer to other files]" in view.browser.toPlainText()


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_header(width: int, height: int) -> bytes:
    """A PNG claiming a size, with almost no pixels: the size is read before any pixel is."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", ihdr)
        + _chunk(b"IDAT", zlib.compress(b"\0"))
        + _chunk(b"IEND", b"")
    )


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (png_header(60_000, 60_000), "60,000 × 60,000 pixels, too large to show"),
        (png_header(1, 1) + bytes(MAX_IMAGE_BYTES), "more than the 20,971,520 shown"),
    ],
    ids=["pixels", "bytes"],
)
def test_an_image_block_beyond_the_limits_is_not_decoded(view: MessageView, data: bytes, why: str) -> None:
    view.show_row(image_row(data))
    laid_out(view)
    assert why in view.browser.toPlainText()
    assert "<img" not in view.browser.toHtml()


@pytest.mark.qt_log_ignore(*IGNORED_QT_MESSAGES, r"QTextBrowser: No document for")
def test_a_browser_knows_only_the_resources_it_was_given(qtbot, probe: FifoProbe) -> None:
    """The last line of defence: whatever HTML reaches an ``InertBrowser``, it reads no path."""
    browser = InertBrowser()
    qtbot.addWidget(browser)
    browser.setHtml(f'<p>a <img src="{probe.path}"> b</p>')
    laid_out(browser)
    assert not probe.opened
    assert str(probe.path) in browser.inert_document().refused
    browser.setSource(QUrl.fromLocalFile(str(probe.path)))  # even told to go there, it reads nothing
    laid_out(browser)
    assert not probe.opened


def click_text(qtbot, browser: QTextBrowser, text: str) -> None:
    found = browser.document().find(text)
    assert not found.isNull(), text
    inside = QTextCursor(browser.document())
    inside.setPosition(found.selectionStart() + 2)
    qtbot.mouseClick(browser.viewport(), Qt.MouseButton.LeftButton, pos=browser.cursorRect(inside).center())


@pytest.mark.parametrize("make", [SectionDiffView, ActivationView, MessageView])
def test_a_link_in_a_tab_never_opens_what_it_names(
    qtbot, probe: FifoProbe, make: Callable[[], QWidget]
) -> None:
    """A click on a link to a path emits it for the tab to handle; the browser never goes there."""
    widget = make()
    qtbot.addWidget(widget)
    browser = widget.browser if isinstance(widget, MessageView) else widget
    assert isinstance(browser, QTextBrowser)
    lines = "".join(f"<p>line {n}</p>" for n in range(200))
    browser.setHtml(
        f'<p><a href="{probe.path}">open me</a> <a href="#end">to the end</a></p>{lines}<p><a name="end"></a>the end</p>'
    )
    laid_out(widget)
    click_text(qtbot, browser, "open me")
    QApplication.processEvents()
    assert not probe.opened
    assert browser.source().isEmpty() and "line 199" in browser.toPlainText()
    click_text(qtbot, browser, "to the end")
    assert browser.verticalScrollBar().value() > 0  # an in-page anchor still scrolls


# --- labels, tooltips, dialogs ------------------------------------------------------------------


def hostile_name(probe: FifoProbe) -> str:
    """A file name that is an HTML image of the probe (``/`` cannot be in a name; ``&#47;`` can)."""
    return "<img src=" + str(probe.path).replace("/", "&#47;") + ">.jsonl"


def test_a_session_file_name_is_shown_as_written(
    window: MainWindow, probe: FifoProbe, tmp_path: Path
) -> None:
    name = hostile_name(probe)
    folder = f"<img src={probe.path}>"
    path = str(tmp_path / folder.replace("/", "&#47;") / name)
    window.on_session_opened(SessionOpened(ShownSession(path, f"/home/me/{folder}"), DecodedRows([])))
    laid_out(window)
    assert not probe.opened
    label = window.session_label
    assert label.textFormat() == Qt.TextFormat.PlainText
    assert label.text() == f"{folder.rsplit('/', 1)[-1]} · {name}"
    assert window.windowTitle().startswith(name)
    assert as_plain(label.toolTip()) == path
    tip_shown(label.toolTip(), label)
    window.remember_also([path])
    window._fill_recent()
    (action,) = [a for a in window.recent_menu.actions() if a.text() == name.replace("&", "&&")]  # "&" shown
    assert as_plain(action.toolTip()) == path
    tip_shown(action.toolTip(), window)
    assert not probe.opened


def _whatif(text: str) -> QWidget:
    view = WhatIfView()
    view.show_result({"error": text})
    return view


def _browser_note(text: str) -> QWidget:
    browser = SessionBrowser()
    browser.show_error(text)
    return browser


def _permission_mode(text: str) -> QWidget:
    return PermissionDialog(1, {"tool": "bash", "mode": text, "arguments": {"command": "ls"}})


def _foreign_format(text: str) -> QWidget:
    bar = ForeignBar()
    bar.show_session(ForeignBranch("pi", text, None, []))
    return bar


def _cache_error(text: str) -> QWidget:
    pane = PayloadPane("main")
    pane.show_preview(
        {"route": text, "body": b"{}", "cache": {"error": text}, "previous": b"[]", "previousLabel": text},
        pretty=False,
    )
    return pane


@pytest.mark.parametrize(
    "make",
    [_whatif, _browser_note, _permission_mode, _foreign_format, _cache_error],
    ids=["what-if error", "browser note", "permission mode", "foreign format", "cache error"],
)
def test_labels_show_file_and_tool_text_as_written(
    qtbot, probe: FifoProbe, make: Callable[[str], QWidget]
) -> None:
    text = f"bad <img src={probe.path}> value"
    widget = make(text)
    qtbot.addWidget(widget)
    laid_out(widget)
    assert not probe.opened


def test_item_tooltips_show_paths_as_written(qtbot, probe: FifoProbe) -> None:
    name = hostile_name(probe)
    browser = SessionBrowser()
    qtbot.addWidget(browser)
    folder = f"/home/<img src={probe.path}>"
    browser.show_workspaces(
        [
            {
                "workspace": "w",
                "folder": folder,
                "format": "pi",
                "sessions": [{"title": name, "path": f"{folder}/{name}", "modified": 0, "size": 1}],
            }
        ]
    )
    laid_out(browser)
    top = browser.tree.topLevelItem(0)
    assert top is not None and top.child(0) is not None
    for tip in (top.toolTip(0), top.child(0).toolTip(0)):
        tip_shown(tip, browser.tree)
    assert as_plain(top.toolTip(0)) == folder
    assert not probe.opened


def test_a_row_id_in_the_timeline_tooltip_is_shown_as_written(qtbot, probe: FifoProbe) -> None:
    model = TimelineModel()
    row_id = f"<img src={probe.path}>"
    model.set_rows([user_row(row_id, "")])  # no text: the model's own tooltip is the one shown
    view = QListView()
    qtbot.addWidget(view)
    view.setModel(model)
    laid_out(view)
    tip = model.index(0, 0).data(Qt.ItemDataRole.ToolTipRole)
    tip_shown(tip, view)
    assert not probe.opened
    assert as_plain(tip) == f"user row {row_id}"


def test_the_launchers_refusal_shows_the_text_as_written(qtbot, probe: FifoProbe, monkeypatch) -> None:
    """The no-console launcher's one message box quotes a file's name and contents (design G8)."""
    text = f"{hostile_name(probe)}: line 1: unknown key <img src={probe.path}>"
    seen: list[tuple[str, str, Qt.TextFormat, bool]] = []

    def answer() -> None:
        box = QApplication.activeModalWidget()
        if not isinstance(box, QMessageBox):
            QTimer.singleShot(10, answer)
            return
        box.grab()
        QApplication.processEvents()
        seen.append((box.windowTitle(), box.text(), box.textFormat(), probe.opened))
        box.done(0)

    QTimer.singleShot(0, answer)
    assert launch.refuse_in_window(text) == 2
    assert seen == [("Pi Desktop", text, Qt.TextFormat.PlainText, False)]


def test_a_hostile_session_file_opens_and_reads_nothing_it_names(
    harness: Harness, workspace: Path, probe: FifoProbe
) -> None:
    """End to end: a real file, named and written to name the probe, opened by the real worker,
    every row read in the Message tab and every tab shown."""
    h = harness
    text = f"look ![x]({probe.path}) and <style>@import url({probe.path});</style>"
    path = make_session(workspace, hostile_name(probe), text)
    h.window.open_path(path)
    h.wait_open(path)
    read = []
    for row in range(h.window.shown.rowCount()):
        h.window.view.setCurrentIndex(h.window.shown.index(row, 0))
        laid_out(h.window)
        read.append(h.window.message_view.browser.toPlainText())
    assert not probe.opened
    assert any(f"[image “x” not shown: {probe.path}]" in shown for shown in read), read
    for tab in range(h.window.tabs.count()):
        h.window.tabs.setCurrentIndex(tab)
        laid_out(h.window)
    assert not probe.opened
    assert h.window.session_label.text().endswith(hostile_name(probe))
