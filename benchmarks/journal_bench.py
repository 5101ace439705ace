"""Journal benchmark: what durability costs, and what opening a long session costs.

Prints, interleaved round by round through ``_bench.compare``, min and median:
  * ms a row acknowledged with group commit (one fsync per turn-sized batch) against one fsync
    per row, and plain appends without fsync (the ceiling; nothing acknowledged there);
  * the time to open a 50,000-row session (``read_session`` and a writable ``JournalWriter.open``)
    against a bare ``orjson.loads`` of every line of the same file at its best (collector off,
    rows let go), with the ratio (target <= 2x).

Run: ``PYTHONPATH=. python benchmarks/journal_bench.py [--dir /some/fs] [--rows 50000]``.
Files go to a temporary folder (``--dir`` picks the file system); the home folder is never touched.
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import collector_off, compare, report, wall_ms

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


def bench_writes(folder: Path, count: int, batch: int, runs: int) -> None:
    """Acknowledged rows: group commit against one fsync per row, ms per row, interleaved."""
    rows = rows_for(count)
    made = itertools.count()

    def group() -> float:
        with new_session(folder, f"group-{next(made)}") as writer:
            start = time.perf_counter()
            for i in range(0, count, batch):
                writer.append(rows[i : i + batch])
            return (time.perf_counter() - start) * 1000 / count

    def per_row() -> float:
        with new_session(folder, f"per-row-{next(made)}") as writer:
            start = time.perf_counter()
            for row in rows:
                writer.append([row])
            return (time.perf_counter() - start) * 1000 / count

    lines = [orjson.dumps(r.to_json(), option=orjson.OPT_APPEND_NEWLINE) for r in rows]

    def plain() -> float:
        fd = os.open(folder / f"plain-{next(made)}.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            start = time.perf_counter()
            for line in lines:
                os.write(fd, line)
            return (time.perf_counter() - start) * 1000 / count
        finally:
            os.close(fd)

    times = compare({"group": group, "per-row": per_row, "plain": plain}, runs, warm=False)
    report(
        f"group commit ({batch} rows a batch), {count:,} rows",
        times["group"],
        times["per-row"],
        anchor_name="one fsync per row",
        unit="ms wall a row",
    )
    report(
        f"plain writes, no fsync (not durable; the ceiling), {count:,} rows",
        times["plain"],
        unit="ms wall a row",
    )


def bench_open(folder: Path, count: int, runs: int) -> None:
    rows = rows_for(count)
    with new_session(folder, "long") as writer:
        for i in range(0, count, 5000):
            writer.append(rows[i : i + 5000])
        path = writer.path
    size = path.stat().st_size

    def bare() -> None:
        # The anchor at its best: the collector off and each row let go once decoded, as the
        # reader lets it go (it keeps the lines), so neither side walks a heap of kept dicts.
        with collector_off():
            loads = orjson.loads
            for line in path.read_bytes().splitlines():
                loads(line)

    def reader() -> None:
        log = read_session(path)
        assert len(log.rows) == count and not log.diagnostics

    def writable() -> None:
        with JournalWriter.open(path) as opened:
            assert not opened.read_only and len(opened.rows) == count

    times = compare(
        {"bare": lambda: wall_ms(bare), "reader": lambda: wall_ms(reader), "open": lambda: wall_ms(writable)},
        runs,
    )
    anchor = "a bare orjson.loads per line, collector off, rows let go"
    label = f"{count:,} rows, {size / 1e6:.1f} MB"
    report(
        f"read_session ({label})",
        times["reader"],
        times["bare"],
        anchor_name=anchor,
        unit="ms wall",
        budget=2.0,
    )
    report(
        f"JournalWriter.open: lock, read, fsync ({label})",
        times["open"],
        times["bare"],
        anchor_name=anchor,
        unit="ms wall",
        budget=2.0,
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dir", help="folder to benchmark in (default: a new temporary folder)")
    parser.add_argument("--writes", type=int, default=500, help="rows per write mode a round (default 500)")
    parser.add_argument("--batch", type=int, default=5, help="rows per group-commit batch (default 5)")
    parser.add_argument("--rows", type=int, default=50_000, help="rows in the session to open")
    parser.add_argument("--runs", type=int, default=5, help="rounds, interleaved")
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="journal-bench-", dir=args.dir))
    print(f"journal benchmark in {folder.parent}")
    try:
        bench_writes(folder, args.writes, args.batch, args.runs)
        bench_open(folder, args.rows, args.runs)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
