"""The window's size: restored as the user left it, a sane first size on a larger screen.

Run in a child process whose offscreen screen is 1920x1080 (the test process's screen is the
offscreen default, 800x800), with its settings in a temporary folder: the real window and worker
save on close and restore on the next start.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

CHILD = r"""
import json, sys
from PySide6.QtCore import QCoreApplication, QSettings
from PySide6.QtWidgets import QApplication

QSettings.setDefaultFormat(QSettings.Format.IniFormat)
QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, sys.argv[1])
QCoreApplication.setOrganizationName("pi-desktop-tests")
QCoreApplication.setApplicationName("pi-desktop-tests")
app = QApplication([])
from desktop.ui.main_window import MainWindow
from desktop.ui.worker import start_worker, stop_worker

sizes = []
for step in range(3):
    thread, worker, client = start_worker(workspace=sys.argv[2], offline=True)
    window = MainWindow(worker, client)
    window.show()
    app.processEvents()
    sizes.append([window.width(), window.height()])
    if step == 0:
        window.resize(1280, 800)
    elif step == 1:
        window.resize(1000, 700)
    app.processEvents()
    window.close()
    stop_worker(thread, worker, client)
print(json.dumps(sizes))
"""


def test_saved_size_reopens_as_left_and_first_size_fits_a_large_screen(tmp_path: Path) -> None:
    screen = tmp_path / "screen.json"
    screen.write_text(
        json.dumps({"screens": [{"name": "big", "x": 0, "y": 0, "width": 1920, "height": 1080, "dpr": 1}]})
    )
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "QT_QPA_PLATFORM": f"offscreen:configfile={screen}",
        "PI_DESKTOP_DATA_DIR": str(tmp_path / "data"),
    }
    (tmp_path / "work").mkdir()
    run = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path / "qsettings"), str(tmp_path / "work")],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    sizes = json.loads(run.stdout.strip().splitlines()[-1])
    assert sizes == [[1440, 900], [1280, 800], [1000, 700]]
