"""The "What if" tab: what this session would have cost on other routes (design X3).

The worker replays the session's requests (``desktop.session.whatif``) and sends the plain
``WhatIf.to_json()`` dict; this tab only shows it: a table per route and strategy, a
cumulative-cost chart per route drawn with QPainter (one small panel per route, one line per
strategy, as ``desktop.bench.chart`` draws the benchmark's), and the assumptions the
figures rest on. The route picker asks the worker for another replay; nothing here computes.
"""

from __future__ import annotations

import itertools
import math
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from PySide6.QtCore import QPointF, QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QColor, QFont, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QMenu,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.pi.money import format_cost
from desktop.ui.cost_chart import axis_top
from desktop.ui.inert import named, plain_label, plain_tip
from desktop.ui.theme import is_dark

#: One colour per strategy, in the order the replay lists them (fixed declarations dashed).
STRATEGY_COLORS: dict[str, str] = {
    "chronological": "#2563eb",
    "folded": "#dc2626",
    "attributed": "#d97706",
}
COLUMNS = ("Route", "Strategy", "Input", "Uncached", "Cache writes", "Hit", "Cost", "vs minimum")


def strategy_color(strategy: str) -> str:
    return STRATEGY_COLORS.get(strategy.split(",", 1)[0], "#6b7280")


def vs_minimum(figures: Mapping[str, Any]) -> tuple[str, str]:
    """The "vs minimum" cell and its tooltip. Never a ratio below 1.00x or a "+-": a replay that
    came in under the estimated minimum says by how much and why that can happen."""
    minimum = int(figures.get("minimumUncachedTokens") or 0)
    if not minimum:
        return "–", "No minimum: the session has no requests on this route."
    over = int(figures.get("overMinimumTokens") or 0)
    if over >= 0:
        ratio = float(figures.get("minimumRatio") or 0)
        return (
            f"{max(ratio, 1.0):.2f}x (+{over:,})",
            f"{over:,} uncached tokens more than the least any strategy could send ({minimum:,}).",
        )
    return (
        f"1.00x ({-over:,} under)",
        f"{-over:,} uncached tokens under the estimated minimum of {minimum:,}: the minimum is "
        "estimated in whole cache units from the text's length, so a replay can come in just "
        "under it. Read it as at the minimum.",
    )


def table_rows(result: Mapping[str, Any]) -> list[tuple[str, ...]]:
    """The table's cells, one row per route and strategy, formatted as the CLI prints them."""
    out: list[tuple[str, ...]] = []
    for route in result.get("routes") or ():
        for figures in route.get("strategies") or ():
            over = vs_minimum(figures)[0]
            out.append(
                (
                    str(route.get("route", "")),
                    str(figures.get("strategy", "")),
                    f"{int(figures.get('inputTokens') or 0):,}",
                    f"{int(figures.get('uncachedTokens') or 0):,}",
                    f"{int(figures.get('cacheWrites') or 0):,}",
                    f"{float(figures.get('hitRatio') or 0):.1%}",
                    format_cost(float(figures["cost"]))
                    if isinstance(figures.get("cost"), int | float) and route.get("priceKnown", True)
                    else "price unknown",
                    over,
                )
            )
    return out


def replayed_text(result: Mapping[str, Any]) -> str:
    """How many requests were replayed and of which kind (design X9)."""
    count = int(result.get("requests") or 0)
    kinds = result.get("replayed") or {}
    parts = [
        f"{int(kinds.get(key) or 0):,} {label}"
        for key, label in (("otherBranches", "on other branches"), ("subAgents", "of sub-agents"))
        if kinds.get(key)
    ]
    head = f"{count:,} request(s)"
    return f"{head} ({', '.join(parts)})" if parts else head


def assumptions_text(result: Mapping[str, Any]) -> str:
    catalog = result.get("catalog") or {}
    head = (
        f"{replayed_text(result)} of {result.get('format', '?')} session · prices from the "
        f"catalog (pi-ai {catalog.get('piVersion', '?')}, generated {catalog.get('piGeneratedAt') or 'unknown'}; "
        f"models.dev {catalog.get('modelsDev') or 'not loaded'})"
    )
    lines = [head]
    system = result.get("systemPrompt") or {}
    if isinstance(system, Mapping) and system.get("recorded") is False:
        lines.append(
            f"System prompt and tools are not in the file: {system.get('note') or 'the replay leaves them out'}."
        )
    recorded = result.get("recorded") or {}
    if isinstance(recorded, Mapping) and recorded.get("route"):
        cost = recorded.get("cost")
        shown = format_cost(float(cost)) if isinstance(cost, int | float) else "price unknown"
        lines.append(f"Recorded on {recorded['route']}: {shown} for the replies as billed.")
    lines.extend(f"• {text}" for text in result.get("assumptions") or ())
    for route in result.get("routes") or ():
        rule = route.get("cacheRule") or {}
        lines.append(f"• {route.get('route')}: {rule.get('description', '')}")
    return "\n".join(lines)


