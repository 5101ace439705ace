"""A window that cannot start says why in one line (and a dialog on a screen), with its exit code.

An unusable data folder (a file in its place, a folder that cannot be created, a read-only
one) is exit code 3, like the headless commands' "a file cannot be read or written"; Qt's
missing libraries and a missing display are exit code 2 (``test_platform_libraries.py``).
Before, the first was a traceback from the log set-up.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest
from packaging_support import launched, require_tool, xdotool

from desktop.ui.launch import EXIT_DATA_FOLDER, WINDOW_TITLE


def start(data_dir: Path, cwd: Path, **extra: str) -> AbstractContextManager[subprocess.Popen[str]]:
    return launched([sys.executable, "-m", "desktop"], cwd, PI_DESKTOP_DATA_DIR=str(data_dir), **extra)


def refusal(app: subprocess.Popen[str]) -> str:
    _out, err = app.communicate(timeout=60)
    assert app.returncode == EXIT_DATA_FOLDER, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def refused(data_dir: Path, cwd: Path) -> str:
    """The one line an offscreen start says before it exits."""
    with start(data_dir, cwd, QT_QPA_PLATFORM="offscreen") as app:
        return refusal(app)


def test_a_file_where_the_data_folder_should_be(tmp_path: Path) -> None:
    in_the_way = tmp_path / "data"
    in_the_way.write_text("not a folder", encoding="utf-8")
    line = refused(in_the_way, tmp_path)
    assert line == (
        f"pi-desktop: the data folder {in_the_way} is a file, not a folder. "
        "Choose another with --data-dir or PI_DESKTOP_DATA_DIR."
    )
    assert in_the_way.read_text(encoding="utf-8") == "not a folder"


def test_a_data_folder_that_cannot_be_created(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    line = refused(blocker / "data", tmp_path)
    assert line.startswith(f"pi-desktop: cannot use the data folder {blocker / 'data'}: ")


@pytest.mark.skipif(os.name == "nt" or os.geteuid() == 0, reason="root (and Windows) ignore the mode bits")
def test_a_read_only_data_folder(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    (folder / "logs").mkdir(parents=True)
    folder.chmod(0o555)
    try:
        line = refused(folder, tmp_path)
    finally:
        folder.chmod(0o755)
    assert line.startswith(f"pi-desktop: the data folder {folder} is read-only;")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="an X server is a Linux desktop's")
def test_on_a_screen_the_refusal_is_also_a_dialog(tmp_path: Path, x_display: str) -> None:
    """A double-click has no terminal: the same text in a message box, closed with Enter."""
    require_tool("xdotool", "xdotool")
    in_the_way = tmp_path / "data"
    in_the_way.write_text("", encoding="utf-8")
    with start(in_the_way, tmp_path, QT_QPA_PLATFORM="xcb", DISPLAY=x_display) as app:
        deadline = time.monotonic() + 60
        found: list[str] = []
        while not found and time.monotonic() < deadline and app.poll() is None:
            found = xdotool(
                x_display, "search", "--onlyvisible", "--name", f"^{WINDOW_TITLE}$"
            ).stdout.split()
            time.sleep(0.2)
        assert found, "no message box appeared"
        assert xdotool(x_display, "windowfocus", "--sync", found[0]).returncode == 0
        assert xdotool(x_display, "key", "Return").returncode == 0
        line = refusal(app)
    assert line.startswith(f"pi-desktop: the data folder {in_the_way} is a file")


def test_no_keyring_backend_is_one_line_in_the_banner(qtbot: Any, tmp_path: Path) -> None:
    """With no keyring backend (the tests' own, and a bare Linux box's) the window still opens
    on the emulator, and its banner says in one line that keys cannot be saved."""
    from desktop.ui.banner import Banner
    from desktop.ui.launch import StartNotes
    from desktop.ui.main_window import MainWindow
    from desktop.ui.worker import start_worker, stop_worker

    assert "fail" in os.environ.get("PYTHON_KEYRING_BACKEND", "")
    thread, worker, client = start_worker(data_dir=str(tmp_path), workspace=str(tmp_path), offline=False)
    window = MainWindow(worker, client)
    qtbot.addWidget(window)
    worker.started.connect(StartNotes(window).on_started)
    client.start.emit({"route": "emulator/anthropic/claude-opus-5-5", "firstRun": False})
    try:
        qtbot.waitUntil(lambda: bool(window.findChildren(Banner)), timeout=30_000)
        texts = [banner.text for banner in window.findChildren(Banner)]
        assert [t for t in texts if "keyring" in t] == [
            "No usable system keyring (NoKeyringError): API keys cannot be saved in Pi Desktop; "
            "keys in environment variables (ANTHROPIC_API_KEY, …) still work."
        ]
    finally:
        window.close()
        assert stop_worker(thread, worker, client)
