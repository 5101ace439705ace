"""The Payload tab: the next request, byte-exact, with the provider's cache view (G4, P5, P6).

The worker builds the session's one next request (the runtime's, with the composer's draft)
and sends a plain dict: the exact body bytes, redacted headers, an indented rendering, the
cache prediction in the provider's terms (cached and uncached input tokens, cost, where the
cached prefix ends in the body and why), after a request the prediction checked against the
usage the provider reported, and, as a secondary "what changed since the last request" view,
the previous body on the route and where the bytes first differ. This tab only shows them:
the raw view is the exact bytes, the readable view the same tokens with whitespace added.
Copy puts the exact bytes on the clipboard; Save hands them to the worker.

A preview is true only of the state it was computed from. From the moment the worker says the
session changed (``SessionWorker.previews_outdated``: rows appended, route, fallback, mode,
draft, an open) or another route is asked for, a pane is marked out of date: a notice above
it, the old request dimmed, Copy, Save and the jump disabled, until the worker's next preview
for it arrives (design G4). The worker sends one for every such change while the tab is shown,
and on its next showing otherwise; a preview it cannot build arrives as an error, so the mark
never stays.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from html import escape
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QFontDatabase,
    QGuiApplication,
    QHideEvent,
    QPainter,
    QPaintEvent,
    QResizeEvent,
    QShowEvent,
    QTextCharFormat,
    QTextCursor,
    QTextFormat,
)
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from desktop.pi.cache_retention import Retention, clock
from desktop.pi.money import format_cost
from desktop.ui.banner import notice_style
from desktop.ui.curl_text import curl_command
from desktop.ui.glossary import tooltip
from desktop.ui.inert import named, plain_label
from desktop.ui.json_highlighter import MAX_CHARS, JsonHighlighter
from desktop.ui.theme import is_dark

#: Below this width the comparison goes under the main request instead of beside it.
SIDE_BY_SIDE_WIDTH = 900

CURRENT_ROUTE = ""
"""Route key meaning "the session's current route"."""

OUTDATED = (
    "Updating: the session changed since this request was computed; Copy and Save wait for the new one…"
)
COMPUTING = "Computing the next request…"
VEIL_ALPHA = 150
"""How much the veil over an out-of-date request hides of it (0-255)."""


def describe_changes(preview: Mapping[str, Any]) -> str:
    """The secondary view: what changed in the body since the last request on this route.

    Only where the bytes first differ and how much is new: a byte prefix of the JSON body is
    not what a provider caches (its own order and token units decide that; see
    ``describe_cache``), so no "bytes match" share is given as if it were a cache figure.
    """
    body: bytes = preview.get("body") or b""
    previous = preview.get("previous")
    label = preview.get("previousLabel", "the previous request")
    if previous is None:
        return "What changed since the last request: there is no earlier request on this route."
    shared = int(preview.get("breakBytes") or 0)
    if shared >= len(body) and len(previous) <= len(body):
        return f"What changed since the last request ({label}): nothing, the body is identical."
    line = preview.get("breakLine")
    where = f" from line {line} of the readable view" if line else ""
    tail = int(preview.get("tailBytes") or 0)
    changed = len(body) - shared - tail
    return (
        f"What changed since the last request ({label}): the body differs{where}; "
        f"{changed:,} bytes are new or changed"
        + (f", the last {tail:,} bytes (fields after the messages) are unchanged." if tail else ".")
    )


def describe_clock(cache: Mapping[str, Any], now_ms: int) -> str:
    """The countdown line, re-derived from the stored last use and retention (design P9):
    "cache warm · 3:12 left · next send $0.0049 now, $0.0394 after expiry"."""
    info = cache.get("clock")
    if not isinstance(info, Mapping):
        return ""
    last, ttl = info.get("lastUseMs"), info.get("retentionSeconds")
    if isinstance(last, int) and isinstance(ttl, int) and info.get("state") in ("warm", "expired"):
        state = clock([last], Retention(str(info.get("retention", "")), ttl, ""), now_ms)
        label = state.label()
    else:
        label = str(info.get("label") or "")
        if info.get("state") == "unknown":
            label += f" ({info.get('note', '')})"
    cost = cache.get("nextSend")
    if isinstance(cost, Mapping) and isinstance(cost.get("now"), int | float):
        now, after = float(cost["now"]), float(cost.get("afterExpiry") or 0.0)
        if label.startswith("cache warm ·"):
            label += f" · next send {format_cost(now)} now, {format_cost(after)} after expiry"
        else:
            label += f" · next send {format_cost(after)}"
    return label


def describe_cache(preview: Mapping[str, Any]) -> str:
    """The headline: the provider's predicted cache use for this request, in its own terms (P6)."""
    cache = preview.get("cache")
    if not isinstance(cache, Mapping):
        return "No cache prediction for this route."
    if cache.get("error"):
        return f"No cache prediction: {escape(str(cache['error']))}"
    total = int(cache.get("total") or 0)
    cached = int(cache.get("cached") or 0)
    uncached = int(cache.get("uncached") or total - cached)
    context = cache.get("context")
    if isinstance(context, int) and not isinstance(context, bool) and context > 0:
        # The session's one context figure (design G14): what Compact and the context meter
        # say; the cached part as the cache rule predicts it, the rest uncached.
        total = context
        cached = min(cached, total)
        uncached = total - cached
    share = cached / total if total else 0.0
    written = min(int(cache.get("written") or 0), uncached)
    cost = cache.get("cost")
    parts = [
        f"<b>Predicted: {cached:,} of {total:,} input tokens cached ({share:.0%}), {uncached:,} uncached</b>"
        + (f" ({written:,} of them written to the cache)" if written else "")
        + (f"; input cost {format_cost(float(cost))}" if isinstance(cost, int | float) else "")
        + "."
    ]
    why = cache.get("why")
    if why:
        parts.append(escape(str(why)))
    units = cache.get("units")
    if isinstance(units, Mapping) and units.get("note"):
        parts.append(f"<span style='color: gray'>Token counts {escape(str(units['note']))}.</span>")
    compared = cache.get("comparison")
    if isinstance(compared, Mapping) and compared.get("text"):
        parts.append(f"<span style='color: gray'>{escape(str(compared['text']))}</span>")
    if cache.get("rule"):
        parts.append(f"<span style='color: gray'>{escape(str(cache['rule']))}</span>")
    check = preview.get("check")
    if isinstance(check, Mapping) and check.get("text"):
        color = "#16a34a" if check.get("ok") else "#dc2626"
        parts.append(f"<span style='color: {color}'>{escape(str(check['text']))}</span>")
    return "<br>".join(parts)


