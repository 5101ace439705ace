"""The wait before a retry, counted down above the panes with a Cancel (design W4).

A rate limit or an overloaded provider makes the client wait (``Retry-After``, a reset
header or a backoff) before it sends the request again. Without this the window would just
look stuck for those seconds. The countdown runs on a ``QTimer`` in the window's own event
loop; Cancel stops the turn the way the Stop button does (the worker's cancel event ends the
wait at once).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QPushButton, QWidget

from desktop.ui.banner import notice_style, printable
from desktop.ui.inert import plain_label
from desktop.ui.theme import is_dark


class RetryCountdown(QFrame):
    """``Retrying in 12 s (retry 1 of 2): <the provider's reason>`` and a Cancel button."""

    cancelled = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("retryCountdown")
        self.setStyleSheet(notice_style("QFrame", self.objectName(), "warning", is_dark(self.palette())))
        self.label = plain_label(name="retryText", wrap=True)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop waiting and stop the turn")
        self.cancel_button.clicked.connect(self._cancel)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 4, 4)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.cancel_button, 0, Qt.AlignmentFlag.AlignTop)
        self._timer = QTimer(self)
        self._timer.setInterval(250)
        self._timer.timeout.connect(self._tick)
        self._until = 0.0
        self._what = ""
        self.setVisible(False)

    def start(self, wait: Mapping[str, Any]) -> None:
        """Show the wait a ``retry_wait`` event announced and count it down."""
        seconds = wait.get("seconds")
        self._until = time.monotonic() + (float(seconds) if isinstance(seconds, int | float) else 0.0)
        retry, retries = wait.get("retry"), wait.get("retries")
        self._what = f"(retry {retry} of {retries})" if retry and retries else "(retry)"
        self._reason = printable(str(wait.get("reason") or ""))
        self._tick()
        self.setVisible(True)
        self._timer.start()

    def finish(self) -> None:
        """The wait or the turn is over."""
        self._timer.stop()
        self.setVisible(False)

    @property
    def text(self) -> str:
        return self.label.text()

    def _tick(self) -> None:
        left = math.ceil(max(0.0, self._until - time.monotonic()))
        when = f"Retrying in {left} s" if left else "Retrying now"
        self.label.setText(f"{when} {self._what}: {self._reason}")
        if not left:
            self._timer.stop()

    def _cancel(self) -> None:
        self.finish()
        self.cancelled.emit()
