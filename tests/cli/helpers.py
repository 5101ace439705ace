"""Running the command line in tests: in-process (fast, captured) or as a real process."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from desktop.host.credentials import API_KEY_ENV

REPO = Path(__file__).resolve().parents[2]
EMULATOR_MODEL = "emulator/anthropic/claude-opus-5-5"
#: Every provider key variable a developer machine might export (the credentials table's, and
#: Google's generic one); tests run without them.
KEY_VARIABLES = tuple(sorted({n for names in API_KEY_ENV.values() for n in names} | {"GOOGLE_API_KEY"}))


@dataclass(frozen=True)
class Run:
    code: int
    stdout: str
    stderr: str

    @property
    def err_lines(self) -> list[str]:
        return self.stderr.splitlines()


class _Buffered(io.TextIOWrapper):
    """A text stream with a ``buffer``, as the commands write raw bytes to ``sys.stdout.buffer``."""


@contextlib.contextmanager
def _captured() -> Iterator[tuple[_Buffered, _Buffered]]:
    out = _Buffered(io.BytesIO(), encoding="utf-8", write_through=True)
    err = _Buffered(io.BytesIO(), encoding="utf-8", write_through=True)
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        yield out, err
    finally:
        sys.stdout, sys.stderr = saved


def run_main(*args: str, stdin: str | None = None) -> Run:
    """``desktop.app.main(args)`` in this process with stdout and stderr captured."""
    from desktop.app import main

    saved_stdin = sys.stdin
    if stdin is not None:
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode()), encoding="utf-8")
    try:
        with _captured() as (out, err):
            code = main(list(args))
            out.flush()
            err.flush()
            stdout = out.buffer.getvalue().decode("utf-8", "replace")  # type: ignore[attr-defined]
            stderr = err.buffer.getvalue().decode("utf-8", "replace")  # type: ignore[attr-defined]
    finally:
        sys.stdin = saved_stdin
    return Run(code, stdout, stderr)


def cli_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}
    for name in KEY_VARIABLES:
        env.pop(name, None)
    env.update(extra or {})
    return env


def run_process(
    *args: str,
    cwd: Path,
    stdin: str | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> Run:
    """``python -m desktop ARGS`` as a real process."""
    done = subprocess.run(
        [sys.executable, "-m", "desktop", *args],
        cwd=cwd,
        env=cli_env(env),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return Run(done.returncode, done.stdout, done.stderr)


def snapshot(folder: Path) -> dict[str, tuple[int, int, bytes | None]]:
    """Every entry under ``folder`` with its size, mtime and (for regular files) bytes."""
    state: dict[str, tuple[int, int, bytes | None]] = {}
    for path in sorted(folder.rglob("*")):
        info = path.lstat()
        data = (
            path.read_bytes()
            if path.is_file() and not path.is_symlink() and os.access(path, os.R_OK)
            else None
        )
        state[str(path.relative_to(folder))] = (info.st_size, info.st_mtime_ns, data)
    return state


def assert_one_line_error(run: Run, command: str, code: int, *needles: str) -> None:
    assert run.code == code, (run.code, run.stderr)
    assert "Traceback" not in run.stderr
    lines = run.err_lines
    assert len(lines) == 1, lines
    prefix = f"pi-desktop {command}: " if command else "pi-desktop: "
    assert lines[0].startswith(prefix), lines
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


def make_session(folder: Path, name: str = "s.jsonl", *texts: str) -> Path:
    """A real session written by ``prompt`` on the in-process emulator."""
    path = folder / name
    for text in texts or ("hello",):
        run = run_main("prompt", str(path), "--model", EMULATOR_MODEL, "--workspace", str(folder), text)
        assert run.code == 0, run.stderr
    return path


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def write_lines(path: Path, lines: Sequence[bytes]) -> None:
    path.write_bytes(b"".join(lines))
