"""The "Show logs" action: the log folder in the file manager, or an in-app viewer (design G7).

A double-clicked app has no terminal; this is how a user finds the file to attach to a bug
report. The folder itself comes from ``desktop.host.logging_setup.logs_location``. Where no
file manager is registered (a bare window manager, a container), ``QDesktopServices`` cannot
open the folder; the app then shows the newest log's tail itself, with the folder's path.
"""

from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import QObject, Qt, QUrl
from PySide6.QtGui import QAction, QDesktopServices, QFontDatabase
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from desktop.host.private_files import make_private_dirs
from desktop.ui.banner import printable
from desktop.ui.inert import named

#: The viewer shows at most this much of the end of the newest log.
TAIL_BYTES = 256 * 1024


def show_logs_action(parent: QObject, folder: Path) -> QAction:
    action = QAction("Show &Logs", parent)
    action.setToolTip(f"Open {folder} in the file manager (or here, if none is available)")
    action.setObjectName("showLogsAction")
    action.triggered.connect(lambda: show_logs(folder, parent if isinstance(parent, QWidget) else None))
    return action


def open_folder(folder: Path) -> bool:
    make_private_dirs(folder)  # design X22
    return QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder)))


def show_logs(folder: Path, parent: QWidget | None) -> LogViewer | None:
    """The folder in the file manager; the in-app viewer when that fails."""
    if open_folder(folder):
        return None
    viewer = LogViewer(folder, parent)
    viewer.show()
    return viewer


def log_tail(folder: Path) -> tuple[Path | None, str]:
    """The newest ``*.log`` file in ``folder`` and its last ``TAIL_BYTES``, shown safely."""
    try:
        logs = sorted(folder.glob("*.log*"), key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError as error:
        return None, f"Cannot list {folder}: {error.strerror or error}"
    if not logs:
        return None, f"No log files in {folder} yet."
    newest = logs[0]
    try:
        with newest.open("rb") as handle:
            size = handle.seek(0, 2)
            handle.seek(max(0, size - TAIL_BYTES))
            data = handle.read()
    except OSError as error:
        return newest, f"Cannot read {newest}: {error.strerror or error}"
    if size > TAIL_BYTES:
        data = data[data.find(b"\n") + 1 :]
    return newest, printable(data)


class LogViewer(QDialog):
    def __init__(self, folder: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("logViewer")
        self.setWindowTitle("Logs — Pi Desktop")
        self.resize(900, 600)
        path, text = log_tail(folder)
        where = QLabel(
            f"No file manager could open the folder. Logs are in <code>{html.escape(str(folder))}</code>"
            + (f"; showing the end of <code>{html.escape(path.name)}</code>." if path else ".")
        )
        where.setTextFormat(Qt.TextFormat.RichText)
        where.setWordWrap(True)
        where.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.text = named(QPlainTextEdit(text), "logText", accessible="Log file contents")
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.moveCursor(self.text.textCursor().MoveOperation.End)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(where)
        layout.addWidget(self.text, 1)
        layout.addWidget(buttons)
