"""The headless command line: one module per subcommand, each with ``register(subparsers)``.

The window and these commands drive the same engine, so anything the inspector shows can
be reproduced from a terminal (``payload``, ``prompt``, ``compact``, ``status``, ...).
"""

from __future__ import annotations

import argparse
import importlib

from desktop import __version__

#: Subcommand modules under ``desktop.cli``, in help order.
COMMANDS = ("payload", "prompt", "compact", "status", "emulator", "bench")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pi-desktop",
        description="Pi Desktop: a coding agent that shows exactly what the model is told.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    add_common_options(parser)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        module = importlib.import_module(f"desktop.cli.{name}")
        module.register(subparsers)
    return parser


def add_common_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data-dir",
        default=None,
        help="where sessions, caches and logs live (default: the platform's user data dir; "
        "also PI_DESKTOP_DATA_DIR)",
    )