def _selection(
    cursor: QTextCursor, background: str, foreground: str = "", *, full_width: bool = False
) -> QTextEdit.ExtraSelection:
    fmt = QTextCharFormat()
    fmt.setBackground(QColor(background))
    if foreground:
        fmt.setForeground(QColor(foreground))
    fmt.setProperty(QTextFormat.Property.FullWidthSelection, full_width)
    selection = QTextEdit.ExtraSelection()
    selection.format = fmt  # type: ignore[attr-defined]
    selection.cursor = cursor  # type: ignore[attr-defined]
    return selection


class Veil(QWidget):
    """A translucent sheet of the base colour over its parent, dimming all of it (highlighted
    JSON included) while letting the mouse through, so the old request can still be scrolled.
    An overlay, not a ``QGraphicsOpacityEffect``: scroll areas under an effect leave ghosts."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.over = parent
        parent.installEventFilter(self)
        self.hide()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.over and event.type() == QEvent.Type.Resize:
            self.setGeometry(self.over.rect())
        return False

    def paintEvent(self, event: QPaintEvent) -> None:
        color = QColor(self.palette().color(self.palette().ColorRole.Base))
        color.setAlpha(VEIL_ALPHA)
        QPainter(self).fillRect(self.rect(), color)


class PayloadPane(QWidget):
    """One request: a summary line, redacted headers and the body with the break marked."""

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.preview: dict[str, Any] = {}
        self.pretty = True
        #: The preview shown no longer describes the next request; a new one is on its way.
        self.stale = False
        self.notice = plain_label(name=f"{name}Notice", wrap=True)
        self.notice.hide()
        self.title = named(QLabel(), f"{name}Title")
        self.title.setWordWrap(True)
        self.title.setTextFormat(Qt.TextFormat.RichText)  # built from escaped pieces (design G11)
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.cache = named(QLabel(), f"{name}Cache", tooltip("cache break", "cached tokens"))
        self.cache.setWordWrap(True)
        self.cache.setTextFormat(Qt.TextFormat.RichText)
        #: "cache warm · 3:12 left": ticks on the GUI thread from the stored timestamps (P9).
        self.cache_clock = plain_label(name=f"{name}CacheClock")
        self.now_ms: Callable[[], int] = lambda: time.time_ns() // 1_000_000
        self.clock_timer = QTimer(self)
        self.clock_timer.setInterval(1000)
        self.clock_timer.timeout.connect(self.tick_clock)
        self.changes = plain_label(name=f"{name}Changes", wrap=True)  # names the previous request's route
        #: Which mark the body shows: the end of the provider's cached prefix (the default) or,
        #: as the secondary view, where the body first differs from the last request.
        self.mark_changes = False
        self.headers = named(QPlainTextEdit(), f"{name}Headers")
        self.headers.setReadOnly(True)
        lines = self.headers.fontMetrics().lineSpacing()
        self.headers.setFixedHeight(lines * 4 + 12)
        self.body = named(QPlainTextEdit(), f"{name}Body")
        self.body.setReadOnly(True)
        self.body.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        fixed = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.body.setFont(fixed)
        self.headers.setFont(fixed)
        self.highlighter: JsonHighlighter | None = None
        # Everything but the notice, dimmed as one while it is out of date.
        self.content = QWidget()
        content = QVBoxLayout(self.content)
        content.setContentsMargins(0, 0, 0, 0)
        content.addWidget(self.title)
        content.addWidget(self.cache)
        content.addWidget(self.cache_clock)
        content.addWidget(self.changes)
        content.addWidget(self.headers)
        content.addWidget(self.body, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.notice)
        layout.addWidget(self.content, 1)
        self.veil = Veil(self.content)

    @property
    def body_bytes(self) -> bytes:
        return bytes(self.preview.get("body") or b"")

    def set_stale(self, stale: bool) -> None:
        """Mark the shown request as out of date (a new one is coming) or current again."""
        self.stale = stale
        if stale:
            name = self.notice.objectName()
            self.notice.setStyleSheet(
                notice_style("QLabel", name, "info", is_dark(self.palette()))
                + f" QLabel#{name} {{ padding: 3px 6px; }}"
            )
            self.notice.setText(OUTDATED if self.preview else COMPUTING)
        self.notice.setVisible(stale)
        self.veil.setGeometry(self.content.rect())
        self.veil.setVisible(stale)
        self.veil.raise_()

    def tick_clock(self) -> None:
        """Re-derive the countdown from the shown preview's last use (no worker round trip)."""
        cache = self.preview.get("cache")
        text = describe_clock(cache, self.now_ms()) if isinstance(cache, Mapping) else ""
        self.cache_clock.setText(text)
        self.cache_clock.setVisible(bool(text))
        ticking = text.startswith("cache warm ·")
        if ticking and not self.clock_timer.isActive():
            self.clock_timer.start()
        elif not ticking:
            self.clock_timer.stop()

    def show_preview(self, preview: Mapping[str, Any], pretty: bool) -> None:
        self.preview = dict(preview)
        self.pretty = pretty
        error = preview.get("error")
        if error:
            self.title.setText(f"<b>{escape(str(preview.get('route', '')))}</b>")
            self.cache.setText("")
            self.tick_clock()
            self.changes.setText("")
            self.headers.setPlainText("")
            self._set_text(f"Cannot project this request:\n\n{error}", highlight=False)
            return
        body = self.body_bytes
        self.title.setText(
            f"<b>{escape(str(preview.get('route', '')))}</b> · {escape(str(preview.get('api', '')))} · "
            f"<code>{escape(str(preview.get('method', 'POST')))} {escape(str(preview.get('url', '')))}</code>"
            f" · {len(body):,} bytes"
        )
        self.cache.setText(describe_cache(preview))
        self.tick_clock()
        self.changes.setText(describe_changes(preview))
        headers = preview.get("headers") or {}
        self.headers.setPlainText("\n".join(f"{k}: {v}" for k, v in headers.items()))
        text = str(preview.get("pretty") or "") if pretty else body.decode("utf-8", errors="replace")
        self._set_text(text, highlight=len(text) <= MAX_CHARS)
        self.mark_break()

    def _set_text(self, text: str, highlight: bool) -> None:
        if self.highlighter is not None:
            self.highlighter.setDocument(None)  # type: ignore[arg-type]
            self.highlighter = None
        self.body.setPlainText(text)
        if highlight:
            self.highlighter = JsonHighlighter(self.body.document(), is_dark(self.palette()))

    def set_mark_changes(self, on: bool) -> None:
        self.mark_changes = on
        if self.preview and not self.preview.get("error"):
            self.mark_break()

    def break_position(self) -> int | None:
        """Where the mark goes: the end of the cached prefix, or the first changed byte."""
        if self.preview.get("error"):
            return None
        if self.mark_changes:
            if self.preview.get("previous") is None:
                return None
            value = self.preview.get("breakPretty" if self.pretty else "breakChars")
        else:
            cache = self.preview.get("cache")
            if not isinstance(cache, Mapping):
                return None
            value = cache.get("endPretty" if self.pretty else "endChars")
        if not isinstance(value, int) or value >= len(self.body.toPlainText()):
            return None
        return value

    def mark_break(self) -> None:
        position = self.break_position()
        if position is None:
            self.body.setExtraSelections([])
            return
        dark = is_dark(self.palette())
        line = QTextCursor(self.body.document())
        line.setPosition(position)
        span = QTextCursor(self.body.document())
        tint_start = position
        cache = self.preview.get("cache")
        end: object = None
        if self.mark_changes:
            end = self.preview.get("changedEndPretty" if self.pretty else "changedEndChars")
        elif isinstance(cache, Mapping):  # tint the uncached parts, from where they start
            end = cache.get("uncachedEndPretty" if self.pretty else "uncachedEndChars")
            start = cache.get("uncachedStartPretty" if self.pretty else "uncachedStartChars")
            if isinstance(start, int) and isinstance(end, int) and start < end:
                tint_start = start
        span.setPosition(tint_start)
        if isinstance(end, int) and tint_start < end <= len(self.body.toPlainText()):
            span.setPosition(end, QTextCursor.MoveMode.KeepAnchor)  # only what is new or changed
        else:
            span.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
        point = QTextCursor(self.body.document())
        point.setPosition(position)
        point.movePosition(QTextCursor.MoveOperation.NextCharacter, QTextCursor.MoveMode.KeepAnchor)
        self.body.setExtraSelections(
            [
                _selection(span, "#3a3320" if dark else "#fffbe6"),
                _selection(line, "#5c4813" if dark else "#fff1b8", full_width=True),
                _selection(point, "#d97706", "#ffffff"),
            ]
        )

    def jump_to_break(self) -> bool:
        position = None if self.stale else self.break_position()
        if position is None:
            return False
        cursor = self.body.textCursor()
        cursor.setPosition(position)
        self.body.setTextCursor(cursor)
        self.body.centerCursor()
        return True


