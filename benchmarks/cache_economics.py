"""Regenerate docs/cache-economics.md and .png from a source checkout.

The benchmark itself ships in the package (``desktop.bench``: accounting, the scenario
language, the workspace fixtures, sending, the runner and the report), so the installed
``pi-desktop bench cache`` runs the same code; this script only defaults the output to the
checkout's ``docs/``.

    python benchmarks/cache_economics.py [--out docs] [--quick]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from desktop.bench.runner import run  # noqa: E402


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Prompt-cache economics of chronological system state.")
    parser.add_argument("--out", default=str(REPO / "docs"), help="output folder (default: docs/)")
    parser.add_argument("--quick", action="store_true", help="a cut-down long conversation (smoke test)")
    args = parser.parse_args(argv)
    run(Path(args.out), quick=args.quick)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
