"""Costs and figures as people read them (design G7)."""

from __future__ import annotations

import pytest

from desktop.pi.cost import calculate_cost
from desktop.pi.money import COMPACT_FLOOR, format_cost, tidy


@pytest.mark.parametrize(
    ("dollars", "precise", "compact"),
    [
        (0.000056399999999999995, "$0.000056", "<$0.0001"),
        (0.0000004, "<$0.000001", "<$0.0001"),
        (0.0001, "$0.0001", "$0.0001"),
        (0.00063, "$0.00063", "$0.0006"),
        (0.5, "$0.50", "$0.50"),
        (0.1234, "$0.12", "$0.12"),
        (1234.567, "$1,234.57", "$1,234.57"),
        (0, "$0.00", "$0.00"),
    ],
)
def test_cost_precision(dollars: float, precise: str, compact: str) -> None:
    assert format_cost(dollars) == precise
    assert format_cost(dollars, floor=COMPACT_FLOOR) == compact


def test_a_paid_request_never_reads_zero() -> None:
    usage = {"input": 47, "output": 3, "cacheRead": 0, "cacheWrite": 0}
    cost = calculate_cost({"cost": {"input": 0.3, "output": 1.2}}, usage)
    assert cost["total"] > 0
    for floor in (COMPACT_FLOOR, 0.000001):
        text = format_cost(cost["total"], floor=floor)
        assert text.strip("$<0.,") != "", text


def test_tidy_removes_float_noise_and_keeps_the_rest() -> None:
    row = {
        "usage": {"cost": {"total": 0.000056399999999999995}, "input": 12},
        "text": "0.1",
        "xs": [0.1 + 0.2],
    }
    assert tidy(row) == {"usage": {"cost": {"total": 0.0000564}, "input": 12}, "text": "0.1", "xs": [0.3]}
    assert "99999" not in repr(tidy(row))


def test_cli_usage_totals_carry_no_float_noise() -> None:
    from desktop.cli.prompt import usage_totals

    costs = [0.1, 0.2, 0.000056399999999999995]
    messages = [{"usage": {"input": 1, "output": 1, "cost": {"total": c}}} for c in costs]
    totals = usage_totals(messages)
    assert repr(totals["cost"]) == "0.3000564"
