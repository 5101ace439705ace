"""Arguments the session commands share (kept light: no engine imports at parse time)."""

from __future__ import annotations

import argparse

PERMISSION_MODES = ("ask", "accept-edits", "read-only", "full-access")


class CliError(Exception):
    """A message for the user; printed without a traceback."""


def add_session_arguments(parser: argparse.ArgumentParser, *, approvals: bool = True) -> None:
    parser.add_argument("session", help="the session file (JSONL); created if missing")
    parser.add_argument(
        "--model",
        help='route as "provider/model-id", or "emulator/provider/model-id" for the offline emulator '
        "(default: the session's last route, else the first-run choice)",
    )
    parser.add_argument("--endpoint", help="account endpoint override (transport flags then fall back)")
    parser.add_argument("--fallback", choices=("folded", "attributed"), default="folded")
    parser.add_argument("--workspace", default=".", help="the workspace folder tools work in (default: .)")
    if approvals:
        parser.add_argument("--yes", action="store_true", help="approve every permission request")
        parser.add_argument("--no", action="store_true", help="decline every permission request")
        parser.add_argument("--mode", choices=PERMISSION_MODES, help="permission mode for this run")
