"""`pi-desktop export`: any session as Markdown or a standalone HTML page (design X6).

Reads the session (Pi Desktop, pi or Claude Code, told apart by content) without locking or
changing it, and writes the document to standard output or to the file ``-o`` names; nothing
is written beside the session.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from desktop.cli._args import EXIT_LOCAL, CliError, add_branch_argument


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "export",
        help="write a session as Markdown or a standalone HTML page",
        description="Write a session (Pi Desktop, pi or Claude Code; a foreign session's current "
        "branch) as Markdown or as one HTML page that needs nothing else: the conversation, tool "
        "calls and results folded, usage per request and totals. Reads the session; never writes it.",
    )
    parser.add_argument("session", help="the session file (JSONL); read only, never created or changed")
    parser.add_argument("--format", choices=("md", "html"), default="md", help="md (default) or html")
    parser.add_argument(
        "-o", "--output", default="-", metavar="FILE", help="where to write (default: -, stdout)"
    )
    parser.add_argument(
        "--system", action="store_true", help="include system rows (sections, reminders, bookkeeping)"
    )
    add_branch_argument(parser)
    parser.set_defaults(handler=run)


def load(path: Path, leaf: str | None = None) -> Any:
    """The session at ``path`` as a ``Transcript`` (a ``CliError`` naming the file otherwise)."""
    # Lazy: the --help budget.
    from desktop.cli._files import read_session_log, require_regular_file
    from desktop.host.foreign import detect_format
    from desktop.session import export

    require_regular_file(path)
    detected = detect_format(path)
    if detected.format == "desktop":
        log = read_session_log(path)
        return export.desktop_transcript(str(path), log.header, list(log.rows))
    if detected.format == "unknown":
        raise CliError(detected.description, path=path)
    # Lazy: the --help budget.
    from desktop.session.foreign import BranchNotFound, ForeignOpenError, open_foreign

    try:
        session = open_foreign(path)
        return export.foreign_transcript(session, leaf)
    except (ForeignOpenError, BranchNotFound) as error:
        raise CliError(str(error), path=path) from None


def run(args: argparse.Namespace) -> int:
    # Lazy: the --help budget.
    from desktop.cli._session import write_out
    from desktop.session import export

    path = Path(args.session)
    transcript = load(path, args.branch)
    data = export.render(transcript, args.format, system=args.system).encode("utf-8")
    if args.output == "-":
        write_out(data)
        return 0
    target = Path(args.output)
    if target.exists() and path.exists() and target.resolve() == path.resolve():
        raise CliError("the output would replace the session itself; choose another file", path=target)
    try:
        target.write_bytes(data)
    except OSError as error:
        raise CliError(
            f"cannot write {target}: {error.strerror or error}", code=EXIT_LOCAL, path=target
        ) from None
    return 0
