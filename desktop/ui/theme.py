"""Light and dark palettes that follow the system, and the colours of row kinds.

Qt 6.5+ reports the system colour scheme (``QStyleHints.colorScheme``) and signals changes;
the app uses the Fusion style with a palette for each scheme so both look the same on every
platform, and re-applies it when the desktop switches. ``PI_DESKTOP_THEME=dark|light`` forces
one (screenshots, tests).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from desktop.ui import rowinfo

THEME_ENV = "PI_DESKTOP_THEME"


def system_is_dark() -> bool:
    forced = os.environ.get(THEME_ENV, "").strip().lower()
    if forced in ("dark", "light"):
        return forced == "dark"
    hints = QGuiApplication.styleHints()
    return hints.colorScheme() == Qt.ColorScheme.Dark


_ROLE = QPalette.ColorRole
#: Each role's (light, dark) colour, as the kinds' accents below.
_PALETTES = {
    _ROLE.Window: ("#f3f4f6", "#2b2d31"),
    _ROLE.WindowText: ("#1f2328", "#dfe1e5"),
    _ROLE.Base: ("#ffffff", "#1e1f22"),
    _ROLE.AlternateBase: ("#f7f8fa", "#25272a"),
    _ROLE.ToolTipBase: ("#ffffe8", "#2b2d31"),
    _ROLE.ToolTipText: ("#1f2328", "#dfe1e5"),
    _ROLE.Text: ("#1f2328", "#dfe1e5"),
    _ROLE.Button: ("#eceef1", "#36383d"),
    _ROLE.ButtonText: ("#1f2328", "#dfe1e5"),
    _ROLE.BrightText: ("#c01c28", "#ff6b6b"),
    _ROLE.Link: ("#1a5fb4", "#6ca8ff"),
    _ROLE.Highlight: ("#c8dcf8", "#2f5fa8"),
    _ROLE.HighlightedText: ("#1f2328", "#ffffff"),
    _ROLE.PlaceholderText: ("#8a8f98", "#8a8d93"),
}
_DISABLED = ("#a0a4ab", "#808080")


def palette(dark: bool) -> QPalette:
    p = QPalette()
    for role, colors in _PALETTES.items():
        p.setColor(role, QColor(colors[dark]))
    # ``setColor`` without a group sets the disabled group too: without these a disabled button
    # (Stop while idle, Copy while the Payload tab updates) would look like an enabled one.
    for role in (_ROLE.Text, _ROLE.ButtonText, _ROLE.WindowText):
        p.setColor(QPalette.ColorGroup.Disabled, role, QColor(_DISABLED[dark]))
    return p


def apply_theme(app: QApplication) -> None:
    """Apply the palette for the current system scheme."""
    app.setStyle("Fusion")
    app.setPalette(palette(system_is_dark()))


def follow_system(app: QApplication) -> None:
    apply_theme(app)
    QGuiApplication.styleHints().colorSchemeChanged.connect(lambda _scheme: apply_theme(app))


def is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Base).lightness() < 128


@dataclass(frozen=True)
class KindStyle:
    accent: QColor
    badge_text: QColor
    label: str


_ACCENTS = {
    rowinfo.USER: ("#3b82f6", "#60a5fa"),
    rowinfo.ASSISTANT: ("#16a34a", "#4ade80"),
    rowinfo.TOOL: ("#d97706", "#fbbf24"),
    rowinfo.SYSTEM: ("#7c3aed", "#a78bfa"),
    rowinfo.COMPACTION: ("#0d9488", "#2dd4bf"),
    rowinfo.NOTE: ("#64748b", "#94a3b8"),
    rowinfo.ERROR: ("#dc2626", "#f87171"),
    rowinfo.OTHER: ("#6b7280", "#9ca3af"),
    rowinfo.STREAMING: ("#16a34a", "#4ade80"),
}


#: pi and Claude Code kinds (design X1): their family's colour, with a few of their own.
_FOREIGN_ACCENTS = {
    "compaction_summary": ("#0f766e", "#5eead4"),
    "branch_summary": ("#0891b2", "#67e8f9"),
    "model_change": ("#475569", "#cbd5e1"),
    "custom_message": ("#4f46e5", "#a5b4fc"),
    "reminder": ("#9333ea", "#d8b4fe"),
}
for _name, (_code, _label, _bucket) in rowinfo.FOREIGN_KINDS.items():
    _ACCENTS.setdefault(_code, _FOREIGN_ACCENTS.get(_name, _ACCENTS[_bucket]))


def kind_style(kind: int, dark: bool) -> KindStyle:
    light_hex, dark_hex = _ACCENTS.get(kind, _ACCENTS[rowinfo.OTHER])
    accent = QColor(dark_hex if dark else light_hex)
    return KindStyle(
        accent, QColor("#111111") if dark else QColor("#ffffff"), rowinfo.KIND_NAMES.get(kind, "?")
    )
