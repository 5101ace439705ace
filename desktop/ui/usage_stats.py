"""Per-request usage and session totals from assistant rows (design G5).

Each assistant row carries pi-ai's ``usage`` (input, output, cacheRead, cacheWrite, cost). The
hit ratio is the share of the prompt served from the cache: ``cacheRead / (input + cacheRead +
cacheWrite)``, because pi-ai's ``input`` counts only uncached prompt tokens.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple


class UsageLine(NamedTuple):
    """One request's usage. A named tuple: a long session opens with one per assistant row,
    made while the file is read, and a tuple is the cheapest record to make and hold (the
    launch and memory budgets of a 100,000-row open, design X26)."""

    row_id: str
    ts: int
    model: str
    input: int
    cache_read: int
    cache_write: int
    output: int
    cost: float
    #: The parts of ``cost`` for cache reads and for output (the cost chart's split, design
    #: G15); None where the file gives only a total.
    cached_cost: float | None = None
    output_cost: float | None = None

    @property
    def prompt(self) -> int:
        return self.input + self.cache_read + self.cache_write

    @property
    def hit_ratio(self) -> float | None:
        return self.cache_read / self.prompt if self.prompt else None


@dataclass(frozen=True)
class UsageTotals:
    requests: int = 0
    input: int = 0
    cache_read: int = 0
    cache_write: int = 0
    output: int = 0
    cost: float = 0.0

    @property
    def prompt(self) -> int:
        return self.input + self.cache_read + self.cache_write

    @property
    def hit_ratio(self) -> float | None:
        return self.cache_read / self.prompt if self.prompt else None

    def plus(self, line: UsageLine) -> UsageTotals:
        return UsageTotals(
            self.requests + 1,
            self.input + line.input,
            self.cache_read + line.cache_read,
            self.cache_write + line.cache_write,
            self.output + line.output,
            self.cost + line.cost,
        )


def _int(value: Any) -> int:
    kind = type(value)
    return int(value) if kind is int or kind is float else 0


def _float(value: Any) -> float:
    """A cost figure; absent or null (the journal allows both) counts as nothing."""
    kind = type(value)
    return float(value) if kind is int or kind is float else 0.0


def usage_line(row: Mapping[str, Any]) -> UsageLine | None:
    """The usage of one assistant row (or a compaction's summary request), else None.

    Called for every row of a long session, so it tests plain ``dict`` types rather than the
    slower abstract ``Mapping`` check: journal rows are always parsed JSON dicts.
    """
    kind = row.get("type")
    if kind != "assistant" and kind != "compaction":
        return None
    message = row.get("message") if kind == "assistant" else row
    if type(message) is not dict:
        return None
    usage = message.get("usage")
    if type(usage) is not dict:
        return None
    cost = usage.get("cost")
    total = _float(cost.get("total")) if type(cost) is dict else 0.0
    parts = (
        (_float(cost.get("cacheRead")), _float(cost.get("output"))) if type(cost) is dict else (None, None)
    )
    # One model name string for every row of that model: a long session has tens of thousands.
    model = sys.intern(str(message.get("model", ""))) if kind == "assistant" else "compaction summary"
    row_id = row.get("id", "")
    ts, given, read, write, output = (
        row.get("ts"),
        usage.get("input"),
        usage.get("cacheRead"),
        usage.get("cacheWrite"),
        usage.get("output"),
    )
    if (
        type(ts) is int
        and type(given) is int
        and type(read) is int
        and type(write) is int
        and type(output) is int
    ):
        # The common row, made without a call per field (once per request of a long session).
        return UsageLine(
            row_id if type(row_id) is str else str(row_id),
            ts,
            model,
            given,
            read,
            write,
            output,
            total,
            *parts,
        )
    return UsageLine(
        str(row_id), _int(ts), model, _int(given), _int(read), _int(write), _int(output), total, *parts
    )


def usage_lines(rows: Iterable[Mapping[str, Any]]) -> list[UsageLine]:
    return [line for row in rows if (line := usage_line(row)) is not None]


def totals(lines: Iterable[UsageLine]) -> UsageTotals:
    items = list(lines)
    return UsageTotals(
        len(items),
        sum(line.input for line in items),
        sum(line.cache_read for line in items),
        sum(line.cache_write for line in items),
        sum(line.output for line in items),
        sum(line.cost for line in items),
    )


def format_ratio(ratio: float | None) -> str:
    return "—" if ratio is None else f"{ratio:.0%}"