class CostChart(QWidget):
    """Cumulative cost after each request: one panel per route, one line per strategy."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("whatIfChart")
        self.routes: list[Mapping[str, Any]] = []
        self.setMinimumHeight(180)

    def sizeHint(self) -> QSize:
        return QSize(600, 260)

    def set_result(self, result: Mapping[str, Any] | None) -> None:
        self.routes = list((result or {}).get("routes") or ())
        self.update()

    def panels(self) -> list[QRectF]:
        """Where each route's panel is drawn (side by side, wrapping to two rows past three)."""
        count = len(self.routes)
        if not count:
            return []
        columns = count if count <= 3 else math.ceil(count / 2)
        rows = math.ceil(count / columns)
        w = self.width() / columns
        h = (self.height() - 24) / rows
        return [QRectF((i % columns) * w, 24 + (i // columns) * h, w, h) for i in range(count)]

    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        dark = is_dark(self.palette())
        ink = QColor("#dfe1e5" if dark else "#1f2328")
        grid = QColor("#3a3d42" if dark else "#e5e7eb")
        font = QFont(self.font())
        p.setFont(font)
        if not self.routes:
            p.setPen(ink)
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "No replay yet")
            p.end()
            return
        # Legend: strategies by colour, fixed declarations dashed.
        x = 8.0
        for name, color in STRATEGY_COLORS.items():
            p.fillRect(QRectF(x, 8, 12, 12), QColor(color))
            p.setPen(ink)
            p.drawText(QRectF(x + 16, 2, 120, 22), Qt.AlignmentFlag.AlignVCenter, name)
            x += 24 + p.fontMetrics().horizontalAdvance(name)
        p.setPen(QPen(ink, 1.5, Qt.PenStyle.DashLine))
        p.drawLine(QPointF(x, 14), QPointF(x + 20, 14))
        p.setPen(ink)
        p.drawText(QRectF(x + 24, 2, 220, 22), Qt.AlignmentFlag.AlignVCenter, "fixed declarations")
        for route, rect in zip(self.routes, self.panels(), strict=True):
            self._panel(p, route, rect.adjusted(6, 4, -6, -4), ink, grid)
        p.end()

    def _panel(self, p: QPainter, route: Mapping[str, Any], rect: QRectF, ink: QColor, grid: QColor) -> None:
        small = QFont(self.font())
        small.setPointSizeF(max(7.0, small.pointSizeF() * 0.85))
        bold = QFont(self.font())
        bold.setBold(True)
        p.setFont(bold)
        p.setPen(ink)
        p.drawText(
            QRectF(rect.x(), rect.y(), rect.width(), 18), Qt.AlignmentFlag.AlignLeft, str(route["route"])
        )
        strategies: Sequence[Mapping[str, Any]] = route.get("strategies") or ()
        if not route.get("priceKnown", True):  # no line at $0: the catalog has no price (X9)
            p.setFont(self.font())
            p.drawText(rect.adjusted(0, 24, 0, 0), Qt.AlignmentFlag.AlignCenter, "price unknown")
            return
        top = max((max(s.get("cumulativeCost") or [0.0]) for s in strategies), default=0.0)
        axis_max, step = axis_top(top) if top > 0 else (1.0, 0.25)
        plot = QRectF(
            rect.x() + 52, rect.y() + 24, max(10.0, rect.width() - 60), max(10.0, rect.height() - 44)
        )
        p.setFont(small)
        tick = 0.0
        while tick <= axis_max + 1e-12:
            y = plot.bottom() - plot.height() * tick / axis_max
            p.setPen(QPen(grid, 1))
            p.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y))
            p.setPen(ink)
            p.drawText(QRectF(rect.x(), y - 8, 48, 16), Qt.AlignmentFlag.AlignRight, format_cost(tick))
            tick += step
        count = max((len(s.get("cumulativeCost") or ()) for s in strategies), default=0)
        for figures in strategies:
            values = list(figures.get("cumulativeCost") or ())
            name = str(figures.get("strategy", ""))
            style = Qt.PenStyle.DashLine if "fixed" in name else Qt.PenStyle.SolidLine
            p.setPen(QPen(QColor(strategy_color(name)), 2.0, style))
            points = [
                QPointF(
                    plot.left() + plot.width() * i / max(1, count - 1),
                    plot.bottom() - plot.height() * v / axis_max,
                )
                for i, v in enumerate(values)
            ]
            if len(points) == 1:
                p.drawEllipse(points[0], 2.5, 2.5)
            for a, b in itertools.pairwise(points):
                p.drawLine(a, b)
        p.setPen(QPen(ink, 1))
        p.drawLine(QPointF(plot.left(), plot.bottom()), QPointF(plot.right(), plot.bottom()))
        p.drawText(
            QRectF(plot.left(), plot.bottom() + 2, plot.width(), 16),
            Qt.AlignmentFlag.AlignRight,
            f"request {count}",
        )
        p.drawText(QRectF(plot.left(), plot.bottom() + 2, plot.width(), 16), Qt.AlignmentFlag.AlignLeft, "1")


