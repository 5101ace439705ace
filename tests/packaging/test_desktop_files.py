"""The committed launcher files are valid for the tools distributions run on them."""

from __future__ import annotations

import struct
import subprocess
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from packaging_support import REPO, read_desktop_entry, require_tool

from desktop import __version__
from desktop.host.desktop_entry import DESKTOP_FILE_NAME, render_desktop_entry
from desktop.identity import APP_ID, GUI_COMMAND
from desktop.resources import ICON_SIZES, icon_png, icon_svg

LINUX = REPO / "packaging" / "linux"
DESKTOP_FILE = LINUX / DESKTOP_FILE_NAME
METAINFO = LINUX / f"{APP_ID}.metainfo.xml"


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_committed_entry_is_what_the_installer_renders() -> None:
    assert DESKTOP_FILE.read_text(encoding="utf-8") == render_desktop_entry(GUI_COMMAND)


def test_entry_keys_launch_the_gui_without_a_terminal() -> None:
    entry = read_desktop_entry(DESKTOP_FILE)
    assert entry["Type"] == "Application"
    assert entry["Exec"] == f"{GUI_COMMAND} %F"
    assert entry["Terminal"] == "false"
    assert entry["Icon"] == APP_ID
    assert entry["StartupWMClass"] == APP_ID
    assert "Development" in entry["Categories"].split(";")


def test_desktop_file_validate_accepts_the_entry() -> None:
    tool = require_tool("desktop-file-validate", "desktop-file-utils")
    result = subprocess.run([tool, str(DESKTOP_FILE)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "error" not in (result.stdout + result.stderr).lower()


def test_desktop_file_validate_rejects_a_broken_entry(tmp_path: Path) -> None:
    """The validator check above can fail: a missing Exec and a bad Terminal value are caught."""
    tool = require_tool("desktop-file-validate", "desktop-file-utils")
    broken = tmp_path / DESKTOP_FILE_NAME
    text = render_desktop_entry(GUI_COMMAND).replace("Terminal=false", "Terminal=maybe")
    broken.write_text(text.replace(f"Exec={GUI_COMMAND}\n", ""), encoding="utf-8")
    result = subprocess.run([tool, str(broken)], capture_output=True, text=True)
    assert result.returncode != 0


def test_appstreamcli_validates_the_metainfo() -> None:
    tool = require_tool("appstreamcli", "appstream")
    result = subprocess.run([tool, "validate", "--no-net", str(METAINFO)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_metainfo_uses_the_app_id_everywhere() -> None:
    root = ET.parse(METAINFO).getroot()
    assert root.get("type") == "desktop-application"
    assert root.findtext("id") == APP_ID
    launchable = root.find("launchable")
    assert launchable is not None and launchable.text == DESKTOP_FILE_NAME
    assert root.findtext("icon") == APP_ID
    binaries = {b.text for b in root.iterfind("provides/binary")}
    assert GUI_COMMAND in binaries
    versions = [r.get("version") for r in root.iterfind("releases/release")]
    assert versions[0] == __version__, "add a <release> for the new version to the metainfo"


@pytest.mark.parametrize("size", ICON_SIZES)
def test_every_icon_size_is_rendered(size: int) -> None:
    path = icon_png(size)
    assert png_size(path) == (size, size)
    assert path.stat().st_size > 200, f"{path} looks empty; rerun packaging/make_icons.py"


def test_icon_svg_is_square_svg() -> None:
    root = ET.parse(icon_svg()).getroot()
    assert root.tag.endswith("svg") and root.get("width") == root.get("height")


def test_windows_and_macos_icons_hold_the_pngs() -> None:
    ico = (REPO / "packaging" / "icons" / "pi-desktop.ico").read_bytes()
    reserved, kind, count = struct.unpack("<HHH", ico[:6])
    assert (reserved, kind) == (0, 1) and count >= 5
    dims = {ico[6 + 16 * i] or 256 for i in range(count)}
    assert {16, 32, 48, 256} <= dims
    icns = (REPO / "packaging" / "icons" / "pi-desktop.icns").read_bytes()
    assert icns[:4] == b"icns" and struct.unpack(">I", icns[4:8])[0] == len(icns)
    assert b"ic09" in icns and b"icp4" in icns


def test_the_gui_entry_point_and_icons_ship_in_the_wheel() -> None:
    meta = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert meta["project"]["gui-scripts"][GUI_COMMAND] == "desktop.app:gui_main"
    assert {"*.png", "*.svg"} <= set(meta["tool"]["setuptools"]["package-data"]["*"])
    assert (REPO / "desktop" / "resources" / "__init__.py").is_file()


def test_the_bundle_recipe_names_the_app_id_and_is_windowed() -> None:
    spec = (REPO / "packaging" / "pyinstaller" / "pi-desktop.spec").read_text(encoding="utf-8")
    assert "bundle_identifier=APP_ID" in spec
    assert "console=False" in spec


def test_metainfo_screenshots_are_the_repositorys_and_releases_have_notes() -> None:
    """Software centres show the screenshots by URL: each must be a picture in docs/screenshots/,
    one the default, each with a caption; every release says what it brought."""
    root = ET.parse(METAINFO).getroot()
    shots = root.findall("./screenshots/screenshot")
    assert shots and [s.get("type") for s in shots].count("default") == 1
    for shot in shots:
        assert (shot.findtext("caption") or "").strip()
        url = shot.findtext("image") or ""
        name = url.rsplit("/", 1)[-1]
        assert (
            url.endswith(f"/docs/screenshots/{name}") and (REPO / "docs" / "screenshots" / name).is_file()
        ), url
    for release in root.findall("./releases/release"):
        assert release.find("description") is not None, release.get("version")
