"""`pi-desktop compact`: summarize the older part of a session through its own route."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from desktop.cli._args import CliError, add_session_arguments


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "compact", help="compact a session now", description="Compact a session now."
    )
    add_session_arguments(parser, approvals=False)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from desktop.cli._session import opened
    from desktop.session.compaction import NothingToCompact
    from desktop.session.runtime import SummaryFailed

    try:
        with opened(args) as (session, _emulator):
            if session.read_only:
                raise CliError(session.writer.read_only_reason or "the session is read-only")
            before = session.runtime.context_tokens()
            row = session.runtime.compact()
            after = session.runtime.context_tokens()
    except (CliError, NothingToCompact, SummaryFailed) as error:
        print(f"pi-desktop compact: {error}", file=sys.stderr)
        return 2
    print(f"compacted: ~{before} -> ~{after} tokens; retained tail starts at row {row['firstKeptId']}")
    return 0
