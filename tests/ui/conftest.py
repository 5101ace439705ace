"""Window tests run offscreen and fail on any unexpected Qt warning (as qutebrowser's do)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QCoreApplication, QSettings, Qt, QTimer

from desktop.emulator import Emulator
from desktop.ui.main_window import TAB_MESSAGE, TAB_PAYLOAD, MainWindow
from desktop.ui.message_view import MessageView
from desktop.ui.messages import ShownSession, TurnFinished
from desktop.ui.timeline_model import ROW_ROLE
from desktop.ui.worker import SessionWorker, WorkerClient, start_worker, stop_worker

ROUTE = "emulator/deepseek/deepseek-flash"
TURN_TIMEOUT = 30_000

#: Messages the offscreen platform prints for things it cannot do; they say nothing about us.
IGNORED_QT_MESSAGES = (
    r"This plugin does not support propagateSizeHints\(\)",
    r"This plugin does not support raise\(\)",
    r"This plugin does not support grabbing the keyboard",
    r"QFont::setPointSizeF: Point size <= 0",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.qt_log_level_fail("WARNING"))
            item.add_marker(pytest.mark.qt_log_ignore(*IGNORED_QT_MESSAGES))


@pytest.fixture
def qsettings_isolated(tmp_path: Path) -> Iterator[Path]:
    """QSettings in a temporary folder, so geometry and recent sessions never touch the home."""
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp_path / "qsettings"))
    QCoreApplication.setOrganizationName("pi-desktop-tests")
    QCoreApplication.setApplicationName("pi-desktop-tests")
    yield tmp_path / "qsettings"


def tick_probe(qtbot: Any) -> tuple[QTimer, list[float]]:
    """A 5 ms timer on the GUI thread and the times it fired (50 ms of them already): a gap
    between two ticks is how long the event loop was held."""
    ticks: list[float] = []
    probe = QTimer()
    probe.setInterval(5)
    probe.timeout.connect(lambda: ticks.append(time.perf_counter()))
    probe.start()
    qtbot.wait(50)
    return probe, ticks


class Harness:
    """A real window on a real worker thread (offline), driven as a user would. Everything is
    read from the window, which receives the worker's signals queued and in order; waits are
    on GUI-side state, not ``waitSignal`` (the worker emits on its own thread)."""

    def __init__(
        self,
        qtbot: Any,
        workspace: Path,
        *,
        route: str = ROUTE,
        data: Path | None = None,
        emulator: Emulator | None = None,
    ) -> None:
        self.qtbot = qtbot
        #: The route ``start`` opens on unless told otherwise.
        self.route = route
        #: The test's folder, the worker's workspace.
        self.tmp = workspace
        self.data = data
        self.thread, self.worker, self.client = start_worker(
            data_dir=None if data is None else str(data),
            workspace=str(workspace),
            offline=True,
            emulator=emulator,
        )
        self.window = MainWindow(self.worker, self.client)
        qtbot.addWidget(self.window)
        self.previews: list[dict[str, Any]] = []
        self.window.payload_view.main_updated.connect(self.previews.append)

    def start(self, session: Path | None = None, route: str | None = None) -> None:
        """Start on ``route`` (a new session, or ``session``) and wait for the first preview."""
        self.window.show()
        self.qtbot.waitExposed(self.window)
        self.client.start.emit(
            {
                "route": route or self.route,
                "mode": "ask",
                "fallback": "folded",
                "firstRun": False,
                "session": str(session or ""),
            }
        )
        # Previews are computed while the payload tab is shown: take the first, then the default tab.
        self.window.tabs.setCurrentIndex(TAB_PAYLOAD)
        self.qtbot.waitUntil(
            lambda: self.window.session is not None and bool(self.previews), timeout=TURN_TIMEOUT
        )
        self.window.tabs.setCurrentIndex(TAB_MESSAGE)

    def launch(self, **options: Any) -> None:
        """Start with exactly ``options`` (no route: the settings' or the session's) and wait
        until the session is open."""
        self.window.show()
        self.qtbot.waitExposed(self.window)
        self.client.start.emit({"firstRun": False, **options})
        self.wait_open()

    def wait_open(self, path: Path | None = None) -> ShownSession:
        """Wait until the window shows ``path`` (or any session) and its status follows it."""

        def opened() -> bool:
            session, status = self.window.session, self.window.status
            if session is None or status.path != session.path:
                return False
            return path is None or Path(session.path) == path

        self.qtbot.waitUntil(opened, timeout=TURN_TIMEOUT)
        assert self.window.session is not None
        return self.window.session

    @property
    def finished(self) -> list[TurnFinished]:
        return self.window.turn_results

    @property
    def streamed(self) -> int:
        return self.window.stream_updates

    @property
    def shown(self) -> ShownSession | None:
        """The session the window shows (set on the GUI thread when it arrives)."""
        return self.window.session

    def leaf(self) -> str | None:
        foreign = None if self.window.session is None else self.window.session.foreign
        return None if foreign is None else foreign.leaf

    def rows(self) -> list[dict[str, Any]]:
        return [dict(r) for r in self.window.timeline.rows]

    def conversation(self) -> str:
        return self.window.message_view.browser.toPlainText()

    def kinds(self) -> list[str]:
        return [str(r.get("type")) for r in self.rows()]

    def select(self, predicate: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        f = self.window.shown
        for i in range(f.rowCount()):
            row = f.index(i, 0).data(ROW_ROLE)
            if predicate(row):
                self.window.view.setCurrentIndex(f.index(i, 0))
                return dict(row)
        raise AssertionError("no such row on screen")

    def toolbar(self) -> tuple[str, str, str]:
        w = self.window
        return (
            str(w.route_combo.currentData()),
            w.mode_combo.currentText(),
            str(w.fallback_combo.currentData()),
        )

    def send(self, text: str) -> TurnFinished:
        count = len(self.window.turn_results)
        self.window.send(text)
        self.qtbot.waitUntil(lambda: len(self.window.turn_results) > count, timeout=TURN_TIMEOUT)
        return self.window.turn_results[-1]

    def type_and_send(self, text: str) -> None:
        """Type ``text`` into the composer and press Ctrl+Return, as a user does."""
        editor = self.window.composer.editor
        editor.setPlainText(text)
        self.qtbot.keyClick(editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)

    def wait_turn(self, count: int) -> TurnFinished:
        self.qtbot.waitUntil(lambda: len(self.finished) >= count, timeout=TURN_TIMEOUT)
        return self.finished[count - 1]

    def settle(self) -> None:
        """Let every queued worker answer reach the window (status, activation, previews)."""
        done: list[bool] = []
        self.client.ops.query(lambda _w: None, lambda _r: done.append(True))
        self.qtbot.waitUntil(lambda: bool(done), timeout=TURN_TIMEOUT)

    def close(self) -> None:
        self.window.close()
        assert stop_worker(self.thread, self.worker, self.client)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """The folder the harness's new session works in (a test file may define another)."""
    folder = tmp_path / "workspace"
    folder.mkdir()
    return folder


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The test's folder as HOME, where the browser looks for pi's and Claude Code's sessions."""
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("PI_CODING_AGENT_DIR", "CLAUDE_CONFIG_DIR"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


@pytest.fixture
def unstarted(qtbot: Any, workspace: Path, qsettings_isolated: Path) -> Iterator[Harness]:
    """A window on a worker the test starts itself (``start``, ``launch`` or a first run)."""
    h = Harness(qtbot, workspace)
    yield h
    h.close()


@pytest.fixture
def harness(unstarted: Harness) -> Harness:
    """A started window on a new session in ``workspace`` (a test file may define its own
    ``harness`` for another start)."""
    unstarted.start()
    return unstarted


@pytest.fixture
def view(qtbot: Any) -> MessageView:
    """The Message tab's view on its own."""
    view = MessageView()
    qtbot.addWidget(view)
    return view


@pytest.fixture
def window(qtbot: Any, qsettings_isolated: Path) -> Iterator[MainWindow]:
    """A 1280x800 window whose worker never starts: the test feeds the window's slots directly."""
    worker = SessionWorker()
    win = MainWindow(worker, WorkerClient(worker))
    qtbot.addWidget(win)
    win.resize(1280, 800)
    win.show()
    qtbot.waitExposed(win)
    yield win


@pytest.fixture
def started_window(qtbot: Any, tmp_path: Path, qsettings_isolated: Path) -> Iterator[tuple[MainWindow, Any]]:
    """The window at 1280x800 on a started worker with its first session open, and the client
    (the long-session tests open their own session in it)."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    thread, worker, client = start_worker(data_dir=str(tmp_path / "data"), workspace=str(workspace))
    window = MainWindow(worker, client)
    qtbot.addWidget(window)
    window.resize(1280, 800)
    window.show()
    qtbot.waitExposed(window)
    client.start.emit({"firstRun": False})
    qtbot.waitUntil(lambda: window.session is not None, timeout=60_000)
    yield window, client
    window.close()
    stop_worker(thread, worker, client)
