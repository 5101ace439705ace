"""A FIFO, a device or a directory is refused before it is opened, everywhere (design X24).

``status`` and ``payload`` refused them already; ``whatif`` and the window's File → Open (the
worker's ``inspect_ops.file_format``, which the session browser's entries open through too)
read the first lines of the file with a plain ``open``, which blocks on a FIFO until someone
writes to it: the command hung, and the window's worker with it.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop.ui.inspect_ops import file_format
from tests.cli.helpers import run_process

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and /dev are POSIX")

#: Far beyond what a refusal takes; only a read blocked on the FIFO gets near it.
HANG = 120.0


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "session.jsonl"
    os.mkfifo(path)
    yield path
    # Had anything blocked opening it for reading, a writer lets it go (and the test end).
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:
        return
    os.close(fd)


def _finishes(call: Callable[[], Any]) -> Any:
    """``call()``'s result, run on a thread so a blocked open fails the test instead of hanging it."""
    result: list[Any] = []
    thread = threading.Thread(target=lambda: result.append(call()), daemon=True)
    thread.start()
    thread.join(HANG)
    assert result, "blocked reading the file"
    return result[0]


def test_whatif_refuses_a_fifo_a_device_and_a_directory(fifo: Path, tmp_path: Path) -> None:
    for path, kind in ((fifo, "a FIFO"), (Path("/dev/null"), "a character device"), (tmp_path, "folder")):
        done = run_process(
            "whatif", str(path), "--routes", "anthropic/claude-opus-5-5", cwd=tmp_path, timeout=HANG
        )
        assert done.code == 2, done.stderr
        lines = done.err_lines
        assert len(lines) == 1 and str(path) in lines[0] and kind in lines[0], done.stderr


def test_the_windows_open_refuses_a_fifo(fifo: Path) -> None:
    fmt, description = _finishes(lambda: file_format(fifo))
    assert fmt == "unknown" and "FIFO" in description and str(fifo) in description
