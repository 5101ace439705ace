"""The bundle against the venv: build time, size, and time to the first finished turn.

Two first turns, each from a fresh process and a fresh data folder, interleaved bundle / venv
through ``_bench.compare`` (each once first, uncounted: page caches warm on both sides):
``prompt`` on the emulator route until the process exits (the headless command), and the
window's self-test until it prints ``turn-finished`` (start-up, a session, a turn with a tool
call). The anchor is the same command from this checkout's Python (``python -m desktop``).

    PYTHONPATH=$PWD python benchmarks/bundle_bench.py            # builds into a temporary folder
    PYTHONPATH=$PWD python benchmarks/bundle_bench.py --dist DIR  # a bundle built before
"""

from __future__ import annotations

import argparse
import functools
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import compare, report

REPO = Path(__file__).resolve().parents[1]
SPEC_FILE = REPO / "packaging" / "pyinstaller" / "pi-desktop.spec"
ROUTE = "emulator/anthropic/claude-opus-5-5"


def environment(data: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_AUTH_TOKEN"))}
    env.update(
        PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
        QT_QPA_PLATFORM="offscreen",
        PI_DESKTOP_DATA_DIR=str(data),
        PYTHONPATH=str(REPO),
    )
    return env


def first_turn(command: list[str], window: bool) -> float:
    """Wall ms from start to the first finished turn, in a fresh data folder."""
    with tempfile.TemporaryDirectory() as scratch:
        data = Path(scratch)
        if window:
            argv = [*command, "--smoke-test"]
        else:
            argv = [*command, "prompt", str(data / "s.jsonl"), "--model", ROUTE, "hello"]
        started = time.perf_counter()
        process = subprocess.Popen(
            argv, env=environment(data), stdout=subprocess.PIPE, text=True, cwd=scratch
        )
        assert process.stdout is not None
        finished = None
        said: list[str] = []
        for line in process.stdout:
            said.append(line.rstrip())
            if line.startswith("turn-finished:") and finished is None:
                finished = time.perf_counter() - started
        if process.wait(timeout=300) != 0:
            raise SystemExit(f"{argv} failed ({process.returncode}); it said: " + " | ".join(said[-4:]))
        return (finished if window and finished is not None else time.perf_counter() - started) * 1000


def build(dist: Path) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "PyInstaller", "--noconfirm", "--clean", "--log-level", "WARN",
         "--distpath", str(dist), "--workpath", str(dist.parent / "build"), str(SPEC_FILE)],
        check=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dist", type=Path, help="a dist folder holding pi-desktop/ (default: build one)")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    scratch = tempfile.TemporaryDirectory()
    dist = args.dist
    if dist is None:
        dist = Path(scratch.name) / "dist"
        print(f"build (clean, onedir): {build(dist):.1f} s")
    folder = dist / "pi-desktop"
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())
    print(f"bundle: {size / 1e6:.0f} MB in {sum(1 for _ in folder.rglob('*'))} files")
    frozen = [str(folder / "pi-desktop")]
    venv = [sys.executable, "-m", "desktop"]
    for label, window in (("prompt (headless)", False), ("window self-test to turn-finished", True)):
        times = compare(
            {
                "bundle": functools.partial(first_turn, frozen, window),
                "venv": functools.partial(first_turn, venv, window),
            },
            args.runs,
        )
        report(
            f"bundle: {label}, cold process",
            times["bundle"],
            times["venv"],
            anchor_name="the same from the venv (python -m desktop)",
            unit="ms wall",
        )


if __name__ == "__main__":
    main()
