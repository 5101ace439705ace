"""Start the Qt application, the session worker thread and the main window."""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
from pathlib import Path

from PySide6.QtCore import QObject, QSettings, Qt, Slot
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QMessageBox

from desktop import __version__
from desktop.cli._args import EXIT_LOCAL
from desktop.host import paths
from desktop.host.first_run import OFFLINE_ENV
from desktop.host.logging_setup import configure_logging, logs_location
from desktop.host.settings import SettingsError, settings_path, upgrade_settings_file
from desktop.ui import smoke
from desktop.ui.app_identity import apply_identity
from desktop.ui.inert import plain_message_box
from desktop.ui.main_window import WINDOW_TITLE, MainWindow
from desktop.ui.messages import Started
from desktop.ui.quit_signals import quit_on_signals
from desktop.ui.single_instance import FileOpenEvents, claim_or_hand_over, server_name
from desktop.ui.theme import follow_system
from desktop.ui.worker import start_worker, stop_worker

__all__ = ["WINDOW_TITLE", "refuse_in_window", "run_gui"]
log = logging.getLogger(__name__)
#: Exit code of a window that cannot start because its data folder is unusable (as the headless
#: commands' "a file cannot be read or written").
EXIT_DATA_FOLDER = EXIT_LOCAL
#: Qt platforms with no screen: nobody could answer a message box there.
HEADLESS_PLATFORMS = frozenset({"offscreen", "minimal"})


def sharp_on_high_dpi() -> None:
    """Fractional scale factors (125 %, 150 %) as they are, not rounded: text, the icon's PNG
    sizes and the help page's 2x pictures stay sharp (design G7). Only before the app exists."""
    if QApplication.instance() is None:
        QGuiApplication.setHighDpiScaleFactorRoundingPolicy(Qt.HighDpiScaleFactorRoundingPolicy.PassThrough)


def refuse_in_window(text: str) -> int:
    """The no-console launcher's refusal of a file (design G8): one message box, exit code 2."""

    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    apply_identity(app)
    # Plain text: the refusal quotes the file's name and what it holds (design G11).
    plain_message_box(QMessageBox.Icon.Critical, WINDOW_TITLE, text).exec()
    return 2


def run_gui(args: argparse.Namespace) -> int:
    if smoke.smoke_requested(getattr(args, "smoke_test", False)):
        return run_smoke_test(args)
    return _run_gui(args)


def run_smoke_test(args: argparse.Namespace) -> int:
    """The self-test in a temporary data folder and workspace (design G13), unless ``--data-dir``
    or ``PI_DESKTOP_DATA_DIR`` names the folder: it never touches the user's sessions."""
    with tempfile.TemporaryDirectory(prefix="pi-desktop-smoke-", ignore_cleanup_errors=True) as scratch:
        if not os.environ.get(paths.DATA_DIR_ENV):
            os.environ[paths.DATA_DIR_ENV] = str(Path(scratch) / "data")
        workspace = smoke.prepare_workspace(Path(scratch) / "workspace")
        return _run_gui(args, smoke_workspace=workspace)


