"""Foreign-session benchmark: opening a 100 MB pi or Claude Code transcript (design X1).

A foreign transcript must open within the same budget as a Desktop session of that size. For a
pi file, a Claude Code file and a Desktop session of about the same size (default 100 MB each),
this times the paths a user takes (open the file to the current branch's timeline; rebuild the
model's context) against the anchor: a bare ``orjson.loads`` of every line of the same file.
Runs are interleaved round by round through ``_bench.compare`` (each once first, uncounted) so a
busy machine slows all sides alike; min and median of each path and its ratio to its own anchor,
and each foreign path against the Desktop session's same path.
"open to timeline" is what File → Open costs before the first paint (rows are built when shown);
"open + context" adds rebuilding what the model was given (the Payload tab's input).

Run: ``PYTHONPATH=. python benchmarks/foreign_bench.py [--mb 100] [--runs 5] [--dir /some/fs]``.
Files go to a temporary folder; the home folder is never touched.
"""

from __future__ import annotations

import argparse
import functools
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import collector_off, compare, report, wall_ms

from desktop.host.journal import JournalWriter, model_order, read_session
from desktop.session.foreign import open_foreign
from desktop.session.history import context_view

TOOL_TEXT = "def handler(event):\n    return {'status': 200, 'body': event['body']}\n" * 24
USAGE = {"input": 1200, "output": 80, "cacheRead": 9000, "cacheWrite": 0, "totalTokens": 10280}
USAGE["cost"] = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}  # type: ignore[assignment]


def _write_lines(path: Path, lines: Iterator[dict[str, Any]], target: int) -> int:
    written = 0
    with path.open("wb") as handle:
        for obj in lines:
            data = orjson.dumps(obj) + b"\n"
            handle.write(data)
            written += len(data)
            if written >= target:
                break
    return written


def pi_entries() -> Iterator[dict[str, Any]]:
    yield {
        "type": "session",
        "version": 3,
        "id": "bench",
        "timestamp": "2026-10-01T09:00:00.000Z",
        "cwd": "/w",
    }
    parent: str | None = None
    n = 0

    def entry(message: dict[str, Any]) -> dict[str, Any]:
        nonlocal parent, n
        n += 1
        eid = f"{n:08x}"
        out = {"type": "message", "id": eid, "parentId": parent, "timestamp": "2026-10-01T09:00:00.000Z"}
        out["message"] = message
        parent = eid
        return out

    yield entry({"role": "system", "content": "", "sections": {"preamble": "You are pi."}, "timestamp": 1})
    turn = 0
    while True:
        turn += 1
        yield entry({"role": "user", "content": f"Look at module {turn} and explain it.", "timestamp": turn})
        if turn % 10 == 0:
            yield entry(
                {"role": "system", "content": "", "sections": {"env": f"turn {turn}"}, "timestamp": turn}
            )
        call = {"type": "toolCall", "id": f"c{turn}", "name": "read", "arguments": {"path": f"m{turn}.py"}}
        yield entry(
            {"role": "assistant", "content": [{"type": "text", "text": "Reading."}, call], "api": "anthropic-messages",
             "provider": "anthropic", "model": "claude-opus-5-5", "usage": USAGE, "stopReason": "toolUse", "timestamp": turn}
        )  # fmt: skip
        yield entry(
            {"role": "toolResult", "toolCallId": f"c{turn}", "toolName": "read",
             "content": [{"type": "text", "text": TOOL_TEXT}], "isError": False, "timestamp": turn}
        )  # fmt: skip
        yield entry(
            {"role": "assistant", "content": [{"type": "text", "text": f"Module {turn} echoes its input. " * 4}],
             "api": "anthropic-messages", "provider": "anthropic", "model": "claude-opus-5-5", "usage": USAGE,
             "stopReason": "stop", "timestamp": turn}
        )  # fmt: skip


def claude_entries() -> Iterator[dict[str, Any]]:
    base = {
        "isSidechain": False,
        "userType": "external",
        "cwd": "/w",
        "sessionId": "bench",
        "version": "2.0.14",
    }
    parent: str | None = None
    n = 0
    raw_usage = {
        "input_tokens": 3,
        "cache_creation_input_tokens": 100,
        "cache_read_input_tokens": 9000,
        "output_tokens": 80,
    }

    def entry(kind: str, **fields: Any) -> dict[str, Any]:
        nonlocal parent, n
        n += 1
        uuid = f"00000000-0000-4000-8000-{n:012d}"
        out = {
            "parentUuid": parent,
            **base,
            "type": kind,
            **fields,
            "uuid": uuid,
            "timestamp": "2026-10-02T10:00:00.000Z",
        }
        parent = uuid
        return out

    turn = 0
    while True:
        turn += 1
        text = f"<system-reminder>\nturn {turn}\n</system-reminder>\nLook at module {turn}."
        yield entry("user", message={"role": "user", "content": text})
        reply = {"id": f"msg_{turn}a", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                 "stop_reason": None, "usage": raw_usage}  # fmt: skip
        yield entry("assistant", message={**reply, "content": [{"type": "text", "text": "Reading."}]})
        tool = {"type": "tool_use", "id": f"t{turn}", "name": "Read", "input": {"file_path": f"m{turn}.py"}}
        yield entry("assistant", message={**reply, "content": [tool], "stop_reason": "tool_use"})
        result = {"type": "tool_result", "tool_use_id": f"t{turn}", "content": TOOL_TEXT}
        yield entry("user", message={"role": "user", "content": [result]})
        answer = {**reply, "id": f"msg_{turn}b", "stop_reason": "end_turn"}
        yield entry(
            "assistant", message={**answer, "content": [{"type": "text", "text": f"Module {turn}. " * 8}]}
        )


