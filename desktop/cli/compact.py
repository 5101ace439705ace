"""`pi-desktop compact`: summarize the older part of a session through its own route."""

from __future__ import annotations

import argparse
from typing import Any

from desktop.cli._args import EXIT_TURN_FAILED, CliError, add_session_arguments


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "compact", help="compact a session now", description="Compact a session now."
    )
    add_session_arguments(parser, approvals=False, creates=False, thresholds=True)
    parser.add_argument(
        "--focus",
        default="",
        metavar="TEXT",
        help="what the summary must keep (the window's /compact TEXT does the same)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    # Lazy: the --help budget.
    from desktop.cli._session import opened, require_writable
    from desktop.session.compaction import NothingToCompact
    from desktop.session.runtime import SummaryFailed

    with opened(args, create=False) as (session, _emulator):
        require_writable(session)
        preview = session.runtime.preview_compaction()
        if not preview.possible:
            print(preview.describe())
            return 0
        try:
            row = session.runtime.compact(focus=args.focus)
        except NothingToCompact as error:
            raise CliError(str(error)) from error
        except SummaryFailed as error:
            raise CliError(str(error), code=EXIT_TURN_FAILED) from error
    print(
        f"compacted {row['rowsSummarized']} rows: ~{row['tokensBefore']:,} → ~{row['tokensAfter']:,} tokens; "
        f"retained tail starts at row {row['firstKeptId']}"
    )
    return 0
