"""File → Export: the open session as Markdown or a standalone HTML page (design X6).

The window asks where; the worker builds the document from the session it holds (a Desktop
journal's rows, or the foreign session's branch on screen) and writes the file, so the GUI
thread neither reads the session nor writes anything (design G10).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QFileDialog, QWidget

if TYPE_CHECKING:
    from desktop.ui.ops import WorkerOps
    from desktop.ui.worker import SessionWorker

FILTERS = {"HTML page (*.html)": "html", "Markdown (*.md)": "md"}


def export_format(path: str, chosen_filter: str) -> str:
    """``md`` or ``html``: the file's suffix decides, else the filter picked in the dialog."""
    suffix = Path(path).suffix.lower()
    if suffix in (".md", ".markdown"):
        return "md"
    if suffix in (".html", ".htm"):
        return "html"
    return FILTERS.get(chosen_filter, "html")


def write_export(worker: SessionWorker, path: str, fmt: str, system: bool = False) -> str:
    """On the worker: build the document of what is open and write it to ``path`` (one line back)."""
    from desktop.session import export  # Lazy: the launch budget (X27).

    if worker.foreign is not None:
        transcript = export.foreign_transcript(worker.foreign, worker.foreign_leaf)
    elif worker.session is not None:
        writer = worker.session.writer
        transcript = export.desktop_transcript(str(writer.path), writer.header, list(writer.rows))
    else:
        raise ValueError("no session is open")
    target = Path(path)
    if target.exists() and target.resolve() == Path(transcript.path).resolve():
        raise ValueError("the export would replace the session itself; choose another file")
    data = export.render(transcript, fmt, system=system).encode("utf-8")
    try:
        target.write_bytes(data)
    except OSError as exc:
        raise OSError(f"could not write {path}: {exc.strerror or exc}") from None
    return f"Exported the conversation to {path} ({len(data):,} bytes)"


Report = Callable[[str, str], None]


def ask_and_export(parent: QWidget, ops: WorkerOps, session_path: str, report: Report) -> None:
    """Ask for a file (named after the session) and export to it on the worker."""
    stem = Path(session_path).stem or "session"
    path, chosen = QFileDialog.getSaveFileName(
        parent, "Export conversation", str(Path.home() / f"{stem}.html"), ";;".join(FILTERS)
    )
    if path:
        start_export(ops, path, export_format(path, chosen), report)


def start_export(ops: WorkerOps, path: str, fmt: str, report: Report) -> None:
    """Run the export as a worker op; ``report(level, text)`` says how it went."""
    ops.query(
        lambda worker: write_export(worker, path, fmt),
        lambda text: report("info", text),
        failed=lambda text: report("error", text),
        label="Export",
    )