def desktop_rows() -> Iterator[dict[str, Any]]:
    turn = 0
    route = {
        "provider": "anthropic",
        "model": "claude-opus-5-5",
        "api": "anthropic-messages",
        "baseUrl": "https://x",
    }
    for entry in pi_entries():
        if entry.get("type") != "message":
            continue
        message = entry["message"]
        turn += 1
        row: dict[str, Any] = {"type": message["role"], "v": 1, "id": f"R{turn:012d}", "ts": turn}
        if message["role"] == "system":
            row["modelSystem"] = {"v": 1, "message": message}
        else:
            row["message"] = message
        if message["role"] == "assistant":
            row["route"] = route
        yield row


def make_files(folder: Path, size: int) -> dict[str, Path]:
    pi = folder / "pi.jsonl"
    _write_lines(pi, pi_entries(), size)
    claude = folder / "claude.jsonl"
    _write_lines(claude, claude_entries(), size)
    desktop = folder / "desktop.jsonl"
    JournalWriter.create(desktop, cwd="/w", app_version="bench").close()
    with desktop.open("ab") as handle:
        written = desktop.stat().st_size
        for row in desktop_rows():
            data = orjson.dumps(row) + b"\n"
            handle.write(data)
            written += len(data)
            if written >= size:
                break
    return {"pi": pi, "claude-code": claude, "desktop": desktop}


def bare(path: Path) -> Callable[[], object]:
    """The anchor at its best: one read, one split, orjson per line, the cyclic GC paused."""

    def run() -> object:
        with collector_off():
            return [orjson.loads(line) for line in path.read_bytes().splitlines()]

    return run


FIRST_PAINT = 60  # rows the timeline shows at once


def foreign_open(path: Path) -> Callable[[], object]:
    """What File → Open does: detect, read, index, plan the current branch, build the first screen."""

    def run() -> object:
        session = open_foreign(path)
        rows = session.timeline()
        assert len(rows[:FIRST_PAINT]) == FIRST_PAINT and not session.diagnostics
        return rows

    return run


def foreign_context(path: Path) -> Callable[[], object]:
    """Open, then the model's context (the Payload tab's input)."""

    def run() -> object:
        session = open_foreign(path)
        context = session.context()
        assert context.messages
        return context

    return run


def foreign_window(path: Path) -> Callable[[], object]:
    """The window's open of a foreign session: what the worker sends (``open_foreign_info``:
    the lazy rows' kind bytes, pi's section diffs, the priced usage lines, the branches), then
    the first screen's rows as the timeline builds them."""
    from desktop.ui.inspect_ops import open_foreign_info
    from desktop.ui.messages import ForeignBranchRows

    def run() -> object:
        _session, info = open_foreign_info(path)
        assert isinstance(info.rows, ForeignBranchRows)
        rows = info.rows.reader
        first = [rows.row(i) for i in range(max(0, len(rows) - FIRST_PAINT), len(rows))]
        assert len(first) == FIRST_PAINT and not info.diagnostics
        return info

    return run


def desktop_open(path: Path) -> Callable[[], object]:
    """The window's open of a Desktop session: the journal read and model order."""

    def run() -> object:
        log = read_session(path)
        rows = model_order(log.rows)
        assert rows and not log.errors
        return rows

    return run


def desktop_context(path: Path) -> Callable[[], object]:
    def run() -> object:
        log = read_session(path)
        view = context_view(model_order(log.rows))
        assert view.messages
        return view

    return run


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mb", type=float, default=100.0, help="size of each file in MB (default 100)")
    parser.add_argument("--runs", type=int, default=5, help="interleaved runs (default 5)")
    parser.add_argument("--dir", help="folder to benchmark in (default: a new temporary folder)")
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="foreign-bench-", dir=args.dir))
    try:
        files = make_files(folder, int(args.mb * 1e6))
        paths: dict[str, Callable[[], object]] = {
            "desktop: open to timeline": desktop_open(files["desktop"]),
            "pi: open to timeline": foreign_open(files["pi"]),
            "claude-code: open to timeline": foreign_open(files["claude-code"]),
            "pi: open to window rows": foreign_window(files["pi"]),
            "claude-code: open to window rows": foreign_window(files["claude-code"]),
            "desktop: open + context": desktop_context(files["desktop"]),
            "pi: open + context": foreign_context(files["pi"]),
            "claude-code: open + context": foreign_context(files["claude-code"]),
        }
        cases = {f"bare {kind}": bare(path) for kind, path in files.items()} | paths
        times = compare(
            {name: functools.partial(wall_ms, action) for name, action in cases.items()}, args.runs
        )
        for name in paths:
            kind = name.split(":")[0]
            size = files[kind].stat().st_size / 1e6
            report(
                f"{name} ({size:.1f} MB)",
                times[name],
                times[f"bare {kind}"],
                anchor_name="a bare orjson parse of the file, collector off",
                unit="ms wall",
            )
        for kind in ("pi", "claude-code"):
            for step in ("open to timeline", "open + context"):
                report(
                    f"{kind}: {step}, against a Desktop session of the same size",
                    times[f"{kind}: {step}"],
                    times[f"desktop: {step}"],
                    anchor_name=f"desktop: {step}",
                    unit="ms wall",
                )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
