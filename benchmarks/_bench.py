"""What every benchmark shares: interleaved rounds, min and median, ratios, the machine's load.

The machine these benchmarks run on is shared, so a figure means something only next to its
anchor measured in the same run, the two interleaved round by round (a burst of load then
hits both), reported as min (the figure least disturbed) and median (the typical one), with
the load average at the time beside it. Child processes are timed by their CPU (user + system,
from ``RUSAGE_CHILDREN``), which other load on the machine inflates far less than wall time.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
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
