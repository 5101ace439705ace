"""Start the Qt application and show the main window."""

from __future__ import annotations

import argparse
import logging
import sys

from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QApplication, QLabel, QMainWindow

from desktop import __version__
from desktop.host.first_run import initial_route
from desktop.host.logging_setup import configure_logging, logs_location
from desktop.ui.app_identity import apply_identity
from desktop.ui.show_logs import show_logs_action
from desktop.ui.smoke import exit_once_shown, smoke_requested

WINDOW_TITLE = "Pi Desktop"
log = logging.getLogger(__name__)


def run_gui(args: argparse.Namespace) -> int:
    data_dir = getattr(args, "data_dir", None)
    log_folder = logs_location(data_dir)
    configure_logging(log_folder)
    log.info("Pi Desktop %s starting (frozen=%s)", __version__, getattr(sys, "frozen", False))
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    apply_identity(app)
    route = initial_route()
    log.info("initial route: %s (%s)", route.provider, route.reason)
    window = QMainWindow()
    window.setWindowTitle(WINDOW_TITLE)
    window.setCentralWidget(QLabel(f"Pi Desktop\n\nRoute: {route.label}"))
    file_menu = window.menuBar().addMenu("&File")
    quit_action = file_menu.addAction("&Quit")
    quit_action.setShortcut(QKeySequence.StandardKey.Quit)
    quit_action.triggered.connect(app.quit)
    window.menuBar().addMenu("&Help").addAction(show_logs_action(window, log_folder))
    window.resize(1100, 720)
    window.show()
    if smoke_requested(getattr(args, "smoke_test", False)):
        exit_once_shown(app, window, {"initial-route": route.provider})
    status = app.exec()
    log.info("Pi Desktop exiting with status %s", status)
    return status
