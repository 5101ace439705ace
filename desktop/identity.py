"""Who the app says it is to the desktop: one id used everywhere a launcher looks.

The same reverse-DNS id names the desktop entry file, the AppStream component, the icon in
the hicolor theme, the X11 ``WM_CLASS`` class, the Wayland app id and the macOS bundle
identifier. If any of them drifted apart, docks would show a second, icon-less entry for the
running window instead of highlighting the launcher that started it.
"""

from __future__ import annotations

from typing import Final

APP_ID: Final = "io.github.pidesktop.PiDesktop"
DISPLAY_NAME: Final = "Pi Desktop"
ORGANIZATION: Final = "pi-desktop"
#: The no-console entry point that launchers run (``[project.gui-scripts]`` in pyproject.toml).
GUI_COMMAND: Final = "pi-desktop-gui"
