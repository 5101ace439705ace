"""Second-launch benchmark: `pi-desktop PATH` handing its file to a running window (design G8).

Run from the repository root::

    PYTHONPATH=$PWD QT_QPA_PLATFORM=offscreen python benchmarks/handover_bench.py [--rounds 15]

A window runs (offscreen, a private data dir) on a session. Each round then runs, as fresh
processes, alternating which goes first:

* the subject: ``pi-desktop PATH``, the installed console script a user or file manager runs; it
  finds the running window, hands the path over, waits for the acknowledgement and exits 0;
* the anchor: the least any hand-over can cost, a Python that imports only ``QtNetwork``,
  connects to the same socket, sends the same request and reads the answer.

Both are measured as CPU time (user + system of the child, ``_bench.child_cpu_ms``), so other
load on the machine counts far less; interleaved through ``_bench.compare`` (each side once
first, uncounted: caches warm on both sides), min and median and their ratio are reported.
The target is a ratio of at most 3: the launcher may pay for its argument parsing and the data
dir lookup, never for loading the window.
"""

from __future__ import annotations

import argparse
import functools
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import child_cpu_ms, compare, pi_desktop, report

ROOT = Path(__file__).resolve().parent.parent

ANCHOR = (
    "import sys\n"
    "from PySide6.QtNetwork import QLocalSocket\n"
    "s = QLocalSocket()\n"
    "s.connectToServer(sys.argv[1])\n"
    "assert s.waitForConnected(5000)\n"
    "s.write(sys.argv[2].encode() + b'\\n')\n"
    "s.waitForBytesWritten(5000)\n"
    "data = b''\n"
    "while b'\\n' not in data and s.waitForReadyRead(5000):\n"
    "    data += bytes(s.readAll().data())\n"
    "assert data.startswith(b'ok'), data\n"
)


def cpu_ms(argv: Sequence[str], env: dict[str, str]) -> float:
    return child_cpu_ms(argv, env=env)[0]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args(argv)

    from desktop.host.journal.writer import JournalWriter
    from desktop.ui.single_instance import encode_request, server_name

    with tempfile.TemporaryDirectory(prefix="pi-handover-") as folder:
        base = Path(folder)
        data = base / "data"
        session = base / "bench-session.jsonl"
        JournalWriter.create(session, cwd=base, app_version="bench").close()
        env = {
            **os.environ,
            "PI_DESKTOP_DATA_DIR": str(data),
            "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen"),
            "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
            "PI_DESKTOP_OFFLINE": "1",
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        }
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env.pop("PI_DESKTOP_SMOKE_EXIT", None)
        name = server_name(data)
        request = encode_request([str(session)]).decode().strip()
        subject = [*pi_desktop(), str(session)]
        anchor = [sys.executable, "-c", ANCHOR, name, request]

        window = subprocess.Popen(subject, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 90
            while subprocess.run(anchor, env=env, capture_output=True, check=False).returncode != 0:
                if window.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("the window did not start listening within 90 s")
                time.sleep(0.5)
            times = compare(
                {
                    "subject": functools.partial(cpu_ms, subject, env),
                    "anchor": functools.partial(cpu_ms, anchor, env),
                },
                args.rounds,
            )
        finally:
            window.terminate()
            try:
                window.wait(timeout=15)
            except subprocess.TimeoutExpired:  # the window did not close on SIGTERM
                window.kill()
                window.wait()

    report(
        "pi-desktop PATH handing over to the running window",
        times["subject"],
        times["anchor"],
        anchor_name="a bare QLocalSocket client",
        unit="ms CPU",
        budget=3.0,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
