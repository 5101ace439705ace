"""SIGTERM and SIGINT quit the window like File → Quit, at any moment (design G10).

A desktop logout sends SIGTERM, a terminal's Ctrl+C sends SIGINT. Left to their defaults, the
first kills the process wherever it is and the second raises ``KeyboardInterrupt`` in whatever
Python code the GUI thread happens to run; either can end the app with its worker thread still
running. Instead, both are caught as early as the window's launch starts (before Qt loads), and
carried to the event loop through a wake-up socket: the app quits the normal way (the window
saves its settings, the worker cancels, closes the session and ends, ``stop_worker`` waits).
A signal that arrives before the event loop runs is kept in the socket and acted on when it
starts.
"""

from __future__ import annotations

import logging
import signal
import socket
import threading
from types import FrameType

from PySide6.QtCore import QCoreApplication, QSocketNotifier

log = logging.getLogger(__name__)
QUIT_SIGNALS = (signal.SIGTERM, signal.SIGINT)
_wakeup: tuple[socket.socket, socket.socket] | None = None


def catch_quit_signals() -> bool:
    """Remember SIGTERM and SIGINT instead of dying (main thread only; call it early)."""
    global _wakeup
    if _wakeup is not None:
        return True
    if threading.current_thread() is not threading.main_thread():
        return False
    read, write = socket.socketpair()
    read.setblocking(False)
    write.setblocking(False)
    signal.set_wakeup_fd(write.fileno(), warn_on_full_buffer=False)
    for number in QUIT_SIGNALS:
        signal.signal(number, _noted)
    _wakeup = (read, write)
    return True


def _noted(_number: int, _frame: FrameType | None) -> None:
    """The wake-up socket already carries the signal to the event loop."""


def quit_on_signals(app: QCoreApplication) -> QSocketNotifier | None:
    """Quit ``app`` when a caught signal arrives (keep the returned notifier alive)."""
    if not catch_quit_signals() or _wakeup is None:
        return None
    read = _wakeup[0]
    notifier = QSocketNotifier(read.fileno(), QSocketNotifier.Type.Read, app)

    def drain() -> None:
        try:
            numbers = read.recv(64)
        except (BlockingIOError, InterruptedError):
            return
        if numbers:
            log.info("signal %s received: quitting", ", ".join(str(n) for n in numbers))
            app.quit()

    notifier.activated.connect(drain)
    return notifier
