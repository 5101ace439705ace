"""`pi-desktop bench`: benchmarks that regenerate the committed reports.

``pi-desktop bench cache`` runs the prompt-cache economics benchmark (``desktop.bench``: cold
and later uncached tokens, cumulative input cost, cache-hit ratio and the theoretical minimum
per route class and strategy) and writes ``cache-economics.md`` and ``cache-economics.png``.
The benchmark ships in the package, so the command works from an installed copy as well as
from a source checkout; only the default output folder differs (the checkout's ``docs/``, else
the current directory).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

#: The source checkout this package runs from, if any (``docs/`` and ``benchmarks/`` beside it).
CHECKOUT = Path(__file__).resolve().parents[2]


def default_out() -> Path:
    docs = CHECKOUT / "docs"
    if (CHECKOUT / "benchmarks").is_dir() and docs.is_dir():
        return docs
    return Path.cwd()


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "bench",
        help="run a benchmark and regenerate its report",
        description="Run a benchmark against the offline emulator and write its report.",
    )
    benches = parser.add_subparsers(dest="bench", metavar="BENCHMARK")
    cache = benches.add_parser(
        "cache",
        help="prompt-cache economics: chronological vs folded vs snapshot, fixed vs on-demand declarations",
        description="Synthetic short and long conversations through the real runtime on six route classes; "
        "writes cache-economics.md and cache-economics.png.",
    )
    cache.add_argument(
        "--out",
        default=None,
        help="folder for cache-economics.md and .png (default: the source checkout's docs/, "
        "else the current directory)",
    )
    cache.add_argument("--quick", action="store_true", help="cut the long conversation down (a smoke test)")
    cache.set_defaults(handler=run_cache)
    parser.set_defaults(handler=lambda args: _missing(parser))


def _missing(parser: argparse.ArgumentParser) -> int:
    parser.print_usage(sys.stderr)
    print("pi-desktop bench: name a benchmark, e.g. `pi-desktop bench cache`", file=sys.stderr)
    return 2


def run_cache(args: argparse.Namespace) -> int:
    # Lazy: the --help budget.
    from desktop.bench.runner import run

    out = Path(args.out) if args.out else default_out()
    try:
        run(out, quick=args.quick, log=lambda line: print(line, file=sys.stderr))
    except OSError as error:
        print(
            f"pi-desktop bench: cannot write the report to {out}: {error.strerror or error}", file=sys.stderr
        )
        return 1
    return 0
