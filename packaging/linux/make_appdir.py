"""Lay out an AppDir around the PyInstaller onedir bundle, for ``appimagetool`` to pack.

    python packaging/linux/make_appdir.py dist/pi-desktop AppDir

The AppImage is one file a user downloads, marks executable and runs; inside it the bundle
runs as it does from its folder (Python, Qt and the xcb libraries it collected included).
The AppDir holds the bundle under ``usr/lib/pi-desktop``, an ``AppRun`` that starts it, the
desktop entry and icon at the top (``appimagetool`` requires them there) and the AppStream
metainfo. ``tests/packaging/test_frozen_bundle.py`` runs the result's ``AppRun``.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from desktop.host.desktop_entry import render_desktop_entry  # noqa: E402
from desktop.identity import APP_ID  # noqa: E402
from desktop.resources import ICON_SIZES, icon_png, icon_svg  # noqa: E402

#: What ``AppRun`` starts: the bundle's own executable (the runtime sets ``$APPIMAGE``).
APPRUN = """#!/bin/sh
# Pi Desktop AppImage entry: the PyInstaller bundle inside, with every argument.
HERE="$(dirname "$(readlink -f "$0")")"
exec "$HERE/usr/lib/pi-desktop/pi-desktop" "$@"
"""


def make_appdir(bundle: Path, appdir: Path) -> Path:
    if not (bundle / "pi-desktop").is_file():
        raise SystemExit(f"{bundle} holds no pi-desktop executable; build the bundle first")
    if appdir.exists():
        shutil.rmtree(appdir)
    shutil.copytree(bundle, appdir / "usr" / "lib" / "pi-desktop", symlinks=True)
    (appdir / "usr" / "bin").mkdir(parents=True)
    (appdir / "usr" / "bin" / "pi-desktop").symlink_to("../lib/pi-desktop/pi-desktop")
    apprun = appdir / "AppRun"
    apprun.write_text(APPRUN, encoding="utf-8")
    apprun.chmod(0o755)
    entry = render_desktop_entry("pi-desktop")
    (appdir / f"{APP_ID}.desktop").write_text(entry, encoding="utf-8")
    applications = appdir / "usr" / "share" / "applications"
    applications.mkdir(parents=True)
    (applications / f"{APP_ID}.desktop").write_text(entry, encoding="utf-8")
    hicolor = appdir / "usr" / "share" / "icons" / "hicolor"
    for size in ICON_SIZES:
        folder = hicolor / f"{size}x{size}" / "apps"
        folder.mkdir(parents=True)
        shutil.copyfile(icon_png(size), folder / f"{APP_ID}.png")
    (hicolor / "scalable" / "apps").mkdir(parents=True)
    shutil.copyfile(icon_svg(), hicolor / "scalable" / "apps" / f"{APP_ID}.svg")
    shutil.copyfile(icon_png(256), appdir / f"{APP_ID}.png")
    (appdir / ".DirIcon").symlink_to(f"{APP_ID}.png")
    metainfo = appdir / "usr" / "share" / "metainfo"
    metainfo.mkdir(parents=True)
    shutil.copyfile(
        REPO / "packaging" / "linux" / f"{APP_ID}.metainfo.xml", metainfo / f"{APP_ID}.metainfo.xml"
    )
    return appdir


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: make_appdir.py BUNDLE_FOLDER APPDIR", file=sys.stderr)
        return 2
    print(f"AppDir ready: {make_appdir(Path(argv[1]), Path(argv[2]))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
