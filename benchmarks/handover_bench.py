"""Second-launch benchmark: `pi-desktop PATH` handing its file to a running window (design G8).

Run from the repository root::

    PYTHONPATH=$PWD QT_QPA_PLATFORM=offscreen python benchmarks/handover_bench.py [--rounds 15] [--json out.json]

A window runs (offscreen, a private data dir) on a session. Each round then runs, as fresh
processes, alternating which goes first:

* the subject: ``pi-desktop PATH``, the installed console script a user or file manager runs; it
  finds the running window, hands the path over, waits for the acknowledgement and exits 0;
* the anchor: the least any hand-over can cost, a Python that imports only ``QtNetwork``,
  connects to the same socket, sends the same request and reads the answer.

Both are measured as CPU time (user + system of the child, ``RUSAGE_CHILDREN``), so other load
on the machine does not count; min and median over the rounds and their ratio are reported.
The target is a ratio of at most 3: the launcher may pay for its argument parsing and the data
dir lookup, never for loading the window.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

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


def pi_desktop() -> list[str]:
    script = Path(sys.executable).with_name("pi-desktop")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "desktop"]


def cpu_of(argv: Sequence[str], env: dict[str, str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(list(argv), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.decode()[-500:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--json", type=Path, default=None)
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
            cpu_of(subject, env)  # warm byte-code and page caches for both sides
            cpu_of(anchor, env)
            subject_times: list[float] = []
            anchor_times: list[float] = []
            for index in range(args.rounds):
                pair = [(subject, subject_times), (anchor, anchor_times)]
                for command, out in pair if index % 2 == 0 else reversed(pair):
                    out.append(cpu_of(command, env))
        finally:
            window.terminate()
            window.wait(timeout=30)

    result = {
        "rounds": args.rounds,
        "subject_ms": {"min": min(subject_times) * 1000, "median": statistics.median(subject_times) * 1000},
        "anchor_ms": {"min": min(anchor_times) * 1000, "median": statistics.median(anchor_times) * 1000},
        "ratio_min": min(subject_times) / min(anchor_times),
        "ratio_median": statistics.median(subject_times) / statistics.median(anchor_times),
    }
    print(f"{'':28} {'min ms':>8} {'median ms':>10}")
    print(
        f"{'pi-desktop PATH (hand-over)':28} {result['subject_ms']['min']:8.0f} {result['subject_ms']['median']:10.0f}"
    )
    print(
        f"{'bare QLocalSocket client':28} {result['anchor_ms']['min']:8.0f} {result['anchor_ms']['median']:10.0f}"
    )
    print(f"ratio: {result['ratio_min']:.2f}x (min), {result['ratio_median']:.2f}x (median); target <= 3x")
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
