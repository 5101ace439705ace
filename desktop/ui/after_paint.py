"""Run something once a widget has painted and its layout has settled (design G9).

The worker waits for the window to paint a long session's index, and for the list view to
finish laying it out in batches, before it reads the journal again. Laying out calls the
Python item model once per row (Qt's ``index()`` asks ``rowCount()``); while the worker parses,
each of those calls waits for the GIL, so a layout that takes milliseconds alone would hold the
event loop for a second or more.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QWidget

SETTLED_TICKS = 3
"""Event-loop turns in a row with the same ``settled()`` value that count as settled."""


class AfterPaint(QObject):
    """Calls ``then`` once ``widget`` has painted and ``settled()`` stopped changing (at once if
    the widget is not visible)."""

    def __init__(
        self, widget: QWidget, then: Callable[[], None], settled: Callable[[], object] | None = None
    ) -> None:
        super().__init__(widget)
        self._then = then
        self._settled = settled
        self._last: object = None
        self._same = 0
        self._timer = QTimer(self)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._check)
        if not widget.isVisible():
            self._finish()
            return
        widget.installEventFilter(self)
        widget.update()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            watched.removeEventFilter(self)
            self._timer.start()  # after this paint is done
        return False

    def _check(self) -> None:
        if self._settled is not None:
            value = self._settled()
            self._same = self._same + 1 if value == self._last else 0
            self._last = value
            if self._same < SETTLED_TICKS:
                return
        self._finish()

    def _finish(self) -> None:
        self._timer.stop()
        self._then()
        self.deleteLater()
