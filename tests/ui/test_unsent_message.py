"""A message that was not stored comes back to the composer (design T3): a full disk or a
refusal never loses what the user typed.

The full-disk case runs the real window in a child process whose file-size limit stops the
session file from growing, so the user row's write fails as a full disk fails it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from desktop.ui.main_window import MainWindow
from desktop.ui.messages import TurnFinished

ROOT = Path(__file__).resolve().parents[2]


def test_a_refused_message_goes_back_to_an_empty_composer(window: MainWindow) -> None:
    window.on_turn_finished(TurnFinished("error", "no session is open", unsent="Explain the loop."))
    assert window.composer.editor.toPlainText() == "Explain the loop."
    window.composer.editor.setPlainText("something new")  # typed since: left as it is
    window.on_turn_finished(TurnFinished("error", "no session is open", unsent="Explain the loop."))
    assert window.composer.editor.toPlainText() == "something new"
    window.composer.editor.clear()
    window.on_turn_finished(TurnFinished("error", "no session is open", unsent="/etc/hosts is empty"))
    assert window.composer.editor.toPlainText() == "//etc/hosts is empty"  # sent as typed, not a command


def test_a_message_the_full_disk_refused_is_not_lost(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import json, resource, signal, time
        from pathlib import Path
        from PySide6.QtWidgets import QApplication
        from desktop.ui.main_window import MainWindow
        from desktop.ui.worker import start_worker, stop_worker

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        tmp = Path({str(tmp_path)!r})
        (tmp / "ws").mkdir()
        app = QApplication([])
        thread, worker, client = start_worker(data_dir=str(tmp / "data"), workspace=str(tmp / "ws"), offline=True)
        window = MainWindow(worker, client)
        window.show()

        def wait(condition):
            deadline = time.monotonic() + 60
            while not condition():
                assert time.monotonic() < deadline, "timed out"
                app.processEvents()
                time.sleep(0.01)

        client.start.emit({{"route": "emulator/deepseek/deepseek-flash", "firstRun": False, "session": ""}})
        wait(lambda: window.session is not None)
        session = Path(window.session.path)
        soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        resource.setrlimit(resource.RLIMIT_FSIZE, (session.stat().st_size + 10, hard))
        window.composer.editor.setPlainText("Please keep this message.")
        window.composer.submit()
        wait(lambda: bool(window.turn_results))
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        print(json.dumps({{
            "composer": window.composer.editor.toPlainText(),
            "error": window.turn_results[0].error,
            "stored": "Please keep this message." in session.read_text(encoding="utf-8"),
        }}))
        window.close()
        stop_worker(thread, worker, client)
        """
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["stored"] is False and result["error"], result
    assert result["composer"] == "Please keep this message."
