"""The file tools refuse or skip a FIFO in the workspace instead of blocking on it (design X24).

Before: ``read`` and ``grep`` read every file with a plain ``open``; a FIFO in the workspace (an
unpacked archive can hold one) blocked the worker thread until someone wrote to it, and Stop
cannot end a blocked ``open``.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop.host.tools.executor import HostExecutor
from tests.tools.conftest import run_tool, text_of

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs are POSIX")
#: Far beyond what the tools take; only a read blocked on the FIFO gets near it.
HANG = 120.0


@pytest.fixture
def fifo(workspace: Path) -> Iterator[Path]:
    path = workspace / "pipe.txt"
    os.mkfifo(path)
    yield path
    with contextlib.suppress(OSError):  # had anything blocked opening it, a writer lets it go
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))


def _finishes(call: Callable[[], Any]) -> Any:
    result: list[Any] = []
    thread = threading.Thread(target=lambda: result.append(call()), daemon=True)
    thread.start()
    thread.join(HANG)
    assert result, "blocked reading the FIFO"
    return result[0]


def test_read_refuses_a_fifo(host: HostExecutor, fifo: Path) -> None:
    outcome = _finishes(lambda: run_tool(host, "read", path="pipe.txt"))
    assert outcome.is_error and "FIFO" in text_of(outcome)


def test_grep_skips_a_fifo_and_searches_the_rest(host: HostExecutor, fifo: Path) -> None:
    outcome = _finishes(lambda: run_tool(host, "grep", pattern="hello"))
    assert not outcome.is_error and "hello.txt:1: hello world" in text_of(outcome)


def test_grep_searches_a_giant_file_in_its_head_and_says_so(
    host: HostExecutor, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: every file was read whole into memory, a multi-gigabyte one included."""
    from desktop.host.tools import grep

    monkeypatch.setattr(grep, "MAX_FILE_BYTES", 1000)
    (workspace / "giant.log").write_text("needle early\n" + "x" * 2000 + "\nneedle late\n")
    outcome = run_tool(host, "grep", pattern="needle")
    text = text_of(outcome)
    assert "giant.log:1: needle early" in text and "needle late" not in text
    assert "Searched only the first" in text and "giant.log" in text.rsplit("[", 1)[1]
    assert outcome.details is not None and outcome.details["filesTruncated"] == ["giant.log"]
