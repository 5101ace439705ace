"""The headless command line: one module per subcommand, each with ``register(subparsers)``.

The window and these commands drive the same engine, so anything the inspector shows can
be reproduced from a terminal (``payload``, ``prompt``, ``chat``, ``compact``, ``status``, ...).

Building the parser must stay cheap (``pi-desktop --help`` is timed against a bare Python
start): command modules import only ``argparse`` and ``desktop.cli._args`` at module level
and import the engine inside their handlers. ``tests/cli/test_startup.py`` holds them to it.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from desktop import __version__
from desktop.cli._args import EXIT_CODES_HELP, EXIT_USAGE
from desktop.cli._boundary import one_line

#: Subcommand modules under ``desktop.cli``, in help order (one line each to add a command).
COMMANDS = (
    "payload",
    "prompt",
    "chat",
    "compact",
    "status",
    "catalog",
    "emulator",
    "bench",
    "whatif",
    "export",
)

USAGE = "%(prog)s [-h] [--version] [--data-dir DIR] [PATH ...]\n       %(prog)s [--data-dir DIR] COMMAND ..."
DESCRIPTION = (
    "Pi Desktop: a coding agent that shows exactly what the model is told. "
    "With no COMMAND the window opens, on the session files given as PATH if any."
)
OPEN_HELP = (
    "PATH opens a session file in the window. A file whose name is also a command is opened "
    "with a path: `pi-desktop ./status`."
)
#: Top-level options that take a value (the argument scanner must skip the value).
_VALUE_OPTIONS = ("--data-dir",)


def terminal_columns() -> int:
    """The terminal's width as ``shutil.get_terminal_size`` finds it (``$COLUMNS``, then the
    terminal of stdout, else 80), without importing ``shutil``, which loads ``bz2`` and ``lzma``."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter at the terminal's width (``terminal_columns``): argparse makes one for
    every argument it adds, and its own would import ``shutil`` into every start (the --help budget)."""

    def __init__(
        self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None
    ) -> None:
        super().__init__(
            prog, indent_increment, max_help_position, terminal_columns() - 2 if width is None else width
        )


class RawDescriptionHelpFormatter(HelpFormatter, argparse.RawDescriptionHelpFormatter):
    """The same, with the description and epilog laid out as written, except that a paragraph
    written on one line is filled to 90 columns. It is filled here, when help is shown, not as
    the parser is built: ``textwrap`` (and its patterns) would be one more import on every
    command's start (the --help budget)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        # Lazy: the status budget.
        import textwrap

        paragraphs = (part if "\n" in part else textwrap.fill(part, 90) for part in text.split("\n\n"))
        return super()._fill_text("\n\n".join(paragraphs), width, indent)


class CliParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors are one line, like every other failure (D6), and
    whose help is laid out by ``HelpFormatter`` (subcommand parsers are made of this class too)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:

        self.exit(EXIT_USAGE, f"{self.prog}: {one_line(message)} (see `{self.prog} --help`)\n")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole parser; with ``only`` (a command name) just that command's subparser, for a
    command line that runs it: registering every command costs more than the command's own
    parsing, and a headless start is timed (the --help budget)."""
    parser = CliParser(
        prog="pi-desktop",
        usage=USAGE,
        description=DESCRIPTION,
        epilog=f"{OPEN_HELP}\n\n{EXIT_CODES_HELP}",
        formatter_class=RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument(
        "--data-dir",
        default=None,
        metavar="DIR",
        help="where sessions, settings, caches and logs live (default: the platform's user data dir; "
        "also PI_DESKTOP_DATA_DIR, which this sets for everything the command starts)",
    )
    # Top-level flags that act instead of opening the window (handled in ``desktop.app``).
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
    # Self-test of a build: a session, an offline turn with a tool call, the Payload tab, exit 0.
    parser.add_argument("--smoke-test", action="store_true", help=argparse.SUPPRESS)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", prog="pi-desktop")
    for name in COMMANDS if only is None else (only,):
        module = importlib.import_module(f"desktop.cli.{name}")
        module.register(subparsers)
    for choice in subparsers.choices.values():
        choice.add_argument(
            "--raw",
            action="store_true",
            help="print text from session files, tools and models as it is, terminal control "
            "sequences included (default: removed, so a file or a model cannot retitle, clear or "
            "write the clipboard of this terminal)",
        )
        if choice.epilog is None:  # the exit codes under every command's help, laid out as written
            choice.epilog = EXIT_CODES_HELP
            choice.formatter_class = RawDescriptionHelpFormatter  # fills the description too
    return parser


def command_word(words: Sequence[str]) -> str | None:
    """The command a parsed command line runs, or None when it asks for the top-level help or
    version, opens the window, or names no command (then the whole parser is needed)."""
    index = 0
    while index < len(words):
        word = words[index]
        if word in ("-h", "--help", "--version", "--"):
            return None
        if word in _VALUE_OPTIONS:
            index += 2
            continue
        if not word.startswith("-") or word == "-":
            return word if word in COMMANDS else None
        index += 1
    return None


def split_open_paths(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """Separate the session files to open from the arguments the parser understands.

    The first word that is not an option decides: a command name starts a subcommand (the
    rest is the command's), anything else is a PATH to open, and so is every later word.
    ``--`` ends the options: what follows is paths even if it looks like a command.
    """
    rest: list[str] = []
    paths: list[str] = []
    index = 0
    while index < len(argv):
        word = argv[index]
        if word == "--":
            paths.extend(argv[index + 1 :])
            break
        if word.startswith("-") and word != "-":
            rest.append(word)
            if word in _VALUE_OPTIONS and index + 1 < len(argv):
                rest.append(argv[index + 1])
                index += 1
        elif not paths and word in COMMANDS:
            return [*rest, *argv[index:]], []
        else:
            paths.append(word)
        index += 1
    return rest, paths
