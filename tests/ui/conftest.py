"""Window tests run offscreen and fail on any unexpected Qt warning (as qutebrowser's do)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

#: Messages the offscreen platform prints for things it cannot do; they say nothing about us.
IGNORED_QT_MESSAGES = (
    r"This plugin does not support propagateSizeHints\(\)",
    r"This plugin does not support raise\(\)",
    r"This plugin does not support grabbing the keyboard",
    r"QFont::setPointSizeF: Point size <= 0",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.qt_log_level_fail("WARNING"))
            item.add_marker(pytest.mark.qt_log_ignore(*IGNORED_QT_MESSAGES))


@pytest.fixture
def qsettings_isolated(tmp_path: Path) -> Iterator[Path]:
    """QSettings in a temporary folder, so geometry and recent sessions never touch the home."""
    from PySide6.QtCore import QCoreApplication, QSettings

    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp_path / "qsettings"))
    QCoreApplication.setOrganizationName("pi-desktop-tests")
    QCoreApplication.setApplicationName("pi-desktop-tests")
    yield tmp_path / "qsettings"
