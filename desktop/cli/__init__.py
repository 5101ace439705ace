"""The headless command line: one module per subcommand, each with ``register(subparsers)``.

The window and these commands drive the same engine, so anything the inspector shows can
be reproduced from a terminal (``payload``, ``prompt``, ``compact``, ``status``, ...).
"""

from __future__ import annotations

import argparse
import importlib

from desktop import __version__

#: Subcommand modules under ``desktop.cli``, in help order.
COMMANDS = ("payload", "prompt", "compact", "status", "catalog", "emulator", "bench", "whatif")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pi-desktop",
        description="Pi Desktop: a coding agent that shows exactly what the model is told.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    add_common_options(parser)
    add_launcher_options(parser)
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


def add_launcher_options(parser: argparse.ArgumentParser) -> None:
    """Top-level flags that act instead of opening the window (handled in ``desktop.app``)."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--install-desktop-entry",
        action="store_true",
        help="Linux: add Pi Desktop to the application menu (a desktop entry and icons under "
        "$XDG_DATA_HOME) and exit",
    )
    group.add_argument(
        "--uninstall-desktop-entry",
        action="store_true",
        help="Linux: remove what --install-desktop-entry added and exit",
    )
    # Packaged-build self-test: show the window, print "window-shown: <title>", exit 0.
    parser.add_argument("--smoke-test", action="store_true", help=argparse.SUPPRESS)
