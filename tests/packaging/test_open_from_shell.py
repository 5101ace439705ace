"""``pi-desktop PATH`` opens that session, and a second launch hands its file over (design G8).

Real processes on a real X server: the first launch's window title names the session it was
given; a second launch with another session exits 0 and the *first* process's window (the same
X window) now shows that session; a third launch naming the session already showing only
raises the window. A stale socket left by a crashed instance does not stop a new one.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from packaging_support import (
    first_run_env,
    launched,
    quit_by_keyboard,
    require_tool,
    wait_for_window,
    window_titles,
    write_console_script,
    xdotool,
)

from desktop.host.journal.writer import JournalWriter
from desktop.host.trust import TrustStore
from desktop.identity import APP_ID
from desktop.ui.single_instance import server_name

TIMEOUT = 60.0


def _session(path: Path, workspace: Path) -> Path:
    """A session recorded in a folder the user confirmed before (in the tests' ``app-data``
    beside it): a new recorded folder would be asked about first (design A10)."""
    workspace.mkdir()
    TrustStore(workspace.parent / "app-data" / "trust.json").confirm_workspace(workspace.resolve())
    JournalWriter.create(path, cwd=workspace, app_version="0.1.0").close()
    return path


def test_a_second_launch_hands_its_file_to_the_running_window(x_display: str, tmp_path: Path) -> None:
    require_tool("xdotool", "xdotool")
    first = _session(tmp_path / "first-session.jsonl", tmp_path / "alpha-ws")
    second = _session(tmp_path / "second-session.jsonl", tmp_path / "beta-ws")
    (tmp_path / "bin").mkdir()
    cli = write_console_script(tmp_path / "bin" / "pi-desktop", "desktop.app:main")
    app_data = tmp_path / "app-data"
    env = first_run_env(DISPLAY=x_display, QT_QPA_PLATFORM="xcb", PI_DESKTOP_DATA_DIR=str(app_data))
    env.pop("PI_DESKTOP_SMOKE_EXIT", None)

    started = time.monotonic()
    with launched([str(cli), str(first)], tmp_path, **env) as app:
        window = wait_for_window(x_display, app, "first-session.jsonl · alpha-ws — Pi Desktop")
        first_start = time.monotonic() - started

        # Another session, from another folder, with a relative path: the running window opens it.
        started = time.monotonic()
        handed = subprocess.run(
            [sys.executable, str(cli), "second-session.jsonl"],
            env=env,
            cwd=second.parent,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        second_run = time.monotonic() - started
        assert handed.returncode == 0, handed.stderr
        assert wait_for_window(x_display, app, "second-session.jsonl · beta-ws — Pi Desktop") == window
        assert len(window_titles(x_display)) == 1, "the second launch must not show a window of its own"
        # It loads no window modules: well under the time the first launch took to show its window.
        assert second_run < first_start, (second_run, first_start)

        # The session already showing: the window only comes to the front.
        again = subprocess.run(
            [sys.executable, str(cli), str(second)], env=env, capture_output=True, text=True, timeout=TIMEOUT
        )
        assert again.returncode == 0, again.stderr
        assert list(window_titles(x_display).values()) == ["second-session.jsonl · beta-ws — Pi Desktop"]

        err = quit_by_keyboard(x_display, window, app)
    assert app.returncode == 0, err
    log = (app_data / "logs" / "pi-desktop.log").read_text(encoding="utf-8")
    assert log.count("a second launch handed over 1 path(s)") == 2
    recent = (app_data / "pi-desktop" / f"{APP_ID}.ini").read_text(encoding="utf-8")
    assert "first-session.jsonl" in recent and "second-session.jsonl" in recent


def test_a_stale_socket_from_a_crashed_instance_is_claimed(
    x_display: str, tmp_path: Path, qapp: object
) -> None:
    """A socket file nobody listens on (the process died) does not block the next launch."""
    if sys.platform == "win32":
        pytest.skip("named pipes vanish with their process; no stale file on Windows")
    from PySide6.QtNetwork import QLocalServer

    app_data = tmp_path / "app-data"
    probe = QLocalServer()
    assert probe.listen(server_name(app_data)), probe.errorString()
    stale_path = probe.fullServerName()
    probe.close()
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(stale_path)  # bound, never listening, left behind: what a killed instance leaves
    dead.close()
    assert Path(stale_path).exists()

    session = _session(tmp_path / "after-crash.jsonl", tmp_path / "ws")
    (tmp_path / "bin").mkdir()
    cli = write_console_script(tmp_path / "bin" / "pi-desktop", "desktop.app:main")
    env = first_run_env(DISPLAY=x_display, QT_QPA_PLATFORM="xcb", PI_DESKTOP_DATA_DIR=str(app_data))
    env.pop("PI_DESKTOP_SMOKE_EXIT", None)
    app = subprocess.Popen(
        [str(cli), str(session)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        wait_for_window(x_display, app, "after-crash.jsonl · ws — Pi Desktop")
        # The new instance owns the name: a later launch reaches it instead of starting a window.
        other = _session(tmp_path / "later.jsonl", tmp_path / "later-ws")
        handed = subprocess.run(
            [sys.executable, str(cli), str(other)], env=env, capture_output=True, text=True, timeout=TIMEOUT
        )
        assert handed.returncode == 0, handed.stderr
        wait_for_window(x_display, app, "later.jsonl · later-ws — Pi Desktop")
        assert len(window_titles(x_display)) == 1
    finally:
        app.terminate()
        app.communicate(timeout=30)


def test_a_file_manager_opens_sessions_with_the_installed_entry(x_display: str, tmp_path: Path) -> None:
    """``gio open FILE`` (what GNOME Files runs on a double-click) starts the app on the session
    through the entry's ``Exec ... %F`` and the session MIME type; a second file reaches that window."""
    require_tool("xdotool", "xdotool")
    gio = require_tool("gio", "libglib2.0-bin")
    require_tool("update-mime-database", "shared-mime-info")
    require_tool("update-desktop-database", "desktop-file-utils")
    from desktop.host.desktop_entry import install_desktop_entry

    first = _session(tmp_path / "picked.jsonl", tmp_path / "files-ws")
    second = _session(tmp_path / "picked-next.jsonl", tmp_path / "next-ws")
    data_home = tmp_path / "share"
    (tmp_path / "bin").mkdir()
    gui = write_console_script(tmp_path / "bin" / "pi-desktop-gui", "desktop.app:gui_main")
    assert install_desktop_entry(data_home, gui).notes == ()
    app_data = tmp_path / "app-data"
    env = first_run_env(
        DISPLAY=x_display,
        QT_QPA_PLATFORM="xcb",
        PI_DESKTOP_DATA_DIR=str(app_data),
        HOME=str(tmp_path),
        XDG_DATA_HOME=str(data_home),
        XDG_DATA_DIRS="/usr/local/share:/usr/share",
        XDG_CURRENT_DESKTOP="GNOME",
    )
    env.pop("PI_DESKTOP_SMOKE_EXIT", None)

    def gio_open(path: Path) -> None:
        # The app inherits gio's output: a file, not a pipe, or gio's run would wait for the app.
        with (tmp_path / "gio-open.log").open("a") as log:
            done = subprocess.run([gio, "open", str(path)], env=env, stdout=log, stderr=log, timeout=TIMEOUT)
        assert done.returncode == 0, (tmp_path / "gio-open.log").read_text()

    gio_open(first)
    deadline = time.monotonic() + TIMEOUT
    window = ""
    while not window and time.monotonic() < deadline:
        window = next(
            (w for w, t in window_titles(x_display).items() if t == "picked.jsonl · files-ws — Pi Desktop"),
            "",
        )
        time.sleep(0.2)
    assert window, f"no window for the opened session; saw {window_titles(x_display)}"
    pid = int(xdotool(x_display, "getwindowpid", window).stdout.strip())
    try:
        gio_open(second)
        deadline = time.monotonic() + TIMEOUT
        while (
            time.monotonic() < deadline
            and window_titles(x_display).get(window) != "picked-next.jsonl · next-ws — Pi Desktop"
        ):
            time.sleep(0.2)
        assert window_titles(x_display) == {window: "picked-next.jsonl · next-ws — Pi Desktop"}
    finally:
        xdotool(x_display, "windowfocus", "--sync", window)
        xdotool(x_display, "key", "--clearmodifiers", "ctrl+q")
        deadline = time.monotonic() + 30
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        if _alive(pid):  # the app this test launched (through gio) did not quit: end it
            os.kill(pid, signal.SIGKILL)
    assert "exiting with status 0" in (app_data / "logs" / "pi-desktop.log").read_text(encoding="utf-8")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
