"""Errors where the user looks: closable banners above the timeline and the detail tabs (design G7).

A failed open, a failed turn or lines the journal set aside used to reach only the status bar,
which a person rarely reads and which cuts a long message off. A banner keeps the whole
message, its text can be selected and copied, and it stays until closed. Text that came from
a file goes through ``printable`` first: invalid bytes and control characters are shown as
escapes (``\\xff``) instead of garbled glyphs or a terminal's colour codes.
"""

from __future__ import annotations

import unicodedata

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QToolButton, QVBoxLayout, QWidget

from desktop.ui.inert import named, plain_label
from desktop.ui.theme import is_dark

MAX_BANNERS = 4
_LEVEL_COLORS = {
    # level: (light background, light border, dark background, dark border)
    "error": ("#fdecec", "#dc2626", "#3b1d1f", "#f87171"),
    "warning": ("#fff6e0", "#d97706", "#3a2e14", "#fbbf24"),
    "info": ("#e8f1fd", "#2563eb", "#1b2a40", "#60a5fa"),
}


def printable(value: str | bytes) -> str:
    """``value`` safe to show: undecodable bytes and control characters become escapes, and so
    does U+FFFC, rich text's marker for an object (a paragraph holding a bare one vanishes)."""
    if isinstance(value, bytes):
        text = value.decode("utf-8", errors="backslashreplace")
    else:
        # Strings read with surrogateescape carry invalid bytes as lone surrogates.
        text = value.encode("utf-8", errors="surrogateescape").decode("utf-8", errors="backslashreplace")
    out: list[str] = []
    for char in text:
        if char in "\n\t" or (
            unicodedata.category(char) not in ("Cc", "Cs", "Co", "Cn") and char != "\ufffc"
        ):
            out.append(char)
        elif ord(char) < 0x100:
            out.append(f"\\x{ord(char):02x}")
        else:
            out.append(f"\\u{ord(char):04x}")
    return "".join(out)


def notice_style(widget: str, name: str, level: str, dark: bool) -> str:
    """The banners' look for the widget class and object name, so a notice shown inside a pane
    (the Payload tab's "updating") reads like the messages above the panes."""
    light_bg, light_border, dark_bg, dark_border = _LEVEL_COLORS.get(level, _LEVEL_COLORS["info"])
    bg, border = (dark_bg, dark_border) if dark else (light_bg, light_border)
    return (
        f"{widget}#{name} {{ background: {bg}; border: 1px solid {border};"
        f" border-left: 4px solid {border}; border-radius: 3px; }}"
    )


class Banner(QFrame):
    """One message: a coloured bar with selectable text and a close button."""

    closed = Signal()

    def __init__(self, level: str, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(f"{level}Banner")
        self.level = level if level in _LEVEL_COLORS else "info"
        self.setAccessibleName(f"{self.level} message")
        self.setStyleSheet(notice_style("QFrame", self.objectName(), self.level, is_dark(self.palette())))
        self.label = plain_label(printable(text), name="bannerText", wrap=True)
        self.label.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.label.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.label.setAccessibleName(f"{self.level}: {self.label.text()[:200]}")
        self.close_button = named(QToolButton(), "bannerClose", "Dismiss this message", "Dismiss message")
        self.close_button.setText("✕")
        self.close_button.setAutoRaise(True)
        self.close_button.clicked.connect(self.dismiss)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 4, 4)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.close_button, 0, Qt.AlignmentFlag.AlignTop)

    @property
    def text(self) -> str:
        return self.label.text()

    def dismiss(self) -> None:
        self.hide()
        self.closed.emit()
        self.deleteLater()


class BannerArea(QWidget):
    """The stack of banners; the newest on top, at most ``MAX_BANNERS`` (the oldest go first)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("bannerArea")
        self.banners: list[Banner] = []
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(6, 4, 6, 0)
        self._layout.setSpacing(4)
        self.setVisible(False)

    def show_message(self, level: str, text: str) -> Banner:
        for existing in self.banners:
            if existing.text == printable(text) and existing.level == level:
                existing.dismiss()  # the same message again moves to the top
        banner = Banner(level, text, self)
        banner.closed.connect(lambda b=banner: self._forget(b))
        self.banners.insert(0, banner)
        self._layout.insertWidget(0, banner)
        while len(self.banners) > MAX_BANNERS:
            self.banners[-1].dismiss()
        self.setVisible(True)
        return banner

    def clear(self) -> None:
        for banner in list(self.banners):
            banner.dismiss()

    def _forget(self, banner: Banner) -> None:
        if banner in self.banners:
            self.banners.remove(banner)
        self.setVisible(bool(self.banners))
