"""Paints one timeline row: a kind stripe and badge, the time, the summary, usage figures.

Every row has the same height (the view sets ``uniformItemSizes``), so scrolling a long
session only paints what is on screen. Hidden system rows are drawn dimmed and italic so
they read as "not part of the chat" even when shown.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPalette
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

from desktop.pi.money import COMPACT_FLOOR, format_cost
from desktop.ui import rowinfo
from desktop.ui.theme import is_dark, kind_style
from desktop.ui.timeline_model import ANCHORED_ROLE, KIND_ROLE, TIME_ROLE, USAGE_ROLE
from desktop.ui.usage_stats import format_ratio

_BADGE_WIDTH = 100
_TIME_WIDTH = 64
_STRIPE = 4
_PAD = 8


def usage_hint(usage: Any) -> str:
    """A compact usage figure for an assistant row: prompt tokens, hit ratio, output, cost."""
    if not isinstance(usage, dict):
        return ""
    inp, read, write = (int(usage.get(k) or 0) for k in ("input", "cacheRead", "cacheWrite"))
    prompt = inp + read + write
    ratio = format_ratio(read / prompt if prompt else None)
    cost = usage.get("cost") or {}
    total = float(cost.get("total", 0.0)) if isinstance(cost, dict) else 0.0
    return f"in {_short(prompt)} · hit {ratio} · out {_short(int(usage.get('output') or 0))} · {format_cost(total, floor=COMPACT_FLOOR)}"


def _short(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 10_000:
        return f"{n / 1000:.0f}k"
    if n >= 1000:
        return f"{n / 1000:.1f}k"
    return str(n)


class TimelineDelegate(QStyledItemDelegate):
    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        height = QFontMetrics(option.font).height() + 12  # type: ignore[attr-defined]
        return QSize(400, height)

    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        rect: QRect = option.rect  # type: ignore[attr-defined]
        palette: QPalette = option.palette  # type: ignore[attr-defined]
        state = option.state  # type: ignore[attr-defined]
        dark = is_dark(palette)
        kind = index.data(KIND_ROLE)
        style = kind_style(kind if isinstance(kind, int) else rowinfo.OTHER, dark)
        selected = bool(state & QStyle.StateFlag.State_Selected)
        hidden_kind = isinstance(kind, int) and rowinfo.filter_kind(kind) == rowinfo.SYSTEM
        painter.save()
        if selected:
            painter.fillRect(rect, palette.color(QPalette.ColorRole.Highlight))
        elif index.row() % 2:
            painter.fillRect(rect, palette.color(QPalette.ColorRole.AlternateBase))
        if kind in (rowinfo.ERROR,):
            tint = QColor(style.accent)
            tint.setAlpha(28)
            painter.fillRect(rect, tint)
        painter.fillRect(QRect(rect.left(), rect.top(), _STRIPE, rect.height()), style.accent)

        text_color = palette.color(
            QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        )
        dim = QColor(text_color)
        dim.setAlpha(150)
        font = QFont(option.font)  # type: ignore[attr-defined]
        metrics = QFontMetrics(font)
        x = rect.left() + _STRIPE + _PAD
        time_text = index.data(TIME_ROLE) or ""
        painter.setPen(dim)
        painter.setFont(font)
        painter.drawText(
            QRect(x, rect.top(), _TIME_WIDTH, rect.height()), Qt.AlignmentFlag.AlignVCenter, time_text
        )
        x += _TIME_WIDTH

        badge_font = QFont(font)
        badge_font.setPointSizeF(max(7.0, font.pointSizeF() * 0.85))
        badge_font.setBold(True)
        badge = QRect(x, rect.top() + 4, _BADGE_WIDTH - 10, rect.height() - 8)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        painter.setPen(Qt.PenStyle.NoPen)
        fill = QColor(style.accent)
        if hidden_kind:
            fill.setAlpha(170)
        painter.setBrush(fill)
        painter.drawRoundedRect(badge, 4, 4)
        painter.setFont(badge_font)
        painter.setPen(style.badge_text)
        painter.drawText(badge, Qt.AlignmentFlag.AlignCenter, style.label.upper())
        x += _BADGE_WIDTH

        right = ""
        if kind == rowinfo.ASSISTANT:
            right = usage_hint(index.data(USAGE_ROLE))
        elif kind == rowinfo.SYSTEM and index.data(ANCHORED_ROLE):
            right = "anchored"
        right_width = metrics.horizontalAdvance(right) + _PAD if right else 0
        summary_font = QFont(font)
        if hidden_kind or kind == rowinfo.STREAMING:
            summary_font.setItalic(True)
        painter.setFont(summary_font)
        painter.setPen(dim if hidden_kind else text_color)
        summary_rect = QRect(x, rect.top(), max(10, rect.right() - x - right_width - _PAD), rect.height())
        text = str(index.data(Qt.ItemDataRole.DisplayRole) or "")
        elided = QFontMetrics(summary_font).elidedText(
            text, Qt.TextElideMode.ElideRight, summary_rect.width()
        )
        painter.drawText(
            summary_rect, int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft), elided
        )
        if right:
            painter.setFont(font)
            painter.setPen(dim)
            painter.drawText(
                QRect(rect.right() - right_width - _PAD, rect.top(), right_width, rect.height()),
                int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight),
                right,
            )
        painter.restore()
