"""What every benchmark shares: interleaved rounds, min and median, ratios, the machine's load.

The machine these benchmarks run on is shared, so a figure means something only next to its
anchor measured in the same run, the two interleaved round by round (a burst of load then
hits both), reported as min (the figure least disturbed) and median (the typical one), with
the load average at the time beside it (design X40). Child processes are timed by their CPU
(user + system, from ``RUSAGE_CHILDREN``), which other load on the machine inflates far less
than wall time. ``compare`` runs every side once first, uncounted, so caches are warm on both
sides or (``warm=False``, a side that warms itself) on neither; ``collector_off`` gives a
parsing anchor the collector setting the app's readers use; ``report`` prints a figure with
its ratio and its budget's verdict (design X41) and hands it to ``run_all.py``, which writes
``benchmarks/README.md`` from one run.
"""

from __future__ import annotations

import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


def load_average() -> str:
    """The 1, 5 and 15 minute load averages, as printed beside every figure."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.1f} {five:.1f} {fifteen:.1f}"


def interleave(cases: Mapping[str, Callable[[], T]], rounds: int) -> dict[str, list[T]]:
    """Each case once per round, the order rotated every round so no case always runs right
    after another; each call returns its own measurement (ms, or a record of several)."""
    names = list(cases)
    out: dict[str, list[T]] = {name: [] for name in names}
    for round_number in range(rounds):
        shift = round_number % len(names) if names else 0
        for name in names[shift:] + names[:shift]:
            out[name].append(cases[name]())
    return out


def min_median(values: Sequence[float]) -> tuple[float, float]:
    return min(values), statistics.median(values)


def ratio(values: Sequence[float], anchor: Sequence[float]) -> tuple[float, float]:
    """min over min and median over median."""
    return min(values) / min(anchor), statistics.median(values) / statistics.median(anchor)


def child_cpu_ms(
    argv: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | None = None
) -> tuple[float, float, bytes]:
    """Run one child process to its end: its CPU ms (user + system, its own children
    included), its wall ms and its standard output. Fails loudly when the child fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        list(argv), env=dict(env) if env is not None else None, cwd=cwd, capture_output=True
    )
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(
            f"{argv[0]} failed ({done.returncode}): {done.stderr.decode(errors='replace')[-800:]}"
        )
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return cpu, wall, done.stdout


def table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A Markdown table (what ``benchmarks/README.md`` holds), numbers as given."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def pi_desktop() -> list[str]:
    """The command a user runs: the installed ``pi-desktop`` console script next to this
    interpreter when there is one, else ``python -m desktop``."""
    script = Path(sys.executable).with_name("pi-desktop")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "desktop"]


@contextmanager
def collector_off() -> Iterator[None]:
    """The cyclic garbage collector off for the block (and back as it was): the app's readers
    turn it off while they parse, so an anchor that parses is measured the same way (its best)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def thread_cpu_ms(action: Callable[[], object]) -> float:
    """This thread's CPU ms for one call of ``action`` (other threads and processes not counted)."""
    start = time.thread_time()
    action()
    return (time.thread_time() - start) * 1000


def wall_ms(action: Callable[[], object]) -> float:
    """Wall-clock ms for one call of ``action`` (for what only the clock can show: a stall)."""
    start = time.perf_counter()
    action()
    return (time.perf_counter() - start) * 1000


def compare(
    cases: Mapping[str, Callable[[], float]], rounds: int, *, warm: bool = True
) -> dict[str, list[float]]:
    """``interleave`` with every case run once first and not counted when ``warm`` (page and
    byte-code caches, imports: warm on both sides, never on one only)."""
    if warm:
        for case in cases.values():
            case()
    return interleave(cases, rounds)


def verdict(ratio_min: float, ratio_median: float, limit: float) -> str:
    """Whether a ratio keeps its budget: at both the min and the median, at the min only, or not."""
    if ratio_min <= limit and ratio_median <= limit:
        return "met"
    if ratio_min <= limit:
        return "met at the min, not at the median"
    return "NOT MET"


def number(value: float) -> str:
    """A figure as printed: one decimal from 10 up, three significant digits below."""
    return f"{value:.1f}" if abs(value) >= 10 else f"{value:.3g}"


def report(
    name: str,
    values: Sequence[float],
    anchor: Sequence[float] | None = None,
    *,
    anchor_name: str = "",
    unit: str = "ms",
    budget: float | None = None,
    budget_text: str = "",
    limit: float | None = None,
    headline: bool = False,
) -> str:
    """Print one figure (min / median, and its ratio to ``anchor`` with the budget's verdict
    when given; or, with ``limit``, the verdict of the figure itself against that absolute
    bound in ``unit``) with the load beside it, and add it to the results file ``run_all.py`` names in
    ``PI_BENCH_RESULTS`` (one JSON object a line), from which it writes the README's tables
    (``headline``: one of the budgets the README lists first, design X41)."""
    low, mid = min_median(values)
    line = f"{name}: {number(low)} / {number(mid)} {unit} (min / median of {len(values)})"
    record: dict[str, Any] = {
        "bench": Path(sys.argv[0]).name,
        "name": name,
        "unit": unit,
        "min": low,
        "median": mid,
        "n": len(values),
        "load": os.getloadavg(),
        "headline": headline,
    }
    if anchor is not None:
        a_low, a_mid = min_median(anchor)
        r_min, r_median = ratio(values, anchor)
        line += (
            f"; {anchor_name} {number(a_low)} / {number(a_mid)} {unit}; ratio {r_min:.2f}x / {r_median:.2f}x"
        )
        record.update(
            anchor_name=anchor_name,
            anchor_min=a_low,
            anchor_median=a_mid,
            ratio_min=r_min,
            ratio_median=r_median,
        )
        if budget is not None:
            met = verdict(r_min, r_median, budget)
            line += f"; budget <= {budget:g}x{' ' + budget_text if budget_text else ''}: {met}"
            record.update(budget=budget, budget_text=budget_text, verdict=met)
    if limit is not None:
        met = verdict(low, mid, limit)
        line += f"; budget <= {number(limit)} {unit}: {met}"
        record.update(limit=limit, verdict=met)
    line += f"; {load_average()}"
    print(line, flush=True)
    results = os.environ.get("PI_BENCH_RESULTS")
    if results:
        with open(results, "a", encoding="utf-8") as out:
            out.write(json.dumps(record) + "\n")
    return line
