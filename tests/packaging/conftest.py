"""A private XDG data dir (installing the desktop entry never touches the real menu), a private X server."""

from __future__ import annotations

import os
import select
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from packaging_support import require_tool


@pytest.fixture
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "xdg-data"
    home.mkdir()
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    return home


@pytest.fixture
def x_display() -> Iterator[str]:
    xvfb = require_tool("Xvfb", "xvfb")
    read_end, write_end = os.pipe()
    server = subprocess.Popen(
        [xvfb, "-displayfd", str(write_end), "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
        pass_fds=(write_end,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write_end)
    try:
        ready, _, _ = select.select([read_end], [], [], 20)
        number = os.read(read_end, 64).decode().strip() if ready else ""
        if not number:
            pytest.fail("Xvfb did not report a display number within 20s")
        yield f":{number}"
    finally:
        os.close(read_end)
        server.terminate()
        server.wait(timeout=10)
