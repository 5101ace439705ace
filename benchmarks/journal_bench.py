"""Journal benchmark: what durability costs, and what opening a long session costs.

Prints one table:
  * acknowledged rows/s with group commit (one fsync per turn-sized batch), with one fsync per row,
    and plain appends without fsync (the ceiling; nothing acknowledged there);
  * the time to open a 50,000-row session (``read_session`` and a writable ``JournalWriter.open``)
    against a bare ``orjson.loads`` of every line of the same file, with the ratio (target <= 2x).

Run: ``PYTHONPATH=. python benchmarks/journal_bench.py [--dir /some/fs] [--rows 50000]``.
Files go to a temporary folder (``--dir`` picks the file system); the home folder is never touched.
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import interleave, load_average, min_median, ratio

from desktop.host.journal import (
    AssistantRow,
    JournalWriter,
    ModelSystem,
    RowBase,
    SystemRow,
    ToolResultRow,
    UserRow,
    read_session,
)
from desktop.host.journal.rows import Route

ROUTE = Route(provider="anthropic", model="claude-x", api="anthropic-messages", baseUrl="https://api")


def turn(n: int) -> list[RowBase]:
    """A realistic turn: prompt, system update, assistant tool call, tool result, final answer."""
    ts = 1_700_000_000_000 + n
    usage = {"input": 1200 + n % 97, "output": 80, "cacheRead": 1000, "cacheWrite": 0, "totalTokens": 1280}
    call = {"type": "toolCall", "id": f"call_{n}", "name": "read", "arguments": {"path": f"src/m{n}.py"}}
    return [
        UserRow(
            message={"role": "user", "content": f"Please look at module {n} and explain it.", "timestamp": ts}
        ),
        SystemRow(
            modelSystem=ModelSystem(
                message={
                    "role": "system",
                    "content": "",
                    "sections": {"environment": f"cwd=/work/project-{n % 7}", "skill:old": None},
                    "timestamp": ts,
                }
            ),
            label="environment changed",
        ),
        AssistantRow(
            message={
                "role": "assistant",
                "content": [{"type": "text", "text": "Let me read it."}, call],
                "api": "anthropic-messages",
                "provider": "anthropic",
                "model": "claude-x",
                "usage": usage,
                "stopReason": "toolUse",
                "timestamp": ts,
            },
            route=ROUTE,
        ),
        ToolResultRow(
            message={
                "role": "toolResult",
                "toolCallId": f"call_{n}",
                "toolName": "read",
                "content": [{"type": "text", "text": "def f(x):\n    return x * 2\n" * 8}],
                "isError": False,
                "timestamp": ts,
            }
        ),
        AssistantRow(
            message={
                "role": "assistant",
                "content": [{"type": "text", "text": f"Module {n} doubles its input. " * 4}],
                "api": "anthropic-messages",
                "provider": "anthropic",
                "model": "claude-x",
                "usage": usage,
                "stopReason": "stop",
                "timestamp": ts,
            },
            route=ROUTE,
        ),
    ]


def rows_for(count: int) -> list[RowBase]:
    rows: list[RowBase] = []
    n = 0
    while len(rows) < count:
        rows.extend(turn(n))
        n += 1
    return rows[:count]


def new_session(folder: Path, name: str) -> JournalWriter:
    return JournalWriter.create(folder / f"{name}.jsonl", cwd="/work/project", app_version="bench")


def rate(count: int, seconds: float) -> str:
    return f"{count / seconds:,.0f} rows/s"


def bench_writes(folder: Path, count: int, batch: int) -> list[tuple[str, str, str]]:
    rows = rows_for(count)
    results = []

    with new_session(folder, "group") as writer:
        start = time.perf_counter()
        for i in range(0, count, batch):
            writer.append(rows[i : i + batch])
        group = time.perf_counter() - start
        results.append((f"group commit ({batch} rows/batch)", rate(count, group), f"{writer.syncs} fsyncs"))

    with new_session(folder, "per-row") as writer:
        start = time.perf_counter()
        for row in rows:
            writer.append([row])
        single = time.perf_counter() - start
        results.append(("one fsync per row", rate(count, single), f"{writer.syncs} fsyncs"))

    lines = [orjson.dumps(r.to_json(), option=orjson.OPT_APPEND_NEWLINE) for r in rows]
    path = folder / "plain.jsonl"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        start = time.perf_counter()
        for line in lines:
            os.write(fd, line)
        plain = time.perf_counter() - start
    finally:
        os.close(fd)
    results.append(("plain writes, no fsync (not durable)", rate(count, plain), "0 fsyncs"))
    results.append(("group commit vs one fsync per row", f"{single / group:.1f}x faster", ""))
    return results


def bench_open(folder: Path, count: int, runs: int) -> list[tuple[str, str, str]]:
    rows = rows_for(count)
    with new_session(folder, "long") as writer:
        for i in range(0, count, 5000):
            writer.append(rows[i : i + 5000])
        path = writer.path
    size = path.stat().st_size

    def bare() -> float:
        # The anchor at its best: the collector off and each row let go once decoded, as the
        # reader lets it go (it keeps the lines), so neither side walks a heap of kept dicts.
        collecting = gc.isenabled()
        gc.disable()
        start = time.perf_counter()
        try:
            loads = orjson.loads
            for line in path.read_bytes().splitlines():
                loads(line)
        finally:
            if collecting:
                gc.enable()
        return time.perf_counter() - start

    def reader() -> object:
        log = read_session(path)
        assert len(log.rows) == count and not log.diagnostics
        return log

    def writable() -> object:
        with JournalWriter.open(path) as opened:
            assert not opened.read_only and len(opened.rows) == count
        return None

    def timed(action: Callable[[], object]) -> Callable[[], float]:
        def run() -> float:
            start = time.perf_counter()
            action()
            return time.perf_counter() - start

        return run

    times = interleave({"bare": bare, "reader": timed(reader), "open": timed(writable)}, runs)
    label = f"{count:,} rows, {size / 1e6:.1f} MB"
    bare_low, bare_mid = min_median(times["bare"])

    def line(name: str, key: str) -> tuple[str, str, str]:
        low, mid = min_median(times[key])
        r_low, r_mid = ratio(times[key], times["bare"])
        return (name, f"{low * 1000:.1f} / {mid * 1000:.1f} ms", f"{r_low:.2f}x / {r_mid:.2f}x")

    return [
        (
            f"bare orjson.loads per line, collector off, rows let go ({label})",
            f"{bare_low * 1000:.1f} / {bare_mid * 1000:.1f} ms",
            "1.00x",
        ),
        line("read_session (reader)", "reader"),
        line("JournalWriter.open (lock, read, fsync)", "open"),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dir", help="folder to benchmark in (default: a new temporary folder)")
    parser.add_argument("--writes", type=int, default=2000, help="rows per write mode (default 2000)")
    parser.add_argument("--batch", type=int, default=5, help="rows per group-commit batch (default 5)")
    parser.add_argument("--rows", type=int, default=50_000, help="rows in the session to open")
    parser.add_argument("--runs", type=int, default=5, help="open timings: rounds, interleaved")
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="journal-bench-", dir=args.dir))
    try:
        table = bench_writes(folder, args.writes, args.batch)
        table += [("", "", "")]
        table += bench_open(folder, args.rows, args.runs)
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    widths = [max(len(row[i]) for row in table) for i in range(3)]
    print(
        f"journal benchmark in {folder.parent} ({os.cpu_count()} cpus, {load_average()}); open: min / median"
    )
    for cells in table:
        print("  ".join(cell.ljust(width) for cell, width in zip(cells, widths, strict=True)).rstrip())


if __name__ == "__main__":
    main()
