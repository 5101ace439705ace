"""Every benchmark in one run, and ``benchmarks/README.md`` written from it.

Run from the repository root::

    PYTHONPATH=$PWD python benchmarks/run_all.py [--quick] [--only NAME,...] [--out FILE]

Each benchmark runs in its own process, one after the other, with the command the README shows
beside its figures; the machine's load average (``os.getloadavg``) is taken before and after
each, and every figure a benchmark reports through ``_bench.report`` carries the load at the
moment it was measured. The benchmarks that print their own tables (``open_bench.py``,
``first_request_bench.py``, ``whatif_bench.py``, ``memory_floor.py``) are quoted as they printed. A benchmark that
fails or runs out of its time is written down as such, not left out. ``--quick`` runs every
benchmark small (a smoke run: the README it writes is not the one to commit).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import number, verdict

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
HISTORY = "HISTORY.md"


@dataclass(frozen=True, slots=True)
class Bench:
    """One benchmark as the run starts it: its script, full and quick arguments, what it shows."""

    script: str
    args: tuple[str, ...]
    quick: tuple[str, ...]
    shows: str
    timeout: int = 1200


BENCHES = (
    Bench(
        "startup_bench.py",
        ("--rounds", "9"),
        ("--rounds", "2", "--rows", "2000"),
        "`pi-desktop --help` and `status` from a fresh process against Python's own start and a "
        "collector-off orjson parse; `status` of a pi session against pi-coding-agent's session "
        "manager in Node",
    ),
    Bench(
        "turn_bench.py",
        (
            "--sizes",
            "1000,50000,100000",
            "--rounds",
            "3",
            "--turns",
            "3",
            "--apis",
            "anthropic-messages,openai-responses,openai-completions",
        ),
        ("--sizes", "1000,5000", "--rounds", "2", "--turns", "2", "--apis", "anthropic-messages"),
        "a turn through `run_turn` (encode and send included) after reopening the session, the first "
        "turn counted, by session size; the largest also compacted as the app compacts automatically "
        "(its body within the window), beside its never-compacted history (a body no provider accepts)",
        timeout=1800,
    ),
    Bench(
        "first_request_bench.py",
        ("--sizes", "10000,50000", "--rounds", "3"),
        ("--sizes", "2000", "--rounds", "1", "--apis", "anthropic-messages"),
        "the first request after open (`payload`, the runtime's first request, `chat`'s first turn) "
        "against pi-ai's first call in a fresh Node process",
        timeout=1800,
    ),
    Bench(
        "open_bench.py",
        ("--rounds", "3"),
        ("--rounds", "1", "--rows", "5000"),
        "`pi-desktop PATH` for 100,000 rows from a fresh process, and File → Open in a running "
        "window, against a collector-off parse process",
    ),
    Bench(
        "memory_floor.py",
        ("--rounds", "3"),
        ("--rounds", "1", "--rows", "5000"),
        "what a bare Qt window holding the same 100,000-row session at the least costs in memory: "
        "a floor to read `open_bench.py`'s memory figure against",
    ),
    Bench(
        "projection_bench.py",
        (
            "--sizes",
            "1000,10000,50000",
            "--rounds",
            "3",
            "--repeat",
            "3",
            "--apis",
            "anthropic-messages,openai-responses,openai-completions",
        ),
        ("--sizes", "1000,3000", "--rounds", "2", "--repeat", "2", "--apis", "anthropic-messages"),
        "a from-scratch projection and body of decoded messages (`payload --context`) against "
        "pi-ai in Node, both warm",
    ),
    Bench(
        "whatif_bench.py",
        ("--rows", "1000", "--runs", "3"),
        ("--rows", "200", "--runs", "1"),
        "the what-if replay against a collector-off parse of the file",
    ),
    Bench(
        "journal_bench.py",
        ("--runs", "5"),
        ("--runs", "2", "--writes", "50", "--rows", "5000"),
        "acknowledged rows with group commit; opening a 50,000-row session against a collector-off parse",
    ),
    Bench(
        "timeline_bench.py",
        ("--rounds", "5"),
        ("--rounds", "2", "--rows", "5000"),
        "a jump of the 100,000-row timeline and the stalls of showing and hiding hidden rows",
    ),
    Bench(
        "conversation_bench.py",
        ("--rounds", "9"),
        ("--rounds", "2", "--rows", "5000"),
        "one jump in conversation mode in 100,000 rows",
    ),
    Bench(
        "foreign_bench.py",
        ("--mb", "20", "--runs", "5"),
        ("--mb", "2", "--runs", "2"),
        "opening 20 MB pi and Claude Code sessions against a collector-off parse and a Desktop "
        "session of the same size",
    ),
    Bench(
        "handover_bench.py",
        ("--rounds", "9"),
        ("--rounds", "2"),
        "a second launch handing its file to the running window against a bare `QLocalSocket` client",
    ),
    Bench(
        "http_bench.py",
        ("--rounds", "5", "--requests", "20", "--transport"),
        ("--rounds", "1", "--requests", "5"),
        "one request through `HttpDispatcher` against a bare pooled `httpx` request",
    ),
    Bench(
        "tool_args_bench.py",
        ("--rounds", "3"),
        ("--rounds", "2"),
        "one 1 MB tool-call argument stream against ten of 100 KB",
    ),
    Bench(
        "stream_bench.py",
        ("--rounds", "5"),
        ("--rounds", "2", "--words", "500"),
        "SSE decoding and each family's parser against splitting the same bytes into lines",
    ),
    Bench(
        "bundle_bench.py",
        ("--runs", "3"),
        ("--runs", "1"),
        "the PyInstaller bundle built clean, then its first finished turn against the venv's",
        timeout=1800,
    ),
)


@dataclass
class Outcome:
    bench: Bench
    argv: list[str]
    load_before: tuple[float, float, float]
    load_after: tuple[float, float, float] = (0.0, 0.0, 0.0)
    seconds: float = 0.0
    status: str = "ok"
    output: str = ""
    figures: list[dict[str, Any]] = field(default_factory=list)


def run(bench: Bench, quick: bool) -> Outcome:
    argv = [sys.executable, str(HERE / bench.script), *(bench.quick if quick else bench.args)]
    outcome = Outcome(bench, argv, os.getloadavg())
    with tempfile.TemporaryDirectory(prefix="pi-bench-") as folder:
        results = Path(folder) / "results.jsonl"
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "QT_QPA_PLATFORM": "offscreen",
            "PI_BENCH_RESULTS": str(results),
        }
        start = time.monotonic()
        print(f"== {bench.script} ({load(outcome.load_before)})", flush=True)
        try:
            done = subprocess.run(
                argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=bench.timeout, check=False
            )
            outcome.output = done.stdout + (f"\n{done.stderr[-3000:]}" if done.returncode else "")
            if done.returncode:
                outcome.status = f"failed (exit {done.returncode})"
        except subprocess.TimeoutExpired as stopped:
            partial = stopped.stdout
            outcome.output = (
                partial.decode(errors="replace") if isinstance(partial, bytes) else (partial or "")
            )
            outcome.status = f"stopped after {bench.timeout} s"
        outcome.seconds = time.monotonic() - start
        outcome.load_after = os.getloadavg()
        if results.exists():
            outcome.figures = [json.loads(line) for line in results.read_text().splitlines() if line]
        if bench.script == "open_bench.py":
            outcome.figures += open_figures(outcome.output, outcome.load_after)
    print(outcome.output.rstrip(), flush=True)
    print(f"-- {outcome.status} in {outcome.seconds:.0f} s ({load(outcome.load_after)})", flush=True)
    return outcome


def open_figures(output: str, after: tuple[float, float, float]) -> list[dict[str, Any]]:
    """The open's budgets (design X41) from the summary ``open_bench.py`` prints as JSON: the
    first paint of File → Open against a parse at its best (the collector off, as the app's
    readers run), and the longest stall until that paint."""
    lines = output.splitlines()
    try:
        start, end = lines.index("{"), lines.index("}")
        summary = json.loads("\n".join(lines[start : end + 1]))
    except ValueError:  # no summary printed (it failed, or prints another shape now): quoted as printed
        return []
    figures: list[dict[str, Any]] = []
    if not isinstance(summary, dict):
        return []
    rows = f"{summary.get('rows', 0):,} rows, {summary.get('file_mb', '?')} MB"
    paint, parse = summary.get("first_paint"), summary.get("parse_gc_off")
    over = summary.get("first_paint_over_parse_gc_off")
    if paint and parse and over:
        figures.append(
            {
                "bench": "open_bench.py",
                "name": f"File → Open {rows}: pick to first paint",
                "unit": "ms wall",
                "min": paint["min"] * 1000,
                "median": paint["median"] * 1000,
                "anchor_name": "a bare parse, collector off",
                "anchor_min": parse["min"] * 1000,
                "anchor_median": parse["median"] * 1000,
                "ratio_min": over["min"],
                "ratio_median": over["median"],
                "budget": 1.5,
                "verdict": verdict(over["min"], over["median"], 1.5),
                "load": after,
                "headline": True,
            }
        )
    stall = summary.get("stall_to_paint")
    if stall:
        figures.append(
            {
                "bench": "open_bench.py",
                "name": f"File → Open {rows}: longest stall to first paint",
                "unit": "ms wall",
                "min": stall["min"] * 1000,
                "median": stall["median"] * 1000,
                "limit": 50,
                "verdict": verdict(stall["min"] * 1000, stall["median"] * 1000, 50),
                "load": after,
                "headline": True,
            }
        )
    return figures


def load(values: tuple[float, float, float] | list[float]) -> str:
    return "load " + " ".join(f"{v:.1f}" for v in values)


def command(outcome: Outcome) -> str:
    script = f"benchmarks/{outcome.bench.script}"
    qt = "QT_QPA_PLATFORM=offscreen " if outcome.bench.script in QT else ""
    return f"PYTHONPATH=$PWD {qt}python {script} {' '.join(outcome.argv[2:])}".rstrip()


QT = {
    "open_bench.py",
    "memory_floor.py",
    "timeline_bench.py",
    "conversation_bench.py",
    "handover_bench.py",
    "foreign_bench.py",
}


def figure(record: dict[str, Any]) -> str:
    return f"{number(record['min'])} / {number(record['median'])} {record['unit']}"


def anchor_figure(record: dict[str, Any]) -> str:
    return f"{record['anchor_name']}: {number(record['anchor_min'])} / {number(record['anchor_median'])}"


def budget_table(outcomes: list[Outcome], *, headline: bool) -> list[str]:
    """One row per figure with a verdict: the budgets of design X41 or the other targets."""
    lines = [
        "| figure | min / median | anchor: min / median | ratio min / median | budget | verdict | load (1 min) |",
        "|---|---|---|---|---|---|---|",
    ]
    for outcome in outcomes:
        for record in outcome.figures:
            if "verdict" not in record or bool(record.get("headline")) != headline:
                continue
            if "limit" in record:
                anchor, ratios = "", ""
                budget = f"<= {record['limit']:g} {record['unit']}"
            else:
                anchor = anchor_figure(record)
                ratios = f"{record['ratio_min']:.2f}x / {record['ratio_median']:.2f}x"
                budget = f"<= {record['budget']:g}x {record.get('budget_text', '')}".rstrip()
            verdict = record["verdict"] if record["verdict"] == "met" else f"**{record['verdict']}**"
            lines.append(
                f"| {record['name']} (`{outcome.bench.script}`) | {figure(record)} | {anchor} | {ratios} "
                f"| {budget} | {verdict} | {record['load'][0]:.1f} |"
            )
    return lines


def missed(outcomes: list[Outcome]) -> list[str]:
    """The budgets this run did not meet, in words (nothing when every one was met)."""
    names = [
        f"{record['name']} (`{outcome.bench.script}`): {record['verdict'].lower()}"
        for outcome in outcomes
        for record in outcome.figures
        if record.get("headline") and record.get("verdict", "met") != "met"
    ]
    if not names:
        return ["Every budget above was met in this run.", ""]
    return ["Not met in this run:", "", *(f"- {name}" for name in names), ""]


def readme(outcomes: list[Outcome], quick: bool, started: str, finished: str) -> str:
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False
    ).stdout.strip()
    lines = [
        "# Benchmark figures",
        "",
        "Written by `benchmarks/run_all.py` from one run"
        + (" (**a quick smoke run: small sizes, few rounds; not figures to quote**)" if quick else "")
        + f": every benchmark one after the other, at {commit}, {started} to {finished} UTC, on "
        f"{platform.system()} {platform.machine()} with {os.cpu_count()} cores, Python "
        f"{platform.python_version()}. Other jobs may share the machine: the load average (1, 5 "
        "and 15 minutes, `os.getloadavg`) is given before and after each benchmark and beside each "
        f"figure; with {os.cpu_count()} cores, a load above {os.cpu_count()} means every process "
        "waited for a core part of the time. CPU figures (a process's or a thread's own CPU time) "
        "suffer from that far less than wall figures.",
        "",
        "Every figure is measured against its anchor in the same run, the two interleaved round by "
        "round (`benchmarks/_bench.py`), reported as min / median; the ratio is min over min and "
        "median over median. A budget is met when both ratios are within it.",
        "",
        "To reproduce everything: `PYTHONPATH=$PWD python benchmarks/run_all.py` (Node and "
        "`npm install` in `scripts/oracle` and `scripts/oracle-agent` for the pi-ai and "
        "pi-coding-agent anchors). Each section below gives its own command. Earlier rounds' notes "
        f"(what changed and why, older figures) are in [{HISTORY}]({HISTORY}).",
        "",
        "## The budgets (design X41)",
        "",
        *budget_table(outcomes, headline=True),
        "",
        *missed(outcomes),
        "## Every other target",
        "",
        *budget_table(outcomes, headline=False),
    ]
    failed = [o for o in outcomes if o.status != "ok"]
    if failed:
        lines += ["", "Did not finish: " + "; ".join(f"`{o.bench.script}` {o.status}" for o in failed) + "."]
    for outcome in outcomes:
        lines += [
            "",
            f"## `{outcome.bench.script}`",
            "",
            outcome.bench.shows + ".",
            "",
            "```sh",
            command(outcome),
            "```",
            "",
            f"{outcome.status}, {outcome.seconds:.0f} s; {load(outcome.load_before)} before, "
            f"{load(outcome.load_after)} after.",
            "",
        ]
        if outcome.figures:
            lines += [
                "| figure | min / median | anchor | ratio min / median | budget | load (1 min) |",
                "|---|---|---|---|---|---|",
            ]
            for record in outcome.figures:
                anchor = ratios = budget = ""
                if "anchor_name" in record:
                    anchor = anchor_figure(record)
                    ratios = f"{record['ratio_min']:.2f}x / {record['ratio_median']:.2f}x"
                if "budget" in record:
                    budget = f"<= {record['budget']:g}x: {record['verdict']}"
                elif "limit" in record:
                    budget = f"<= {record['limit']:g} {record['unit']}: {record['verdict']}"
                lines.append(
                    f"| {record['name']} | {figure(record)} | {anchor} | {ratios} | {budget} | {record['load'][0]:.1f} |"
                )
            rest = [
                line
                for line in outcome.output.splitlines()
                if line.strip() and not any(line.startswith(r["name"] + ":") for r in outcome.figures)
            ]
        else:
            rest = outcome.output.splitlines()
        if rest:
            lines += ["", "```text", *rest, "```"]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="every benchmark small (a smoke run)")
    parser.add_argument("--only", help="comma-separated scripts (default: all)")
    parser.add_argument("--out", type=Path, default=HERE / "README.md")
    args = parser.parse_args()
    chosen = [b for b in BENCHES if not args.only or b.script in args.only.split(",")]
    started = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    outcomes = [run(bench, args.quick) for bench in chosen]
    finished = time.strftime("%H:%M", time.gmtime())
    args.out.write_text(readme(outcomes, args.quick, started, finished), encoding="utf-8")
    print(f"wrote {args.out}")
    return 0 if all(o.status == "ok" for o in outcomes) else 1


if __name__ == "__main__":
    raise SystemExit(main())