class PayloadView(QWidget):
    """Route switcher, optional side-by-side comparison, pretty/raw, copy, save."""

    preview_requested = Signal(str, str)
    """(slot, route key) — slot is "main" or "compare"; an empty key is the current route."""
    preview_dropped = Signal(str)
    """The slot's pane is hidden: no more previews for it (each costs seconds on a long session)."""
    #: True when the tab comes on screen, False when it leaves: previews are computed only while shown.
    shown_changed = Signal(bool)
    save_requested = Signal(str, bytes)
    main_updated = Signal(dict)
    """The main pane now shows this preview (and is no longer out of date)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("payloadView")
        self.route_combo = named(QComboBox(), "payloadRoute", "Which route's next request to show")
        self.compare_combo = named(
            QComboBox(), "payloadCompare", "Show another route's next request side by side"
        )
        for combo in (self.route_combo, self.compare_combo):
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(14)
        self.pretty_box = QCheckBox("Readable")
        self.pretty_box.setChecked(True)
        self.pretty_box.setToolTip("Indented view; unchecked shows the exact bytes that are sent")
        self.copy_button = QPushButton("Copy")
        self.copy_button.setToolTip("Copy the exact body bytes")
        self.save_button = QPushButton("Save…")
        self.save_button.setToolTip("Save the exact body bytes to a file")
        self.curl_button = named(
            QPushButton("Copy as cURL"),
            "copyCurl",
            "Copy this request as a curl command: the URL, the headers with credentials shown as "
            "<redacted> (put your own key in), and the exact body",
        )
        self.jump_button = QPushButton("Go to cache end")
        self.jump_button.setToolTip("Scroll to where the provider's cached prefix is predicted to end")
        self.changes_box = named(
            QCheckBox("Changes"),
            "payloadChangesMark",
            "Secondary view: mark where the body first differs from the last request on this route "
            "(a byte diff, not what the provider caches)",
        )
        self.main = PayloadPane("payloadMain")
        self.compare = PayloadPane("payloadCompare")
        self.compare.hide()
        # Two rows, so the tab fits a 1280-pixel window beside the timeline (design G7).
        bar = QHBoxLayout()
        route_label = QLabel("&Route:")
        route_label.setBuddy(self.route_combo)
        compare_label = QLabel("Com&pare with:")
        compare_label.setBuddy(self.compare_combo)
        bar.addWidget(route_label)
        bar.addWidget(self.route_combo, 2)
        bar.addWidget(compare_label)
        bar.addWidget(self.compare_combo, 2)
        # The view options on a second row, so the tab stays narrow enough beside the timeline.
        options = QHBoxLayout()
        options.addWidget(self.pretty_box)
        options.addWidget(self.changes_box)
        options.addStretch(1)
        options.addWidget(self.jump_button)
        options.addWidget(self.copy_button)
        options.addWidget(self.curl_button)
        options.addWidget(self.save_button)
        self.splitter = named(QSplitter(Qt.Orientation.Horizontal), "payloadSplitter")
        self.splitter.addWidget(self.main)
        self.splitter.addWidget(self.compare)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(bar)
        layout.addLayout(options)
        layout.addWidget(self.splitter, 1)
        self.route_combo.activated.connect(lambda _i: self.request("main"))
        self.compare_combo.activated.connect(lambda _i: self._compare_changed())
        self.pretty_box.toggled.connect(self._pretty_toggled)
        self.copy_button.clicked.connect(self.copy)
        self.curl_button.clicked.connect(self.copy_curl)
        self.save_button.clicked.connect(self.save)
        self.jump_button.clicked.connect(self.main.jump_to_break)
        self.changes_box.toggled.connect(self._changes_toggled)
        self._update_actions()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.shown_changed.emit(True)

    def hideEvent(self, event: QHideEvent) -> None:
        super().hideEvent(event)
        self.shown_changed.emit(False)

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Side by side when there is room, one above the other when narrow (design G7)."""
        super().resizeEvent(event)
        wide = event.size().width() >= SIDE_BY_SIDE_WIDTH
        self.splitter.setOrientation(Qt.Orientation.Horizontal if wide else Qt.Orientation.Vertical)

    def set_routes(self, routes: list[tuple[str, str]]) -> None:
        """(key, label) pairs for the switchers; the first entry stays "current route"."""
        for combo, first in ((self.route_combo, "Current route"), (self.compare_combo, "No comparison")):
            selected = combo.currentData()
            combo.blockSignals(True)
            combo.clear()
            combo.addItem(first, CURRENT_ROUTE if combo is self.route_combo else None)
            for key, label in routes:
                combo.addItem(label, key)
            position = combo.findData(selected)
            combo.setCurrentIndex(max(0, position))
            combo.blockSignals(False)

    def request(self, slot: str) -> None:
        combo = self.route_combo if slot == "main" else self.compare_combo
        key = combo.currentData()
        if key is None:
            return
        (self.main if slot == "main" else self.compare).set_stale(True)  # another route's is coming
        self._update_actions()
        self.preview_requested.emit(slot, str(key))

    def mark_stale(self) -> None:
        """The worker's ``previews_outdated``: the session changed, new previews are coming."""
        for pane in (self.main, self.compare):
            pane.set_stale(True)
        self._update_actions()

    def _update_actions(self) -> None:
        """Copy, Save and the jump act on the main pane's request only while it is current."""
        current = not self.main.stale and bool(self.main.body_bytes)
        self.copy_button.setEnabled(current)
        self.curl_button.setEnabled(current)
        self.save_button.setEnabled(current)
        self.jump_button.setEnabled(current and self.main.break_position() is not None)

    def _compare_changed(self) -> None:
        if self.compare_combo.currentData() is None:
            self.compare.hide()
            self.preview_dropped.emit("compare")
            return
        self.compare.show()
        self.request("compare")

    def show_preview(self, slot: str, preview: Mapping[str, Any]) -> None:
        pane = self.main if slot == "main" else self.compare
        pane.show_preview(preview, self.pretty_box.isChecked())
        pane.set_stale(False)
        self._update_actions()
        if pane is self.main:
            self.main_updated.emit(dict(preview))

    def _changes_toggled(self, on: bool) -> None:
        for pane in (self.main, self.compare):
            pane.set_mark_changes(on)
        self.jump_button.setText("Go to first change" if on else "Go to cache end")
        self._update_actions()

    def _pretty_toggled(self, pretty: bool) -> None:
        for pane in (self.main, self.compare):
            if pane.preview:
                pane.show_preview(pane.preview, pretty)

    def copy(self) -> None:
        if self.main.stale or not self.main.body_bytes:
            return
        QGuiApplication.clipboard().setText(self.main.body_bytes.decode("utf-8", errors="replace"))

    def copy_curl(self) -> None:
        """The main pane's request as a curl command, credentials redacted."""
        if self.main.stale or not self.main.body_bytes:
            return
        QGuiApplication.clipboard().setText(curl_command(self.main.preview))

    def save(self) -> None:
        data = b"" if self.main.stale else self.main.body_bytes
        if not data:
            return
        # The bytes shown when Save was pressed, even if a new request arrives during the dialog.
        path, _ = QFileDialog.getSaveFileName(self, "Save request body", "request.json", "JSON (*.json)")
        if path:
            self.save_requested.emit(path, data)
