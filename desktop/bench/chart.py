"""The cache economics chart, drawn with QPainter on an offscreen QImage.

PySide6 is already a dependency, so the chart needs no display and no plotting library. It
uses ``QtGui`` (an image, a painter) and no widget: the one module outside ``desktop/ui`` that
imports ``QtGui`` (the import contracts name it).
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QGuiApplication, QImage, QPainter, QPen

from desktop.bench.report import (
    COLORS,
    SHORT_LABELS,
    STRATEGY_NOTES,
    conversation_names,
    has_run,
    pick,
    route_classes,
)


def _nice_max(value: float) -> tuple[float, float]:
    """An axis maximum and tick step (1, 2 or 5 times a power of ten) covering ``value``."""
    if value <= 0:
        return 1.0, 0.2
    raw = value / 5
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    return step * math.ceil(value / step), step


def chart(results: Sequence[Any], path: Path) -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    app = QGuiApplication.instance() or QGuiApplication([])
    width, height = 1400, 1000
    image = QImage(width, height, QImage.Format.Format_ARGB32)
    image.fill(QColor("white"))
    p = QPainter(image)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    font = QFont("DejaVu Sans", 10)
    p.setFont(font)

    def text(
        x: float, y: float, w: float, h: float, s: str, flags: Any, size: int = 10, bold: bool = False
    ) -> None:
        f = QFont("DejaVu Sans", size)
        f.setBold(bold)
        p.setFont(f)
        p.setPen(QColor("#1a202c"))
        p.drawText(QRectF(x, y, w, h), flags, s)

    def framed(rect: QRectF, title: str, top: float, below: float) -> tuple[QRectF, float]:
        """A panel's title and grid (thousands of tokens): its plot area and axis maximum."""
        axis_max, step = _nice_max(top / 1000)
        text(rect.x(), rect.y(), rect.width(), 24, title, Qt.AlignmentFlag.AlignLeft, 12, True)
        plot = QRectF(rect.x() + 60, rect.y() + 34, rect.width() - 70, rect.height() - 34 - below)
        tick = 0.0
        while tick <= axis_max + 1e-9:
            y = plot.bottom() - plot.height() * tick / axis_max
            p.setPen(QPen(QColor("#e2e8f0"), 1))
            p.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y))
            text(rect.x(), y - 8, 54, 16, f"{tick:g}k", Qt.AlignmentFlag.AlignRight, 9)
            tick += step
        return plot, axis_max

    def bar_panel(rect: QRectF, conversation: str, title: str) -> None:
        routes = route_classes(results, conversation)
        groups = []
        for route in routes:
            bars = [(s, pick(results, conversation, route.key, s).summary) for s in STRATEGY_NOTES]
            groups.append((route, bars))
        plot, axis_max = framed(rect, title, max(s.uncached for _, bars in groups for _, s in bars), 48)
        group_w = plot.width() / len(groups)
        bar_w = group_w * 0.7 / 3
        for i, (route, bars) in enumerate(groups):
            x0 = plot.left() + i * group_w + group_w * 0.15
            for j, (strategy, s) in enumerate(bars):
                h = plot.height() * (s.uncached / 1000) / axis_max
                p.fillRect(QRectF(x0 + j * bar_w, plot.bottom() - h, bar_w - 2, h), QColor(COLORS[strategy]))
            minimum = bars[0][1].minimum
            y = plot.bottom() - plot.height() * (minimum / 1000) / axis_max
            p.setPen(QPen(QColor("#000000"), 2, Qt.PenStyle.DashLine))
            p.drawLine(QPointF(x0 - 4, y), QPointF(x0 + 3 * bar_w + 2, y))
            text(
                x0 - 10,
                plot.bottom() + 4,
                3 * bar_w + 20,
                40,
                SHORT_LABELS.get(route.key, route.key),
                Qt.AlignmentFlag.AlignHCenter,
                9,
            )
        p.setPen(QPen(QColor("#4a5568"), 1))
        p.drawLine(QPointF(plot.left(), plot.bottom()), QPointF(plot.right(), plot.bottom()))

    def line_panel(rect: QRectF, conversation: str, route_key: str, title: str) -> None:
        series = []
        for strategy in ("folded", "chronological"):
            r = pick(results, conversation, route_key, strategy)
            values = list(itertools.accumulate(row.uncached for row in r.per_request))
            series.append(
                (COLORS[strategy], values, Qt.PenStyle.SolidLine, 5.0 if strategy == "chronological" else 2.5)
            )
        floor = list(
            itertools.accumulate(pick(results, conversation, route_key, "chronological").minimum_per_request)
        )
        series.append(("#000000", floor, Qt.PenStyle.DashLine, 1.5))
        count = len(series[0][1])
        plot, axis_max = framed(rect, title, max(v for _, values, _, _ in series for v in values), 30)
        for color, values, style, thickness in series:
            p.setPen(QPen(QColor(color), thickness, style))
            points = [
                QPointF(
                    plot.left() + plot.width() * i / max(1, count - 1),
                    plot.bottom() - plot.height() * (v / 1000) / axis_max,
                )
                for i, v in enumerate(values)
            ]
            for a, b in itertools.pairwise(points):
                p.drawLine(a, b)
        p.setPen(QPen(QColor("#4a5568"), 1))
        p.drawLine(QPointF(plot.left(), plot.bottom()), QPointF(plot.right(), plot.bottom()))
        for i in range(0, count - 5, 10):
            x = plot.left() + plot.width() * i / max(1, count - 1)
            text(x - 20, plot.bottom() + 4, 40, 16, str(i + 1), Qt.AlignmentFlag.AlignHCenter, 9)
        text(plot.right() - 200, plot.bottom() + 4, 200, 16, "request", Qt.AlignmentFlag.AlignRight, 9)

    convs = conversation_names(results)
    text(
        20, 12, width - 40, 30, "Cumulative uncached input tokens (emulator prompt-cache rules)", 0, 15, True
    )
    # Legend
    x = 20.0
    for strategy, color in COLORS.items():
        p.fillRect(QRectF(x, 50, 14, 14), QColor(color))
        text(x + 20, 48, 150, 18, strategy, Qt.AlignmentFlag.AlignLeft, 10)
        x += 150
    p.setPen(QPen(QColor("#000000"), 2, Qt.PenStyle.DashLine))
    p.drawLine(QPointF(x, 57), QPointF(x + 24, 57))
    text(x + 30, 48, 320, 18, "theoretical minimum (each token once)", Qt.AlignmentFlag.AlignLeft, 10)

    if "long" in convs:
        n = pick(results, "long", route_classes(results, "long")[0].key, "chronological").summary.requests
        bar_panel(QRectF(20, 80, width - 40, 440), "long", f"Long conversation ({n} requests)")
    if "short" in convs:
        n = pick(results, "short", route_classes(results, "short")[0].key, "chronological").summary.requests
        bar_panel(QRectF(20, 540, 700, 440), "short", f"Short conversation ({n} requests)")
    if "long" in convs and has_run(results, "long", "opus-native"):
        line_panel(
            QRectF(740, 540, 640, 440), "long", "opus-native", "Long, claude-opus-5-5, request by request"
        )
    p.end()
    path.parent.mkdir(parents=True, exist_ok=True)
    if not image.save(str(path)):
        raise OSError(f"could not write the chart to {path}")
    del app
