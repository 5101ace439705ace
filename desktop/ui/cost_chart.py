"""The Usage tab's cost-per-request chart (design G15): one bar per request, split into what
the cache reads cost, what the uncached input cost (fresh input and cache writes) and what the
output cost, so a request that missed the cache stands out as a tall uncached bar.

A request whose cost the journal does not give (a route the catalog has no price for) is drawn
as a grey "price unknown" slot, never as a $0.00 bar. Painted with QPainter from the figures
the Usage table already holds: no plotting library, nothing read from a file.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QBrush, QColor, QHelpEvent, QPainter, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from desktop.pi.money import format_cost
from desktop.ui.theme import is_dark
from desktop.ui.usage_stats import UsageLine

#: The narrowest bar worth drawing; a long session shows its most recent requests that fit.
MIN_BAR = 4
#: Space for the dollar axis on the left and the legend at the top.
AXIS_WIDTH = 64
LEGEND_HEIGHT = 20
#: The legend's label and the (light, dark) colours of the three parts and of a request without a price.
PARTS = {
    "cached": ("cache reads", "#16a34a", "#4ade80"),
    "uncached": ("uncached input", "#d97706", "#fbbf24"),
    "output": ("output", "#3b82f6", "#60a5fa"),
    "unknown": ("price unknown", "#9ca3af", "#6b7280"),
}
UNKNOWN = PARTS["unknown"][0]


@dataclass(frozen=True)
class Bar:
    """One request's cost in parts (dollars); ``None`` parts when the price is unknown."""

    number: int
    model: str
    cached: float | None
    uncached: float | None
    output: float | None

    @property
    def known(self) -> bool:
        return self.cached is not None

    @property
    def total(self) -> float:
        return (self.cached or 0.0) + (self.uncached or 0.0) + (self.output or 0.0)

    def text(self) -> str:
        head = f"Request {self.number} · {self.model}"
        if self.cached is None or self.uncached is None or self.output is None:
            return f"{head}\n{UNKNOWN}: the catalog gives this model no price"
        return (
            f"{head}\n{format_cost(self.total)} in all: cache reads {format_cost(self.cached)}, "
            f"uncached input {format_cost(self.uncached)}, output {format_cost(self.output)}"
        )


def bar_of(number: int, line: UsageLine) -> Bar:
    """A request's bar: the parts the journal's cost gives, the uncached input the rest."""
    tokens = line.prompt + line.output
    if line.cost <= 0 and tokens > 0:
        return Bar(number, line.model, None, None, None)
    cached = max(0.0, line.cached_cost or 0.0)
    output = max(0.0, line.output_cost or 0.0)
    uncached = max(0.0, line.cost - cached - output)
    return Bar(number, line.model, cached, uncached, output)


def axis_top(value: float) -> tuple[float, float]:
    """An axis maximum and tick step (1, 2, 2.5 or 5 times a power of ten) covering ``value``."""
    if value <= 0:
        return 0.01, 0.005
    raw = value / 4
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw * (1 - 1e-9))
    return step * math.ceil(value / step - 1e-9), step


