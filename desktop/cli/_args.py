"""Arguments, errors and exit codes the commands share (kept light: no engine imports at parse time).

Every failure a command reports is a ``CliError`` (or an exception the error boundary in
``desktop.cli._boundary`` knows how to word); the exit codes below are the documented ones
(design D6), listed in ``pi-desktop --help`` and in the README's headless section.
"""

from __future__ import annotations

import argparse
import os
from typing import Final

PERMISSION_MODES = ("ask", "accept-edits", "read-only", "full-access")

#: The turn ran but the provider or the model failed (an error reply, a failed summary).
EXIT_TURN_FAILED: Final = 1
#: Usage or bad input: a wrong argument, a file that is not a session, an unknown route,
#: a missing API key, an invalid settings file.
EXIT_USAGE: Final = 2
#: A local failure: a file that cannot be read or written, a full disk, a session another
#: process is writing, a read-only session.
EXIT_LOCAL: Final = 3
#: A bug in Pi Desktop: one line on the terminal, the traceback in the log file.
EXIT_INTERNAL: Final = 4
#: Interrupted with Ctrl+C (128 + SIGINT, as shells report it).
EXIT_INTERRUPTED: Final = 130
#: The output was closed early (a pipe reader such as ``head`` quit; 128 + SIGPIPE).
EXIT_BROKEN_PIPE: Final = 141

EXIT_CODES_HELP = """exit codes:
  0    success
  1    the turn ran but the provider or the model failed (error reply, failed summary)
  2    usage or bad input: wrong arguments, not a session file, unknown route, missing API key,
       invalid settings
  3    local failure: a file cannot be read or written, disk full, session locked or read-only
  4    a bug in Pi Desktop (one line here, the traceback in the log file)
  130  interrupted (Ctrl+C)
  141  the output was closed early (e.g. piped into head)

Every failure is one line on standard error: "pi-desktop COMMAND: WHAT (FILE:LINE)"."""


class CliError(Exception):
    """A message for the user, printed as one line with its exit code and, when known, where."""

    def __init__(
        self,
        message: str,
        *,
        code: int = EXIT_USAGE,
        path: str | os.PathLike[str] | None = None,
        line: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.path = path
        self.line = line


def add_route_arguments(parser: argparse.ArgumentParser, *, mode: bool = True) -> None:
    parser.add_argument(
        "--model",
        help='route as "provider/model-id", or "emulator/provider/model-id" for the offline emulator '
        "(default: the session's own route, else the first-run choice); kept by the session",
    )
    parser.add_argument("--endpoint", help="account endpoint override (transport flags then fall back)")
    parser.add_argument(
        "--fallback",
        choices=("folded", "attributed"),
        help="how system updates reach routes without native support (default: the session's, else folded)",
    )
    parser.add_argument("--workspace", default=".", help="the workspace folder tools work in (default: .)")
    if mode:
        parser.add_argument(
            "--mode",
            choices=PERMISSION_MODES,
            help="permission mode, kept by the session (default: the session's, else the settings file's)",
        )
    parser.add_argument(
        "--emulator",
        metavar="ORIGIN",
        help="for emulator routes: use the emulator already listening at ORIGIN "
        "(e.g. http://127.0.0.1:8787 from `pi-desktop emulator`) instead of starting one in-process",
    )


def add_branch_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--branch",
        metavar="LEAF",
        help="a pi or Claude Code session's branch by its leaf id (default: current)",
    )


def _tokens(text: str) -> int:
    try:
        value = int(text.replace("_", "").replace(",", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number of tokens: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"a number of tokens cannot be negative: {text!r}")
    return value


def add_threshold_arguments(parser: argparse.ArgumentParser) -> None:
    """The session's compaction thresholds (design C1); each is kept by the session once given."""
    parser.add_argument(
        "--reserve-tokens",
        type=_tokens,
        metavar="N",
        help="compact automatically when the context comes within N tokens of the context window "
        "(default: the session's, else 16384)",
    )
    parser.add_argument(
        "--keep-recent-tokens",
        type=_tokens,
        metavar="N",
        help="tokens of the newest rows a compaction keeps as they are (default: the session's, else 20000)",
    )
    parser.add_argument(
        "--auto-compact",
        choices=("on", "off"),
        help="whether the session compacts automatically at the threshold (default: the session's, else on)",
    )


def add_session_arguments(
    parser: argparse.ArgumentParser,
    *,
    approvals: bool = True,
    creates: bool = True,
    mode: bool = True,
    thresholds: bool = False,
) -> None:
    help_text = (
        "the session file (JSONL); created if missing (its folder must exist)"
        if creates
        else "the session file (JSONL); read only, never created or changed"
    )
    parser.add_argument("session", help=help_text)
    add_route_arguments(parser, mode=mode)
    if thresholds:
        add_threshold_arguments(parser)
    if approvals:
        parser.add_argument("--yes", action="store_true", help="approve every permission request")
        parser.add_argument("--no", action="store_true", help="decline every permission request")
        parser.add_argument(
            "--trust-project",
            action="store_true",
            help="allow the MCP servers, hooks and extensions this repository's .pi/settings.json "
            "defines to run (remembered for this repository and these exact commands)",
        )
