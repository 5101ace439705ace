"""Paints one timeline row: a kind stripe and badge, the time, the summary, usage figures.

The summary always keeps room (``row_layout``): the usage figures yield to it when the
timeline is narrow and are in the row's tooltip at any width, in words (design G7).

Every row has the same height (the view sets ``uniformItemSizes``), so scrolling a long
session only paints what is on screen. Hidden system rows are drawn dimmed and italic so
they read as "not part of the chat" even when shown.
"""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import QEvent, QModelIndex, QPersistentModelIndex, QRect, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QHelpEvent, QPainter, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import (
    QAbstractItemView,
    QListView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolTip,
)

from desktop.pi.money import COMPACT_FLOOR, format_cost
from desktop.ui import rowinfo
from desktop.ui.glossary import tooltip
from desktop.ui.message_html import usage_line
from desktop.ui.theme import is_dark, kind_style
from desktop.ui.timeline_model import ANCHORED_ROLE, KIND_ROLE, TIME_ROLE, USAGE_ROLE
from desktop.ui.usage_stats import format_ratio

_BADGE_WIDTH = 92
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
    total = float(cost.get("total") or 0) if isinstance(cost, dict) else 0.0
    return f"in {_short(prompt)} · hit {ratio} · out {_short(int(usage.get('output') or 0))} · {format_cost(total, floor=COMPACT_FLOOR)}"


def row_tooltip(index: QModelIndex | QPersistentModelIndex) -> str:
    """The row's text in full (a few hundred characters) and its figures in words."""
    kind = index.data(KIND_ROLE)
    summary = html.escape(str(index.data(Qt.ItemDataRole.DisplayRole) or ""))
    parts = [f"<p>{summary}</p>"] if summary else []
    usage = index.data(USAGE_ROLE)
    if kind == rowinfo.ASSISTANT and isinstance(usage, dict):
        parts.append(f"<p>{html.escape(usage_line(usage))}</p>")
        parts.append(tooltip("cached tokens", "uncached tokens"))
    elif kind == rowinfo.SYSTEM:
        parts.append(tooltip("hidden system row", *(("anchored",) if index.data(ANCHORED_ROLE) else ())))
    return "<qt>" + "".join(parts) + "</qt>" if parts else ""


def _short(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 10_000:
        return f"{n / 1000:.0f}k"
    if n >= 1000:
        return f"{n / 1000:.1f}k"
    return str(n)


#: The row's text keeps at least this much room; the usage column yields to it (design G7).
MIN_TEXT_WIDTH = 240


def row_layout(rect: QRect, metrics: QFontMetrics, right: str) -> tuple[QRect, QRect | None]:
    """Where a row's text and its right-hand figures go; the figures yield when room is short.

    The text starts after the stripe, the time and the badge. The figures (usage, "anchored")
    are drawn only if the text keeps ``MIN_TEXT_WIDTH`` and more than half of the row; otherwise
    they move to the row's tooltip, so a narrow timeline still shows what each row says.
    """
    x = rect.left() + _STRIPE + _PAD + _TIME_WIDTH + _BADGE_WIDTH
    available = rect.right() - x - _PAD
    right_width = metrics.horizontalAdvance(right) + _PAD if right else 0
    if right and available - right_width >= max(MIN_TEXT_WIDTH, available // 2):
        text = QRect(x, rect.top(), available - right_width, rect.height())
        figures = QRect(rect.right() - right_width - _PAD, rect.top(), right_width, rect.height())
        return text, figures
    return QRect(x, rect.top(), max(10, available), rect.height()), None


class TimelineDelegate(QStyledItemDelegate):
    def helpEvent(
        self,
        event: QHelpEvent,
        view: QAbstractItemView,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> bool:
        """Hovering a row shows its whole first line and, for an answer, its usage in words."""
        text = row_tooltip(index) if event.type() == QEvent.Type.ToolTip and index.isValid() else ""
        if not text:
            return super().helpEvent(event, view, option, index)
        QToolTip.showText(event.globalPos(), text, view)
        return True

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
        if kind == rowinfo.ERROR:
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
        summary_rect, right_rect = row_layout(rect, metrics, right)
        summary_font = QFont(font)
        if hidden_kind or kind == rowinfo.STREAMING:
            summary_font.setItalic(True)
        painter.setFont(summary_font)
        painter.setPen(dim if hidden_kind else text_color)
        text = str(index.data(Qt.ItemDataRole.DisplayRole) or "")
        elided = QFontMetrics(summary_font).elidedText(
            text, Qt.TextElideMode.ElideRight, summary_rect.width()
        )
        painter.drawText(
            summary_rect, int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft), elided
        )
        if right_rect is not None:
            painter.setFont(font)
            painter.setPen(dim)
            painter.drawText(
                right_rect, int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight), right
            )
        if state & QStyle.StateFlag.State_HasFocus:
            # A visible focus ring for keyboard users (design G7): the current row, outlined.
            ring = QPalette.ColorRole.Highlight if not selected else QPalette.ColorRole.HighlightedText
            painter.setPen(QPen(palette.color(ring), 1, Qt.PenStyle.DotLine))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRect(rect.adjusted(0, 0, -1, -1))
        painter.restore()


class TimelineView(QListView):
    """The timeline's list view: a repaint enters Python once, not twice per row (design G9).

    Qt's list view calls the delegate's ``paint`` and, through the proxy's mapping, the filter's
    ``rowCount`` for every row it paints: each a call from C++ into Python that must take the
    GIL. While the worker runs Python, every one of those waits up to a switch interval, about
    45 waits for a screenful. With ``paintEvent`` itself in Python the GIL is taken once and the
    per-row calls run under it: a repaint every 100 ms during a 100,000-row open stalled the
    event loop 116 to 337 ms without it, 68 to 114 ms with it.
    """

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