class CostChart(QWidget):
    """The chart; ``set_lines`` gives it the Usage table's lines (the same objects)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("costChart")
        self.setAccessibleName("Cost per request")
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setMinimumHeight(150)
        self.setMouseTracking(True)
        self.lines: Sequence[UsageLine] = ()

    def sizeHint(self) -> QSize:
        return QSize(600, 150)

    def set_lines(self, lines: Sequence[UsageLine]) -> None:
        self.lines = lines
        self.update()

    def plot_area(self) -> QRectF:
        return QRectF(
            AXIS_WIDTH,
            LEGEND_HEIGHT + 6,
            max(1, self.width() - AXIS_WIDTH - 8),
            self.height() - LEGEND_HEIGHT - 12,
        )

    def shown(self) -> list[Bar]:
        """The bars that fit, the most recent ones: a long session's chart stays readable."""
        fit = max(1, int(self.plot_area().width() // MIN_BAR))
        start = max(0, len(self.lines) - fit)
        return [bar_of(start + i + 1, line) for i, line in enumerate(self.lines[start:])]

    def caption(self, bars: Sequence[Bar]) -> str:
        if not bars:
            return "Cost per request: no request yet"
        unknown = sum(1 for bar in bars if not bar.known)
        span = (
            f"the last {len(bars):,} of {len(self.lines):,} requests"
            if len(bars) < len(self.lines)
            else f"{len(bars):,} request{'s' if len(bars) != 1 else ''}"
        )
        return f"Cost per request ({span}" + (f"; {unknown:,} {UNKNOWN}" if unknown else "") + ")"

    def colors(self) -> dict[str, QColor]:
        dark = is_dark(self.palette())
        return {name: QColor(dark_color if dark else light) for name, (_, light, dark_color) in PARTS.items()}

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        palette = self.palette()
        painter.fillRect(self.rect(), palette.color(QPalette.ColorRole.Base))
        text = palette.color(QPalette.ColorRole.Text)
        faint = palette.color(QPalette.ColorRole.Mid)
        colors = self.colors()
        bars = self.shown()
        metrics = painter.fontMetrics()
        # The caption, then the legend, on one line at the top.
        painter.setPen(text)
        caption = self.caption(bars)
        painter.drawText(QPointF(6, metrics.ascent() + 2), caption)
        x = 6 + metrics.horizontalAdvance(caption) + 16
        unknown = any(not bar.known for bar in bars)
        for name in ("cached", "uncached", "output", *(("unknown",) if unknown else ())):
            painter.fillRect(QRectF(x, 5, 10, 10), colors[name])
            painter.setPen(text)
            painter.drawText(QPointF(x + 14, metrics.ascent() + 2), PARTS[name][0])
            x += 14 + metrics.horizontalAdvance(PARTS[name][0]) + 14
        area = self.plot_area()
        top, step = axis_top(max((bar.total for bar in bars if bar.known), default=0.0))
        # The dollar axis: a faint line per tick, its figure on the left.
        ticks = round(top / step)
        for i in range(ticks + 1):
            value = step * i
            y = area.bottom() - area.height() * value / top
            painter.setPen(QPen(faint, 1, Qt.PenStyle.DotLine if i else Qt.PenStyle.SolidLine))
            painter.drawLine(QPointF(area.left(), y), QPointF(area.right(), y))
            painter.setPen(text)
            label = format_cost(value) if i else "$0"  # the axis's origin, not a request's cost
            painter.drawText(
                QRectF(0, y - metrics.height() / 2, AXIS_WIDTH - 6, metrics.height()),
                int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter),
                label,
            )
        if not bars:
            return
        slot = area.width() / len(bars)
        width = max(1.0, min(24.0, slot * 0.8))
        for i, bar in enumerate(bars):
            left = area.left() + i * slot + (slot - width) / 2
            if not bar.known:
                # A grey slot the plot's height, hatched: no figure to draw, and not $0.00.
                rect = QRectF(left, area.top(), width, area.height())
                painter.fillRect(rect, QBrush(colors["unknown"], Qt.BrushStyle.BDiagPattern))
                continue
            bottom = area.bottom()
            for name, part in (("cached", bar.cached), ("uncached", bar.uncached), ("output", bar.output)):
                height = area.height() * (part or 0.0) / top
                if height <= 0:
                    continue
                painter.fillRect(QRectF(left, bottom - height, width, height), colors[name])
                bottom -= height

    def bar_at(self, x: float) -> Bar | None:
        bars = self.shown()
        area = self.plot_area()
        if not bars or not area.left() <= x <= area.right():
            return None
        index = int((x - area.left()) // (area.width() / len(bars)))
        return bars[min(index, len(bars) - 1)]

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            bar = self.bar_at(event.pos().x())
            if bar is None:
                QToolTip.hideText()
            else:
                QToolTip.showText(event.globalPos(), bar.text(), self)
            return True
        return super().event(event)
