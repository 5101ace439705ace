"""What the app creates is the user's alone, whatever the umask (design X22).

Before: sessions were created 0644 and their folders with the umask's mode (0755 under the
common 022), so every local user could read whole conversations; logs, exports and settings
followed the umask too. Existing files and folders keep the modes they have.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.host.journal.lock import lock_path_for
from desktop.host.journal.writer import JournalWriter
from desktop.host.logging_setup import configure_logging
from desktop.host.settings import upgrade_settings_file

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes (Windows: the profile ACL)")


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.fixture(params=[0o022, 0o002, 0o000])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


@pytest.fixture
def qsettings_folder(tmp_path: Path) -> Iterator[Path]:
    """QSettings in a temporary folder that does not exist yet."""
    from PySide6.QtCore import QCoreApplication, QSettings

    folder = tmp_path / "qsettings"
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(folder))
    QCoreApplication.setOrganizationName("pi-desktop-tests")
    QCoreApplication.setApplicationName("pi-desktop-tests")
    yield folder


def test_a_new_session_and_its_new_folders_are_private(umask: int, tmp_path: Path) -> None:
    data = tmp_path / "data"
    path = data / "sessions" / "2026" / "s.jsonl"
    with JournalWriter.create(path, cwd=tmp_path, app_version="0.1.0"):
        assert _mode(path) == 0o600
        assert _mode(lock_path_for(path)) == 0o600
        for folder in (data, data / "sessions", data / "sessions" / "2026"):
            assert _mode(folder) == 0o700, folder


def test_an_existing_shared_folder_keeps_its_mode(umask: int, tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o755)
    JournalWriter.create(shared / "s.jsonl", cwd=tmp_path, app_version="0.1.0").close()
    assert _mode(shared) == 0o755
    assert _mode(shared / "s.jsonl") == 0o600


def test_logs_are_private_and_stay_so_after_a_rollover(umask: int, tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    path = configure_logging(folder)
    handler = next(h for h in logging.getLogger().handlers if h.get_name() == "pi-desktop-file")
    try:
        logging.getLogger("test").warning("one line")
        assert _mode(folder) == 0o700 and _mode(path) == 0o600
        assert isinstance(handler, logging.handlers.RotatingFileHandler)
        handler.doRollover()
        logging.getLogger("test").warning("after the rollover")
        assert _mode(path) == 0o600 and _mode(path.with_name(path.name + ".1")) == 0o600
    finally:
        logging.getLogger().removeHandler(handler)
        handler.close()


def test_settings_written_by_the_app_are_private_and_an_existing_file_keeps_its_mode(
    umask: int, tmp_path: Path
) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"version": 0}\n')
    path.chmod(0o640)
    assert upgrade_settings_file(path)
    assert _mode(path) == 0o640  # the user's file keeps the mode the user gave it
    assert _mode(tmp_path / "settings.json.v0.bak") == 0o600  # the backup is new: private


def test_an_export_is_private_and_an_overwritten_file_keeps_its_mode(umask: int, tmp_path: Path) -> None:
    from desktop.ui.worker import _write_bytes

    new = tmp_path / "request.json"
    _write_bytes(str(new), b"{}")
    assert _mode(new) == 0o600 and new.read_bytes() == b"{}"
    old = tmp_path / "shared.json"
    old.write_bytes(b"old")
    old.chmod(0o644)
    _write_bytes(str(old), b"new")
    assert _mode(old) == 0o644 and old.read_bytes() == b"new"


def test_window_settings_made_by_the_app_are_private(umask: int, qsettings_folder: Path) -> None:
    """Open Recent lists session paths; QSettings made its file with the umask's mode."""
    from desktop.ui.worker import _write_settings

    _write_settings({"recent": ["/home/me/secret-project/s.jsonl"]})
    files = [p for p in qsettings_folder.rglob("*") if p.is_file()]
    assert files and all(_mode(p) == 0o600 for p in files)
    assert all(_mode(p) == 0o700 for p in qsettings_folder.rglob("*") if p.is_dir())
    _write_settings({"recent": []})  # rewritten by Qt: the mode stays
    assert all(_mode(p) == 0o600 for p in qsettings_folder.rglob("*") if p.is_file())
