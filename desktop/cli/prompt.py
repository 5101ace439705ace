"""`pi-desktop prompt`: not implemented yet (see the open issues)."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("prompt", help="(not available yet)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    print("pi-desktop prompt is not available in this build yet.", file=sys.stderr)
    return 2