class ReplayRun:
    """One replay on the worker (design X8): the worker writes the latest progress here (one
    attribute, replaced whole) and the tab's timer reads it; Cancel sets ``cancel``, which the
    replay checks before every request. No signal crosses threads per request."""

    def __init__(self) -> None:
        self.cancel = threading.Event()
        self.latest: Any = None

    def report(self, progress: Any) -> None:
        """Called on the worker with a ``whatif.Progress``."""
        self.latest = progress


#: How often the tab reads the replay's progress.
PROGRESS_MS = 100


class WhatIfView(QWidget):
    """Route picker, the replay's table and chart, and its assumptions."""

    routes_changed = Signal(list)
    """The routes the user picked (``provider/model`` keys); the worker replays onto them."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("whatIfView")
        self.result: dict[str, Any] = {}
        self.route_button = named(QToolButton(), "whatIfRoutes")
        self.route_button.setText("Routes")
        self.route_button.setToolTip("Which routes to replay the session onto")
        self.route_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.route_menu = QMenu(self)
        self.route_button.setMenu(self.route_menu)
        self.route_actions: dict[str, QAction] = {}
        self.refresh_button = named(QPushButton("Recompute"), "whatIfRefresh")
        self.refresh_button.clicked.connect(self.emit_routes)
        self.run: ReplayRun | None = None
        self.progress = named(QProgressBar(), "whatIfProgress")
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(False)
        self.progress.setMaximumWidth(160)
        self.progress.hide()
        self.cancel_button = named(
            QPushButton("Cancel"), "whatIfCancel", "Stop the replay (it stops before its next request)"
        )
        self.cancel_button.clicked.connect(self.cancel)
        self.cancel_button.hide()
        self.poll = QTimer(self)
        self.poll.setInterval(PROGRESS_MS)
        self.poll.timeout.connect(self._show_progress)
        self.status = plain_label(  # an error names the file (design G11)
            "Open a session to see what it would have cost on other routes.", name="whatIfStatus", wrap=True
        )
        self.table = named(QTableWidget(0, len(COLUMNS)), "whatIfTable")
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        # The route gives way in a narrow pane (elided, whole in its tooltip); Cost stays on screen.
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.horizontalHeader().setStretchLastSection(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.table.setWordWrap(False)  # one line per row: nine rows on screen at 1280x800
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        self.chart = CostChart()
        self.assumptions = plain_label(name="whatIfAssumptions", wrap=True)
        self.assumptions.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        bar = QHBoxLayout()
        bar.addWidget(self.route_button)
        bar.addWidget(self.refresh_button)
        bar.addWidget(self.progress)
        bar.addWidget(self.cancel_button)
        bar.addWidget(self.status, 1)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.table)
        splitter.addWidget(self.chart)
        splitter.setStretchFactor(0, 3)  # the table is what the tab is for; the chart follows
        splitter.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(bar)
        layout.addWidget(splitter, 1)
        # The assumptions scroll in a short box: the table of figures keeps the height.
        notes = named(QScrollArea(), "whatIfAssumptionsBox")
        notes.setWidgetResizable(True)
        notes.setFrameShape(QScrollArea.Shape.NoFrame)
        notes.setWidget(self.assumptions)
        notes.setMaximumHeight(8 * self.fontMetrics().lineSpacing())
        layout.addWidget(notes)

    # --- routes ---------------------------------------------------------------------------------

    def set_route_options(self, routes: Sequence[str], selected: Sequence[str]) -> None:
        """The routes the picker offers (``provider/model`` keys) and which are ticked."""
        self.route_menu.clear()
        self.route_actions = {}
        for route in routes:
            action = self.route_menu.addAction(route)
            action.setCheckable(True)
            action.setChecked(route in selected)
            action.toggled.connect(lambda _on: self.emit_routes())
            self.route_actions[route] = action
        self._label_button()

    def selected_routes(self) -> list[str]:
        return [route for route, action in self.route_actions.items() if action.isChecked()]

    def _label_button(self) -> None:
        count = len(self.selected_routes())
        self.route_button.setText(f"Routes ({count})")

    def emit_routes(self) -> None:
        self._label_button()
        routes = self.selected_routes()
        if not routes:
            self.status.setText("Pick at least one route.")
            return
        self.status.setText("Computing on the worker…")
        self.routes_changed.emit(routes)

    # --- a replay running -----------------------------------------------------------------------

    def start_run(self, run: ReplayRun) -> None:
        """A replay started on the worker: progress and Cancel until its result comes."""
        if self.run is not None:
            self.run.cancel.set()  # a newer replay supersedes it
        self.run = run
        self.progress.setValue(0)
        self.progress.show()
        self.cancel_button.setEnabled(True)
        self.cancel_button.show()
        self.status.setText("Computing on the worker…")
        self.poll.start()

    def cancel(self) -> None:
        if self.run is not None:
            self.run.cancel.set()
            self.cancel_button.setEnabled(False)
            self.status.setText("Cancelling…")

    def _show_progress(self) -> None:
        latest = self.run.latest if self.run is not None else None
        if latest is None or (self.run is not None and self.run.cancel.is_set()):
            return
        self.progress.setValue(round(latest.fraction * 1000))
        self.status.setText(f"Replaying: {latest.line()}")

    def _stop_run(self) -> None:
        self.poll.stop()
        self.progress.hide()
        self.cancel_button.hide()
        self.run = None

    # --- results --------------------------------------------------------------------------------

    def show_run_result(self, run: ReplayRun, result: Mapping[str, Any]) -> None:
        """The result of ``run``; one superseded by a newer replay is dropped."""
        if run is self.run:
            self.show_result(result)

    def show_result(self, result: Mapping[str, Any]) -> None:
        """A replay from the worker: ``WhatIf.to_json()``, ``{"error": ...}`` or ``{"cancelled": True}``."""
        self._stop_run()
        if result.get("cancelled"):
            self.status.setText("What-if cancelled. Recompute to run it again.")
            return
        if result.get("error"):
            self.status.setText(f"Cannot replay this session: {result['error']}")
            return
        self.result = dict(result)
        rows = table_rows(result)
        minimum_tips = [
            vs_minimum(figures)[1]
            for route in result.get("routes") or ()
            for figures in route.get("strategies") or ()
        ]
        self.table.setRowCount(len(rows))
        cheapest = self._cheapest(result)
        for r, cells in enumerate(rows):
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if c == 0:
                    item.setToolTip(plain_tip(text))
                if c == len(cells) - 1:
                    item.setToolTip(plain_tip(minimum_tips[r]))
                if c >= 2:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if c == 1:
                    item.setForeground(QColor(strategy_color(text)))
                if r == cheapest:
                    font = item.font()
                    font.setBold(True)
                    item.setFont(font)
                self.table.setItem(r, c, item)
        self.chart.set_result(result)
        self.assumptions.setText(assumptions_text(result))
        # Room for every row (three routes by three strategies) before the chart takes any.
        header = self.table.horizontalHeader().sizeHint().height()
        height = len(rows) * self.table.verticalHeader().defaultSectionSize()
        self.table.setMinimumHeight(min(header + height + 2 * self.table.frameWidth() + 2, 12 * 24))
        count = int(result.get("requests") or 0)
        self.status.setText(
            f"{replayed_text(result)} replayed onto {len(result.get('routes') or ())} route(s); cheapest in bold."
            if count
            else "The session has no requests yet: nothing to replay."
        )

    @staticmethod
    def _cheapest(result: Mapping[str, Any]) -> int | None:
        """The row of the cheapest known cost (a route without a price is never "cheapest")."""
        costs = [
            float(f["cost"])
            if route.get("priceKnown", True) and isinstance(f.get("cost"), int | float)
            else math.inf
            for route in result.get("routes") or ()
            for f in route.get("strategies") or ()
        ]
        known = [c for c in costs if c != math.inf]
        if not known or not any(known):
            return None
        return costs.index(min(known))