class StartNotes(QObject):
    """What the worker found at start-up that the user should know, shown in the window's banner
    (no keyring backend: keys cannot be saved, environment keys still work; design G13)."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window

    @Slot(object)
    def on_started(self, started: Started) -> None:
        if started.keyring_note:
            self.window.on_message("warning", started.keyring_note)


def data_folder_problem(data_dir: str | None) -> str | None:
    """Why the data folder (and its log folder) cannot hold sessions, or None. Checked before the
    window starts, so a folder that is a file, cannot be created or is read-only is one line."""
    folder = paths.data_dir(data_dir)
    if folder.exists() and not folder.is_dir():
        return f"pi-desktop: the data folder {folder} is a file, not a folder"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        logs = logs_location(data_dir)
    except OSError as exc:
        return f"pi-desktop: cannot use the data folder {folder}: {exc.strerror or exc} ({exc.filename or folder})"
    for path in (folder, logs):
        if not os.access(path, os.W_OK | os.X_OK):  # a read-only mount too, even for root
            return f"pi-desktop: the data folder {path} is read-only; sessions and settings cannot be saved"
    return None


def refuse_start(text: str, code: int) -> int:
    """A start that cannot go on: one line on the terminal, and a message box where there is a
    screen to show it on (a double-click shows no terminal)."""
    if sys.stderr is not None:
        print(text, file=sys.stderr, flush=True)

    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    if app.platformName() not in HEADLESS_PLATFORMS:
        apply_identity(app)
        plain_message_box(QMessageBox.Icon.Critical, WINDOW_TITLE, text).exec()
    return code


def _run_gui(args: argparse.Namespace, smoke_workspace: Path | None = None) -> int:
    data_dir = getattr(args, "data_dir", None)
    problem = data_folder_problem(data_dir)
    if problem is not None:
        return refuse_start(
            f"{problem}. Choose another with --data-dir or {paths.DATA_DIR_ENV}.", EXIT_DATA_FOLDER
        )
    log_folder = logs_location(data_dir)
    configure_logging(log_folder)
    log.info("Pi Desktop %s starting (frozen=%s)", __version__, getattr(sys, "frozen", False))
    # Before any event loop: the one start-up write of a settings migration (design D6: the
    # headless commands only ever migrate in memory).
    try:
        upgrade_settings_file(settings_path(data_dir))
    except (SettingsError, OSError) as exc:
        log.warning("settings not upgraded: %s", exc)  # the session shows the problem when it opens
    sharp_on_high_dpi()
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    apply_identity(app)
    # Window geometry, recent sessions and selectors live with the rest of the app's data, so
    # --data-dir / PI_DESKTOP_DATA_DIR redirects them too.
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(paths.data_dir(data_dir)))
    follow_system(app)
    signals = quit_on_signals(app)  # noqa: F841  (kept alive until the window closes)
    open_paths = [str(Path(p).absolute()) for p in getattr(args, "open_paths", None) or []]
    smoke_run = smoke_workspace is not None
    instance = None
    if not smoke_run:  # a self-test always shows its own window
        instance = claim_or_hand_over(server_name(paths.data_dir(data_dir)), open_paths)
        if instance is None:
            log.info("handed %d path(s) to the running window; exiting", len(open_paths))
            return 0
    # The first launch's route is decided on the worker (it reads the keyring, design G10). Real
    # routes are offered whenever a key exists; PI_DESKTOP_OFFLINE keeps the app on the emulator.
    offline_only = os.environ.get(OFFLINE_ENV, "").strip().lower() in {"1", "true", "yes", "on"}
    workspace = str(smoke_workspace or os.getcwd())
    thread, worker, client = start_worker(data_dir=data_dir, workspace=workspace, offline=offline_only)
    window = MainWindow(worker, client, log_folder=log_folder)
    window.quit_action.triggered.connect(app.quit)
    worker.started.connect(StartNotes(window).on_started)  # queued: the notes live on this thread
    if instance is not None:
        instance.open_requested.connect(window.open_paths)
    file_events = FileOpenEvents(app)
    app.installEventFilter(file_events)
    file_events.open_requested.connect(window.open_paths)
    options = window.startup_options()
    checks = smoke.SmokeRun(app, window, worker, open_paths[0] if open_paths else None) if smoke_run else None
    if checks is not None:
        options = smoke.start_options(open_paths[0] if open_paths else None)
        checks.start()
    elif open_paths:  # pi-desktop PATH: that session instead of the last one (design G8)
        options["session"] = open_paths[0]
        window.remember_also(open_paths[1:])
    client.start.emit(options)
    window.show()
    status = app.exec()
    if checks is not None:
        checks.save_screenshot()
    window.close()  # its last settings go to the worker before it shuts down
    stop_worker(thread, worker, client)
    if instance is not None:
        instance.close()
    log.info("Pi Desktop exiting with status %s", status)
    return status
