"""Give the running Qt app the identity the desktop entry promised.

The application name becomes the X11 ``WM_CLASS`` class (Qt reads it when the first window
is created) and the desktop file name becomes the Wayland app id; both must equal the entry's
``StartupWMClass`` / file name so docks match the window to its launcher and icon. The
display name is what users read (Qt appends it to other windows' titles on X11).
"""

from __future__ import annotations

from PySide6.QtGui import QGuiApplication, QIcon

from desktop.identity import APP_ID, DISPLAY_NAME, ORGANIZATION
from desktop.resources import ICON_SIZES, icon_png


def app_icon() -> QIcon:
    icon = QIcon()
    for size in ICON_SIZES:
        icon.addFile(str(icon_png(size)))
    return icon


def apply_identity(app: QGuiApplication) -> None:
    app.setApplicationName(APP_ID)
    app.setApplicationDisplayName(DISPLAY_NAME)
    app.setOrganizationName(ORGANIZATION)
    app.setDesktopFileName(APP_ID)
    app.setWindowIcon(app_icon())
