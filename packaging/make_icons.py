"""Render the app icon from its SVG into every PNG size, plus Windows .ico and macOS .icns.

A dev script, run by hand after editing the master artwork ``resources/icon.svg``; it writes
the shipped copies into ``desktop/resources/`` (the SVG itself and every PNG size) and the
bundle containers into ``packaging/icons/``. Its outputs are committed so neither the wheel
build nor PyInstaller needs an SVG renderer or Pillow::

    QT_QPA_PLATFORM=offscreen python packaging/make_icons.py

The .ico and .icns containers hold PNG streams, which every supported Windows and macOS
version reads, so they are written here with plain ``struct`` packing.
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

ROOT = Path(__file__).resolve().parent.parent
SVG = ROOT / "resources" / "icon.svg"
PNG_DIR = ROOT / "desktop" / "resources"
ICON_DIR = ROOT / "packaging" / "icons"
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
#: icns element types that hold PNG data, by pixel size.
ICNS_TYPES = {16: b"icp4", 32: b"icp5", 64: b"icp6", 128: b"ic07", 256: b"ic08", 512: b"ic09"}


def render(renderer: QSvgRenderer, size: int) -> bytes:
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter)
    painter.end()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):
        raise RuntimeError(f"Qt could not encode the {size}px icon as PNG")
    return bytes(data.data())


def ico(pngs: dict[int, bytes]) -> bytes:
    sizes = [s for s in ICO_SIZES if s in pngs]
    header = struct.pack("<HHH", 0, 1, len(sizes))
    offset = len(header) + 16 * len(sizes)
    entries, blobs = b"", b""
    for size in sizes:
        blob = pngs[size]
        dim = 0 if size >= 256 else size  # 0 means 256 in an ICONDIRENTRY
        entries += struct.pack("<BBBBHHII", dim, dim, 0, 0, 1, 32, len(blob), offset)
        offset += len(blob)
        blobs += blob
    return header + entries + blobs


def icns(pngs: dict[int, bytes]) -> bytes:
    body = b"".join(
        kind + struct.pack(">I", 8 + len(pngs[size])) + pngs[size] for size, kind in ICNS_TYPES.items()
    )
    return b"icns" + struct.pack(">I", 8 + len(body)) + body


def main() -> int:
    _app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    renderer = QSvgRenderer(str(SVG))
    if not renderer.isValid():
        print(f"error: {SVG} is not an SVG that Qt can render", file=sys.stderr)
        return 1
    (PNG_DIR / "icon.svg").write_bytes(SVG.read_bytes())
    pngs = {size: render(renderer, size) for size in SIZES}
    for size, blob in pngs.items():
        (PNG_DIR / f"icon-{size}.png").write_bytes(blob)
    ICON_DIR.mkdir(parents=True, exist_ok=True)
    (ICON_DIR / "pi-desktop.ico").write_bytes(ico(pngs))
    (ICON_DIR / "pi-desktop.icns").write_bytes(icns(pngs))
    print(f"wrote {len(pngs)} PNGs to {PNG_DIR} and .ico/.icns to {ICON_DIR}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
