"""The context-window meter in the status bar: how full the model's context is (design X7).

The figure is the runtime's own estimate of the next request's input (``context_tokens``: the
last reported usage plus what came after it), measured on the worker after a session opens and
after every turn, against the route's context window from the catalog. Automatic compaction
starts before the window is full, so the bar turns amber past three quarters.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QProgressBar, QWidget

if TYPE_CHECKING:
    from desktop.ui.ops import WorkerOps
    from desktop.ui.worker import SessionWorker


def measure(worker: SessionWorker) -> tuple[int, int] | None:
    """On the worker: (estimated context tokens, the route's context window), or None."""
    if worker.runtime is None or worker.resolved is None:
        return None
    window = worker.resolved.model.get("contextWindow")
    if not isinstance(window, int) or window <= 0:
        return None
    return worker.runtime.context_tokens(), window


def short(tokens: int) -> str:
    return f"{tokens / 1000:.1f}k" if tokens < 10_000 else f"{tokens // 1000:,}k"


class ContextMeter(QProgressBar):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("contextMeter")
        self.setAccessibleName("Context window used")
        self.setRange(0, 1000)
        self.setTextVisible(True)
        self.setFixedWidth(190)
        self.setFormat("context: —")
        self.setValue(0)
        self.figures: tuple[int, int] | None = None

    def refresh(self, ops: WorkerOps) -> None:
        ops.query(measure, self.show_figures, label="measuring the context")

    def show_figures(self, figures: tuple[int, int] | None) -> None:
        self.figures = figures
        if figures is None:
            self.setFormat("context: —")
            self.setValue(0)
            self.setToolTip("No session on a route with a known context window.")
            return
        used, window = figures
        share = min(1.0, used / window)
        self.setValue(round(share * 1000))
        self.setFormat(f"context {short(used)} of {short(window)} ({share:.0%})")
        self.setStyleSheet("QProgressBar::chunk { background: #d97706; }" if share > 0.75 else "")
        self.setToolTip(
            f"About {used:,} tokens of the model's {window:,}-token context window are in use: what "
            "the next request would carry. Compaction summarizes older turns before it fills."
        )
