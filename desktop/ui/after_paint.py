"""Run something once a widget has painted (design G9).

The worker waits for the window to paint a long session's index before it reads the journal
again, so the first paint does not share the GIL with the worker's parse.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QWidget


class AfterPaint(QObject):
    """Calls ``then`` once ``widget`` has painted (at once if it is not visible)."""

    def __init__(self, widget: QWidget, then: Callable[[], None]) -> None:
        super().__init__(widget)
        self._then = then
        if not widget.isVisible():
            then()
            self.deleteLater()
            return
        widget.installEventFilter(self)
        widget.update()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            watched.removeEventFilter(self)
            QTimer.singleShot(0, self._then)  # after this paint is done
            self.deleteLater()
        return False
