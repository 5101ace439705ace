"""What-if benchmark: one route x strategy pass against a collector-off parse (design X3, P7).

For generated Desktop journals of about 1,000 and 10,000 rows (``desktop.bench.whatif_session``:
questions, tool calls and results, a system update every fourth turn, a tool added every
tenth, idle gaps past the short retention), this times the path ``pi-desktop whatif`` takes:
reading the request sequence, then one pass per route and strategy (``prompts_for`` and
``simulate``, what ``replay_route`` runs per strategy: projected through the
incremental projection, read in the provider's cache order, folded through the cache rules
with retention)). The anchor is a collector-off ``orjson.loads`` of every line of the same
file, in the same run. Runs are interleaved (anchor, then each path, repeated) so a busy
machine slows all sides alike; the table gives min and median and each path's ratio to the
anchor (min over min). Peak memory of one pass (Python allocations, ``tracemalloc``, in a run
of its own) is given as a multiple of the file's size.

Run: ``PYTHONPATH=. python benchmarks/whatif_bench.py [--rows 1000 10000] [--runs 5]``.
Files go to a temporary folder.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, cast

import orjson

from desktop.bench.whatif_session import write
from desktop.pi.cache_rules import simulate
from desktop.pi.projection import CREDENTIAL_PLACEHOLDER, RequestOptions
from desktop.pi.routes import resolve_model, route_from_string
from desktop.pi.types import Model
from desktop.session.whatif import Delivery, RequestSequence, prompts_for, replay_times, request_sequence

PASSES: list[tuple[str, Delivery]] = [
    ("anthropic/claude-opus-5-5", "chronological"),
    ("anthropic/claude-opus-5-5", "folded"),
    ("openai/gpt-5.5", "chronological"),
    ("deepseek/deepseek-flash", "attributed"),
]


def parse(path: Path) -> int:
    """The anchor: every line decoded, the collector off (as the app's readers run)."""
    gc.disable()
    try:
        with path.open("rb") as handle:
            rows = [orjson.loads(line) for line in handle]
        return len(rows)
    finally:
        gc.enable()


def one_pass(sequence: RequestSequence, route: str, delivery: Delivery) -> int:
    """One route x strategy pass: every request projected, read in cache order and folded
    through the provider's cache with retention at the recorded times."""
    model = cast(Model, resolve_model(route_from_string(route)).model)
    options = RequestOptions(session_id=sequence.session_id, api_key=CREDENTIAL_PLACEHOLDER)
    prompts = prompts_for(model, sequence.requests, delivery, None, options)
    usages = simulate(prompts, times_ms=replay_times(sequence))
    return sum(usage.read for usage in usages)


def read_and_pass(path: Path, route: str, delivery: Delivery) -> int:
    return one_pass(request_sequence(path), route, delivery)


def timed(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def peak(fn: Callable[[], Any]) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as folder:
        for rows in args.rows:
            path = write(Path(folder) / f"w{rows}.jsonl", max(1, round(rows / 4.25)))
            size = path.stat().st_size
            lines = parse(path)
            sequence = request_sequence(path)
            samples: dict[str, list[float]] = {"parse (anchor)": [], "read sequence": []}
            for route, delivery in PASSES:
                samples[f"{route} {delivery}"] = []
            for _ in range(args.runs):
                samples["parse (anchor)"].append(timed(partial(parse, path)))
                samples["read sequence"].append(timed(partial(request_sequence, path)))
                for route, delivery in PASSES:
                    samples[f"{route} {delivery}"].append(timed(partial(one_pass, sequence, route, delivery)))
            anchor = min(samples["parse (anchor)"])
            print(
                f"\n{rows:,} rows wanted, {lines:,} lines, {len(sequence.requests):,} requests, {size / 1e6:.2f} MB"
            )
            print(f"{'path':<44} {'min s':>8} {'median s':>9} {'x anchor':>9}")
            for name, values in samples.items():
                best = min(values)
                print(f"{name:<44} {best:8.3f} {statistics.median(values):9.3f} {best / anchor:9.2f}")
            route, delivery = PASSES[0]
            memory = peak(partial(read_and_pass, path, route, delivery))
            print(
                f"peak Python memory, read + one pass: {memory / 1e6:.1f} MB = {memory / size:.2f}x the file"
            )


if __name__ == "__main__":
    main()
