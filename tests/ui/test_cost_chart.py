"""The Usage tab's cost-per-request chart (design G15): each request's cost split into cache
reads, uncached input and output, drawn to scale; a request without a price is a hatched
"price unknown" slot, never a $0.00 bar."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QColor, QImage

from desktop.ui.cost_chart import PARTS, CostChart, bar_of
from desktop.ui.usage_stats import usage_line
from desktop.ui.usage_view import UsageView


def _row(n: int, cost: dict[str, float] | None, *, read: int = 0, fresh: int = 100) -> dict[str, Any]:
    usage: dict[str, Any] = {"input": fresh, "output": 50, "cacheRead": read, "cacheWrite": 0}
    if cost is not None:
        usage["cost"] = {**cost, "total": sum(cost.values())}
    return {
        "type": "assistant",
        "id": f"a{n}",
        "ts": 1_700_000_000_000 + n,
        "message": {"role": "assistant", "content": [], "model": "m", "usage": usage},
    }


#: A warm request (mostly cache reads), a cold one (all uncached), one the catalog has no price for.
ROWS = [
    _row(1, {"input": 0.001, "cacheRead": 0.002, "output": 0.001}, read=20_000),
    _row(2, {"input": 0.03, "cacheRead": 0.0, "output": 0.001}, fresh=20_000),
    _row(3, None),
]


def test_bars_split_the_recorded_cost_and_never_make_a_price_up() -> None:
    lines = [line for row in ROWS if (line := usage_line(row)) is not None]
    warm, cold, unknown = (bar_of(i + 1, line) for i, line in enumerate(lines))
    assert (warm.cached, warm.output) == (0.002, 0.001) and abs(warm.uncached - 0.001) < 1e-12  # type: ignore[operator]
    assert abs(warm.total - 0.004) < 1e-12 and abs(cold.total - 0.031) < 1e-12
    assert cold.cached == 0.0 and cold.uncached is not None and cold.uncached > 0.029
    assert not unknown.known and unknown.total == 0.0
    assert "price unknown" in unknown.text() and "$0.00" not in unknown.text()
    assert "cache reads $0.002" in warm.text()


def _pixels(image: QImage, x: int, top: int, bottom: int) -> set[str]:
    return {image.pixelColor(x, y).name() for y in range(top, bottom)}


def test_the_usage_tab_draws_the_cold_request_tall_and_the_unpriced_one_as_unknown(qtbot: Any) -> None:
    view = UsageView()
    qtbot.addWidget(view)
    view.resize(900, 500)
    view.show()
    view.model.set_rows(ROWS)
    view._refresh()
    chart = view.chart
    assert isinstance(chart, CostChart) and len(chart.lines) == 3
    assert chart.caption(chart.shown()) == "Cost per request (3 requests; 1 price unknown)"
    # The table says it in words too: no "$0.00" for the request without a price.
    assert view.model.index(2, 7).data() == "price unknown"
    image = chart.grab().toImage()
    area = chart.plot_area()
    slot = area.width() / 3
    centres = [int(area.left() + slot * (i + 0.5)) for i in range(3)]
    top, bottom = int(area.top()) + 1, int(area.bottom()) - 1
    dark = False
    colour = {name: QColor(part[2] if dark else part[1]).name() for name, part in PARTS.items()}
    warm, cold, unknown = (_pixels(image, x, top, bottom) for x in centres)
    assert colour["cached"] in warm and colour["output"] in warm
    assert colour["uncached"] in cold and colour["cached"] not in cold

    # The cold request's bar reaches far higher than the warm one's (cost 0.031 against 0.004).
    def height(x: int, name: str) -> int:
        return sum(1 for y in range(top, bottom) if image.pixelColor(x, y).name() == colour[name])

    assert height(centres[1], "uncached") > 5 * height(centres[0], "uncached") > 0
    assert colour["unknown"] in unknown
    assert not ({colour["cached"], colour["uncached"], colour["output"]} & unknown)
    assert "price unknown" in chart.bar_at(centres[2]).text()  # type: ignore[union-attr]
