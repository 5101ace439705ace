"""Before Qt starts, a missing system library or display is one line naming what to install.

The lookup reads the real xcb plugin of the installed PySide6 (its ELF ``NEEDED`` entries and
those of the Qt libraries it pulls in) and is pointed at folders without some of the libraries:
a fresh Debian lacks ``libxcb-icccm4`` and ``libxcb-keysyms1``, and Qt's own message then asks
for ``libxcb-cursor0`` before aborting with exit code 134.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from packaging_support import first_run_env, missing_tool

from desktop.ui.platform_libraries import (
    EXIT_NO_PLATFORM,
    elf_dependencies,
    missing_libraries,
    platform_problem,
    qt_folder,
    system_library_dirs,
)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ELF and X11 are Linux's")

QT = qt_folder()
XCB = QT / "plugins" / "platforms" / "libqxcb.so" if QT else Path("libqxcb.so")
FRESH_DEBIAN_LACKS = ("libxcb-icccm.so.4", "libxcb-keysyms.so.1")


def never_loads(_name: str) -> bool:
    return False


def system_libraries_of_xcb() -> dict[str, Path]:
    """Every system library the xcb plugin needs, as this machine resolves it."""
    assert QT is not None
    found: dict[str, Path] = {}
    missing = missing_libraries(XCB, [QT / "lib"], [], never_loads)
    dirs = system_library_dirs({})
    for name in missing:
        path = next((d / name for d in dirs if (d / name).exists()), None)
        if path is None:
            missing_tool(f"{name} is not installed here (apt-get install the packages .ci/run names)")
        found[name] = path
    return found


def test_the_xcb_plugin_needs_what_qt_asks_for() -> None:
    needed, _runpath = elf_dependencies(XCB)
    assert "libQt6XcbQpa.so.6" in needed  # the xcb libraries hang off Qt's own xcb library
    assert QT is not None and "libxcb-cursor.so.0" in elf_dependencies(QT / "lib" / "libQt6XcbQpa.so.6")[0]


def test_a_fresh_debian_is_told_which_packages_to_install(tmp_path: Path) -> None:
    """A library folder with everything but the two a minimal Debian lacks: exactly those two,
    with their Debian and Fedora package names, on one line."""
    libraries = tmp_path / "lib"
    libraries.mkdir()
    for name, path in system_libraries_of_xcb().items():
        if name not in FRESH_DEBIAN_LACKS:
            (libraries / name).symlink_to(path)
    problem = platform_problem({"DISPLAY": ":0"}, qt=QT, system_dirs=[libraries], can_load=never_loads)
    assert problem is not None and "\n" not in problem
    assert "(libxcb-icccm.so.4, libxcb-keysyms.so.1, for Qt's xcb platform)" in problem
    assert "Debian/Ubuntu: sudo apt install libxcb-icccm4 libxcb-keysyms1;" in problem
    assert "Fedora: sudo dnf install xcb-util-wm xcb-util-keysyms." in problem
    assert "cursor" not in problem


def test_an_empty_system_names_every_xcb_package(tmp_path: Path) -> None:
    problem = platform_problem({"DISPLAY": ":0"}, qt=QT, system_dirs=[tmp_path], can_load=never_loads)
    assert problem is not None
    for package in ("libxcb-cursor0", "libxcb-icccm4", "libxcb-keysyms1", "libxkbcommon-x11-0", "libegl1"):
        assert f" {package} " in problem
    # The offscreen plugin needs none of them: no X11 library is asked for there.
    offscreen = platform_problem(
        {"QT_QPA_PLATFORM": "offscreen"}, qt=QT, system_dirs=[tmp_path], can_load=never_loads
    )
    assert offscreen is not None and "xcb" not in offscreen


def test_this_machine_has_what_the_window_needs() -> None:
    """Where the packages are installed (CI installs them), the check lets Qt start."""
    system_libraries_of_xcb()
    assert platform_problem({"DISPLAY": ":0"}) is None
    assert platform_problem({"QT_QPA_PLATFORM": "offscreen"}) is None


def test_no_display_is_one_line_and_exit_2_instead_of_qts_abort(tmp_path: Path) -> None:
    env = first_run_env(PI_DESKTOP_DATA_DIR=str(tmp_path))
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM", "PI_DESKTOP_SMOKE_EXIT"):
        env.pop(name, None)
    result = subprocess.run(
        [sys.executable, "-m", "desktop"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == EXIT_NO_PLATFORM, result.stderr
    assert result.stderr.strip().splitlines() == [
        "pi-desktop: no display to open the window on (DISPLAY and WAYLAND_DISPLAY are not set); "
        "start it from a desktop session, or use the headless commands (pi-desktop --help)"
    ]
    assert not (tmp_path / "logs").exists(), "refused before the window's start-up"
