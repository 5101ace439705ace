"""What the journal tests share: ``journal_child.py`` run as a real second process."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from desktop.host.journal import JournalWriter, NoteRow

REPO = Path(__file__).resolve().parents[2]
CHILD = Path(__file__).with_name("journal_child.py")
Spawn = Callable[[Path], tuple[subprocess.Popen[str], str]]


def start_child(
    command: str, arg: Path, env: Mapping[str, str] | None = None, **popen: Any
) -> subprocess.Popen[str]:
    """``journal_child.py command arg`` in a fresh interpreter that imports this checkout."""
    return subprocess.Popen(
        [sys.executable, str(CHILD), command, str(arg)],
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})},
        cwd=REPO,
        **popen,
    )


def tell(child: subprocess.Popen[str], command: str) -> str:
    """Send one command line to the child; its one-line answer."""
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write(command + "\n")
    child.stdin.flush()
    line = child.stdout.readline()
    assert line, "the child process exited unexpectedly"
    return line.strip()


@pytest.fixture
def session(tmp_path: Path) -> Path:
    """A session file holding one note, ``first``, whose writer has closed."""
    path = tmp_path / "s.jsonl"
    with JournalWriter.create(path, cwd="/p", app_version="t") as writer:
        writer.append([NoteRow(level="info", text="first")])
    return path


@pytest.fixture
def spawn_holder() -> Iterator[Spawn]:
    """Starts a process holding a session open for writing; gives it and its state
    (``writable`` or ``read-only``); kills what is still running at the end."""
    started: list[subprocess.Popen[str]] = []

    def spawn(path: Path) -> tuple[subprocess.Popen[str], str]:
        child = start_child(
            "hold", path, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        started.append(child)
        assert child.stdout is not None
        words = child.stdout.readline().split()
        assert words[0] == "ready", words
        return child, words[1]

    yield spawn
    for child in started:
        if child.poll() is None:
            child.kill()
        child.wait(timeout=10)
