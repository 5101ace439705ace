"""Start the Qt application and show the main window."""

from __future__ import annotations

import argparse
import sys

from PySide6.QtWidgets import QApplication, QLabel, QMainWindow

WINDOW_TITLE = "Pi Desktop"


def run_gui(args: argparse.Namespace) -> int:
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("Pi Desktop")
    app.setOrganizationName("pi-desktop")
    window = QMainWindow()
    window.setWindowTitle(WINDOW_TITLE)
    window.setCentralWidget(QLabel("Pi Desktop"))
    window.resize(1100, 720)
    window.show()
    return app.exec()
