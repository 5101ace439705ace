"""Background work next to its feature: ``client.ops`` runs it on the worker thread and
answers on the GUI thread; a failure becomes one line in the status bar, never a traceback."""

from __future__ import annotations

import threading
from typing import Any

from tests.ui.conftest import Harness


def test_ops_run_on_the_worker_and_answer_on_the_gui_thread(harness: Harness) -> None:
    h = harness
    seen: dict[str, Any] = {}

    def work(worker: Any) -> str:
        seen["work"] = threading.get_ident()
        return str(worker.writer.path)

    def done(path: str) -> None:
        seen["done"] = threading.get_ident()
        seen["path"] = path

    h.client.ops.query(work, done)
    h.qtbot.waitUntil(lambda: "path" in seen, timeout=10_000)
    assert seen["work"] == h.worker.thread_id != threading.get_ident()
    assert seen["done"] == threading.get_ident()
    assert seen["path"] == h.window.session.path

    def broken(_worker: Any) -> None:
        raise OSError("the disk is full")

    h.client.ops.query(broken, label="saving the notes")
    h.qtbot.waitUntil(lambda: "disk is full" in h.window.statusBar().currentMessage(), timeout=10_000)
    assert h.window.statusBar().currentMessage() == "saving the notes: the disk is full"
