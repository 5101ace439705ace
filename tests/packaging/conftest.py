"""A private XDG data dir, so installing the desktop entry never touches the real menu."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "xdg-data"
    home.mkdir()
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    return home
