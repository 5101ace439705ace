"""The window's status bar, whose messages never run under the session label (design G16).

Qt's own status bar paints a temporary message clipped at the first permanent widget, cut in
the middle of a word with no way to read the rest. This one paints the message elided ("…")
in the room left of the permanent widgets and keeps the whole message in its tooltip, so a
long "Stopped (error): …" or a read-only notice is never lost and never overlaps the session
label or the context meter.
"""

from __future__ import annotations

from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QStatusBar, QStyle, QStyleOption, QWidget

from desktop.ui.inert import plain_tip


class StatusLine(QStatusBar):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("statusLine")
        self.messageChanged.connect(self._on_message)

    def message_rect(self) -> QRect:
        """Where the message may be painted: from the left edge to the first permanent widget."""
        right = self.width() - 12
        permanent = [
            child
            for child in self.findChildren(QWidget, options=Qt.FindChildOption.FindDirectChildrenOnly)
            if child.isVisible() and child.objectName() != "qt_statusbar_sizegrip"
        ]
        lefts = [child.x() for child in permanent if child.x() > 0]
        if lefts:
            right = min(right, min(lefts) - 8)
        return QRect(6, 0, max(0, right - 6), self.height())

    def shown_message(self) -> str:
        """The message as painted: whole when it fits, elided at its end when it does not."""
        text = self.currentMessage()
        return self.fontMetrics().elidedText(text, Qt.TextElideMode.ElideRight, self.message_rect().width())

    def _on_message(self, text: str) -> None:
        self.setToolTip(plain_tip(text) if text else "")
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        text = self.currentMessage()
        if not text:
            super().paintEvent(event)
            return
        painter = QPainter(self)
        option = QStyleOption()
        option.initFrom(self)
        self.style().drawPrimitive(QStyle.PrimitiveElement.PE_PanelStatusBar, option, painter, self)
        painter.setPen(self.palette().color(self.foregroundRole()))
        painter.drawText(
            self.message_rect(),
            int(Qt.AlignmentFlag.AlignLeading | Qt.AlignmentFlag.AlignVCenter | Qt.TextFlag.TextSingleLine),
            self.shown_message(),
        )
