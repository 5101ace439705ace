"""Start the app the way a Linux launcher does and see its window appear on a real X server.

The installed desktop entry's Exec line is split with the launcher's quoting rules and run
under Xvfb with the xcb platform plugin (not offscreen), as a double-click would; xdotool
then finds the window by its title and by the WM_CLASS the entry's StartupWMClass names.
"""

from __future__ import annotations

from pathlib import Path

from packaging_support import (
    launched,
    parse_exec,
    quit_by_keyboard,
    read_desktop_entry,
    require_tool,
    wait_for_window,
    write_console_script,
    xdotool,
)

from desktop.host.desktop_entry import (
    DesktopEntryError,
    find_gui_executable,
    install_desktop_entry,
)
from desktop.identity import APP_ID, GUI_COMMAND
from desktop.ui.launch import WINDOW_TITLE
from desktop.ui.open_files import app_part


def gui_executable(tmp_path: Path) -> Path:
    """The installed ``pi-desktop-gui`` (CI installs the package); a pip-style script otherwise."""
    try:
        return find_gui_executable()
    except DesktopEntryError:
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        return write_console_script(bin_dir / GUI_COMMAND, "desktop.app:gui_main")


def test_desktop_entry_exec_opens_the_main_window(x_display: str, tmp_path: Path) -> None:
    require_tool("xdotool", "xdotool")
    data_home = tmp_path / "share"
    entry = install_desktop_entry(data_home, gui_executable(tmp_path)).desktop_file
    argv = parse_exec(read_desktop_entry(entry)["Exec"])
    app_data = tmp_path / "app-data"
    with launched(
        argv,
        tmp_path,
        DISPLAY=x_display,
        QT_QPA_PLATFORM="xcb",
        XDG_DATA_HOME=str(data_home),
        PI_DESKTOP_DATA_DIR=str(app_data),
    ) as app:
        window = wait_for_window(x_display, app)
        assert app_part(xdotool(x_display, "getwindowname", window).stdout.strip()) == WINDOW_TITLE
        by_class = xdotool(x_display, "search", "--class", f"^{APP_ID}$").stdout.split()
        assert window in by_class, "WM_CLASS must match the entry's StartupWMClass"
        err = quit_by_keyboard(x_display, window, app)
    assert app.returncode == 0, err
    log = (app_data / "logs" / "pi-desktop.log").read_text(encoding="utf-8")
    assert "initial route: emulator" in log
    assert "exiting with status 0" in log
