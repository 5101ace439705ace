"""Run something once a widget has painted (design G9).

The worker waits for the window to paint a long session (its index, then the opened session)
before it runs Python again. A repaint of the timeline calls Python for every row it paints;
while the worker runs Python, each of those calls waits for the GIL, so a repaint that takes
milliseconds alone would hold the event loop for a tenth of a second or more.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QWidget


class AfterPaint(QObject):
    """Calls ``then`` once ``widget`` has painted (at once if the widget is not visible)."""

    def __init__(self, widget: QWidget, then: Callable[[], None]) -> None:
        super().__init__(widget)
        self._then = then
        if not widget.isVisible():
            self._finish()
            return
        widget.installEventFilter(self)
        widget.update()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            watched.removeEventFilter(self)
            QTimer.singleShot(0, self._finish)  # after this paint is done
        return False

    def _finish(self) -> None:
        self._then()
        self.deleteLater()
