"""Files that ship inside the package (icons), found the same way from a wheel or a bundle.

The PNGs are rendered from ``icon.svg`` by ``packaging/make_icons.py`` and committed, so the
running app never needs an SVG renderer (and a frozen bundle can leave QtSvg out).
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

#: Every rendered size, as the hicolor icon theme names its ``<size>x<size>`` folders.
ICON_SIZES: Final = (16, 24, 32, 48, 64, 128, 256, 512)

_HERE: Final = Path(__file__).resolve().parent


def icon_png(size: int) -> Path:
    if size not in ICON_SIZES:
        raise ValueError(f"no {size}px icon; rendered sizes are {', '.join(map(str, ICON_SIZES))}")
    return _HERE / f"icon-{size}.png"


def icon_svg() -> Path:
    return _HERE / "icon.svg"
