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


def dark_palette() -> QPalette:
    p = QPalette()
    window, base, text = QColor(0x2B, 0x2D, 0x31), QColor(0x1E, 0x1F, 0x22), QColor(0xDF, 0xE1, 0xE5)
    p.setColor(QPalette.ColorRole.Window, window)
    p.setColor(QPalette.ColorRole.WindowText, text)
    p.setColor(QPalette.ColorRole.Base, base)
    p.setColor(QPalette.ColorRole.AlternateBase, QColor(0x25, 0x27, 0x2A))
    p.setColor(QPalette.ColorRole.ToolTipBase, window)
    p.setColor(QPalette.ColorRole.ToolTipText, text)
    p.setColor(QPalette.ColorRole.Text, text)
    p.setColor(QPalette.ColorRole.Button, QColor(0x36, 0x38, 0x3D))
    p.setColor(QPalette.ColorRole.ButtonText, text)
    p.setColor(QPalette.ColorRole.BrightText, QColor(0xFF, 0x6B, 0x6B))
    p.setColor(QPalette.ColorRole.Link, QColor(0x6C, 0xA8, 0xFF))
    p.setColor(QPalette.ColorRole.Highlight, QColor(0x2F, 0x5F, 0xA8))
    p.setColor(QPalette.ColorRole.HighlightedText, QColor(0xFF, 0xFF, 0xFF))
    p.setColor(QPalette.ColorRole.PlaceholderText, QColor(0x8A, 0x8D, 0x93))
    disabled = QColor(0x80, 0x80, 0x80)
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText, QPalette.ColorRole.WindowText):
        p.setColor(QPalette.ColorGroup.Disabled, role, disabled)
    return p


def light_palette() -> QPalette:
    p = QPalette()
    window, base, text = QColor(0xF3, 0xF4, 0xF6), QColor(0xFF, 0xFF, 0xFF), QColor(0x1F, 0x23, 0x28)
    p.setColor(QPalette.ColorRole.Window, window)
    p.setColor(QPalette.ColorRole.WindowText, text)
    p.setColor(QPalette.ColorRole.Base, base)
    p.setColor(QPalette.ColorRole.AlternateBase, QColor(0xF7, 0xF8, 0xFA))
    p.setColor(QPalette.ColorRole.ToolTipBase, QColor(0xFF, 0xFF, 0xE8))
    p.setColor(QPalette.ColorRole.ToolTipText, text)
    p.setColor(QPalette.ColorRole.Text, text)
    p.setColor(QPalette.ColorRole.Button, QColor(0xEC, 0xEE, 0xF1))
    p.setColor(QPalette.ColorRole.ButtonText, text)
    p.setColor(QPalette.ColorRole.BrightText, QColor(0xC0, 0x1C, 0x28))
    p.setColor(QPalette.ColorRole.Link, QColor(0x1A, 0x5F, 0xB4))
    p.setColor(QPalette.ColorRole.Highlight, QColor(0xC8, 0xDC, 0xF8))
    p.setColor(QPalette.ColorRole.HighlightedText, text)
    p.setColor(QPalette.ColorRole.PlaceholderText, QColor(0x8A, 0x8F, 0x98))
    # ``setColor`` without a group sets the disabled group too: without these a disabled button
    # (Stop while idle, Copy while the Payload tab updates) would look like an enabled one.
    disabled = QColor(0xA0, 0xA4, 0xAB)
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText, QPalette.ColorRole.WindowText):
        p.setColor(QPalette.ColorGroup.Disabled, role, disabled)
    return p


def apply_theme(app: QApplication) -> bool:
    """Apply the palette for the current system scheme; returns True when it is dark."""
    dark = system_is_dark()
    app.setStyle("Fusion")
    app.setPalette(dark_palette() if dark else light_palette())
    return dark


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
