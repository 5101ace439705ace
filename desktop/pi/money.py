"""How costs and other measured figures are shown to people (design G7).

Costs are sums of float products (``rate / 1e6 * tokens``), so the values carry binary noise
such as 0.000056399999999999995. Every display in the window and on the command line goes
through ``format_cost`` (two significant digits below a dollar, cents above, a floor for tiny
non-zero amounts, never "$0.0000" for a paid request) or ``tidy`` (the same figures rounded
to 12 significant digits before JSON is shown). Request bodies and journal rows are never
changed: this is for displays only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

#: The smallest amount shown with digits; anything non-zero below it reads "<$0.000001".
PRECISE_FLOOR = 0.000001
#: The floor of the compact figures (timeline rows, tables with narrow columns).
COMPACT_FLOOR = 0.0001


def format_cost(dollars: float | int | None, *, floor: float = PRECISE_FLOOR) -> str:
    """``$0.000056``, ``$0.012``, ``$0.50``, ``$1,234.57``; ``<$0.0001`` only for a tiny non-zero."""
    if dollars is None or not math.isfinite(dollars):
        return "—"
    if dollars < 0:
        return "-" + format_cost(-dollars, floor=floor)
    if dollars == 0:
        return "$0.00"
    if dollars < floor:
        return f"<${_plain(floor)}"
    if dollars >= 1:
        return f"${dollars:,.2f}"
    # Two significant digits, at least cents: 0.0000564 -> 0.000056, 0.5 -> 0.50.
    decimals = max(2, 1 - math.floor(math.log10(dollars)))
    if floor >= COMPACT_FLOOR:
        decimals = min(decimals, _decimals(floor))
    text = f"{dollars:.{decimals}f}"
    if text.strip("0.") == "":  # rounded away: the floor says more than "$0.0000"
        return f"<${_plain(floor)}"
    whole, _, fraction = text.partition(".")
    fraction = fraction.rstrip("0").ljust(2, "0")
    return f"${whole}.{fraction}"


def _decimals(value: float) -> int:
    return max(0, -math.floor(math.log10(value)))


def _plain(value: float) -> str:
    return f"{value:.{_decimals(value)}f}"


def tidy(value: Any) -> Any:
    """The same structure with every float rounded to 12 significant digits (for showing JSON)."""
    if isinstance(value, float):
        return float(f"{value:.12g}") if math.isfinite(value) else value
    if isinstance(value, Mapping):
        return {key: tidy(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [tidy(item) for item in value]
    return value
