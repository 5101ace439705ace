"""The "Show logs" action: opens the log folder in the system file manager.

A double-clicked app has no terminal; this is how a user finds the file to attach to a
bug report. The folder itself comes from ``desktop.host.logging_setup.logs_location``.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, QUrl
from PySide6.QtGui import QAction, QDesktopServices


def show_logs_action(parent: QObject, folder: Path) -> QAction:
    action = QAction("Show &Logs", parent)
    action.setToolTip(f"Open {folder} in the file manager")
    action.setObjectName("showLogsAction")
    action.triggered.connect(lambda: open_folder(folder))
    return action


def open_folder(folder: Path) -> bool:
    folder.mkdir(parents=True, exist_ok=True)
    return QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder)))
