"""Background work next to the feature that needs it (in the spirit of Anki's ``QueryOp``).

A feature (the accounts dialog, the payload tab's Save, the window's settings) does not get a
slot on the worker of its own. It builds an ``Op``: a function that runs on the worker thread
with the worker (its open session, runtime and writer), and a callback that receives the
result back on the GUI thread. An op that ``changes_session`` has the worker republish what the
inspector shows (status, previews, activation) afterwards, like Anki's ``CollectionOp``. The result crosses the threads as one immutable
object through ``Signal(object)``: nothing is copied on the way.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from PySide6.QtCore import QObject, Qt, Signal, Slot

if TYPE_CHECKING:
    from desktop.ui.worker import SessionWorker

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True)
class Op(Generic[T]):
    """One piece of background work and what the GUI does with its outcome."""

    work: Callable[[SessionWorker], T]
    done: Callable[[T], None] | None = None
    failed: Callable[[str], None] | None = None
    changes_session: bool = False
    label: str = ""


@dataclass(frozen=True)
class OpOutcome:
    op: Op[Any]
    result: Any = None
    error: str | None = None


def run_op(worker: SessionWorker, op: Op[Any]) -> OpOutcome:
    """On the worker thread: run ``op`` and turn a failure into a one-line message."""
    try:
        return OpOutcome(op, op.work(worker))
    except Exception as exc:
        log.exception("%s failed", op.label or "a background operation")
        return OpOutcome(op, error=f"{op.label + ': ' if op.label else ''}{exc}")


class WorkerOps(QObject):
    """The GUI side: submit ops to the worker, receive their outcomes on the GUI thread."""

    _submit = Signal(object)
    failure = Signal(str)
    """An op without its own ``failed`` callback failed: one line for the status bar."""

    def __init__(self, worker: SessionWorker, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._submit.connect(worker.run_op, Qt.ConnectionType.QueuedConnection)
        worker.op_finished.connect(self._finished, Qt.ConnectionType.QueuedConnection)

    def query(
        self,
        work: Callable[[SessionWorker], T],
        done: Callable[[T], None] | None = None,
        *,
        failed: Callable[[str], None] | None = None,
        label: str = "",
        changes_session: bool = False,
    ) -> None:
        """Run ``work`` on the worker thread; ``done(result)`` then runs on the GUI thread. Work
        that ``changes_session`` has the inspector refreshed after it."""
        self._submit.emit(Op(work, done, failed, changes_session, label))

    @Slot(object)
    def _finished(self, outcome: OpOutcome) -> None:
        if outcome.error is None:
            if outcome.op.done is not None:
                outcome.op.done(outcome.result)
        elif outcome.op.failed is not None:
            outcome.op.failed(outcome.error)
        else:
            self.failure.emit(outcome.error)
