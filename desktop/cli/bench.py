"""`pi-desktop bench`: benchmarks that regenerate the committed reports.

``pi-desktop bench cache`` runs ``benchmarks/cache_economics.py`` (the design's acceptance
benchmark: cold and later uncached tokens, cumulative input cost, cache-hit ratio and the
theoretical minimum per route class and strategy) and writes ``cache-economics.md`` and
``cache-economics.png``. The benchmarks live in the source checkout, not in the installed
package, so the command finds them next to the ``desktop`` package.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from desktop.cli._args import CliError

CHECKOUT = Path(__file__).resolve().parents[2]


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
        default=str(CHECKOUT / "docs"),
        help="folder for cache-economics.md and .png (default: the checkout's docs/)",
    )
    cache.add_argument("--quick", action="store_true", help="cut the long conversation down (a smoke test)")
    cache.set_defaults(handler=run_cache)
    parser.set_defaults(handler=lambda args: _missing(parser))


def _missing(parser: argparse.ArgumentParser) -> int:
    parser.print_usage(sys.stderr)
    print("pi-desktop bench: name a benchmark, e.g. `pi-desktop bench cache`", file=sys.stderr)
    return 2


def load_benchmark(name: str) -> ModuleType:
    script = CHECKOUT / "benchmarks" / f"{name}.py"
    if not script.is_file():
        raise CliError(
            f"the benchmark {script.name} is not here ({script}); benchmarks ship with the source "
            "checkout, so run this command from a clone of the repository"
        )
    if str(CHECKOUT) not in sys.path:
        sys.path.insert(0, str(CHECKOUT))
    return importlib.import_module(f"benchmarks.{name}")


def run_cache(args: argparse.Namespace) -> int:
    try:
        module = load_benchmark("cache_economics")
        module.run(Path(args.out), quick=args.quick, log=lambda line: print(line, file=sys.stderr))
    except CliError as error:
        print(f"pi-desktop bench: {error}", file=sys.stderr)
        return 2
    return 0
