"""The composer: a message box with Send and Stop (Ctrl+Enter sends, Esc stops)."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QHBoxLayout, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget

from desktop.ui.inert import named


class _Editor(QPlainTextEdit):
    submit = Signal()
    stop = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        enter = event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        if enter and event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            self.submit.emit()
            return
        if event.key() == Qt.Key.Key_Escape:
            self.stop.emit()
            return
        super().keyPressEvent(event)


class Composer(QWidget):
    send_requested = Signal(str)
    stop_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("composer")
        self.editor = named(_Editor(), "composerEditor")
        self.editor.setPlaceholderText("Ask Pi… (Ctrl+Enter to send, Esc to stop)")
        self.editor.setTabChangesFocus(True)
        self.editor.setMaximumHeight(110)
        self.send_button = named(QPushButton("Send"), "sendButton", "Send (Ctrl+Enter)")
        self.send_button.setDefault(True)
        self.stop_button = named(QPushButton("Stop"), "stopButton", "Stop the running turn (Esc)")
        self.stop_button.setEnabled(False)
        buttons = QVBoxLayout()
        buttons.addWidget(self.send_button)
        buttons.addWidget(self.stop_button)
        buttons.addStretch(1)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.editor, 1)
        layout.addLayout(buttons)
        self.send_button.clicked.connect(self.submit)
        self.editor.submit.connect(self.submit)
        self.stop_button.clicked.connect(self.stop_requested)
        self.editor.stop.connect(self.stop_requested)
        self._busy = False

    def submit(self) -> None:
        text = self.editor.toPlainText().strip()
        if not text or self._busy:
            return
        self.editor.clear()
        self.send_requested.emit(text)

    def set_busy(self, busy: bool) -> None:
        self._busy = busy
        self.send_button.setEnabled(not busy)
        self.stop_button.setEnabled(busy)
