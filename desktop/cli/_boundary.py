"""The one error boundary of the command line (design D6).

Every subcommand runs inside ``run_handler``: whatever goes wrong becomes exactly one line on
standard error, ``pi-desktop <command>: <what> (<file>:<line>)``, and a documented exit code
(``desktop.cli._args``). Errors the app expects (a file that is not a session, an unknown
route, a full disk) are worded for the user; anything else is a bug, reported as one line
that names the command and what failed, while the traceback goes to the app's log file
(``desktop.host.logging_setup``), never to the terminal.

Domain exceptions are recognised without importing their modules: an exception of a class
from a module that is not loaded cannot have been raised, so ``--help`` stays light.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from desktop.cli._args import (
    EXIT_BROKEN_PIPE,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_LOCAL,
    EXIT_TURN_FAILED,
    EXIT_USAGE,
    CliError,
)

PROG = "pi-desktop"
_PACKAGE_ROOT = Path(__file__).resolve().parents[1]


def one_line(text: str) -> str:
    """``text`` on one line: control characters (a newline in a file name, a NUL) are escaped."""
    out = []
    for char in str(text):
        if char.isprintable() or char == " ":
            out.append(char)
        elif char in "\n\r\t":
            out.append(" ")
        else:
            out.append(char.encode("unicode_escape", "backslashreplace").decode("ascii"))
    return "".join(out).strip()


def location(path: object | None, line: int | None = None) -> str:
    if path is None or str(path) == "":
        return ""
    where = os.fsdecode(path) if isinstance(path, (str, bytes, os.PathLike)) else str(path)
    return f" ({where}:{line})" if line is not None else f" ({where})"


def say(command: str, message: str, where: str = "") -> None:
    """Print one report line on standard error."""
    prefix = f"{PROG} {command}" if command else PROG
    text = one_line(f"{prefix}: {message}{where}")
    with contextlib.suppress(OSError, ValueError):  # stderr itself is gone; the exit code still tells
        print(text, file=sys.stderr, flush=True)


def _loaded(module: str, name: str) -> type[BaseException] | None:
    found = sys.modules.get(module)
    cls = getattr(found, name, None) if found is not None else None
    return cls if isinstance(cls, type) and issubclass(cls, BaseException) else None


def describe(error: BaseException) -> tuple[int, str, str] | None:
    """(exit code, message, location) for an error the app expects; None for a bug."""
    if isinstance(error, CliError):
        return error.code, error.message, location(error.path, error.line)
    journal_format = _loaded("desktop.host.journal.errors", "JournalFormatError")
    if journal_format is not None and isinstance(error, journal_format):
        path, line, reason = error.path, error.line, error.reason  # type: ignore[attr-defined]
        return EXIT_USAGE, f"not a session this app can read: {reason}", location(path, line)
    local = _loaded("desktop.host.journal.errors", "LocalPreparationFailure")
    if local is not None and isinstance(error, local):
        return EXIT_LOCAL, f"local failure: {error}", location(getattr(error, "path", None))
    for module, name, code, prefix in (
        ("desktop.pi.catalog.errors", "RouteError", EXIT_USAGE, ""),
        ("desktop.pi.catalog.errors", "CatalogFileError", EXIT_USAGE, ""),
        ("desktop.pi.projection", "ProjectionError", EXIT_USAGE, "cannot build the request: "),
        ("desktop.host.settings", "SettingsError", EXIT_USAGE, "invalid settings: "),
        ("desktop.host.tools.extensions", "ExtensionError", EXIT_USAGE, "extension: "),
        ("desktop.host.accounts", "KeyringUnavailable", EXIT_LOCAL, ""),
        ("desktop.session.runtime", "SummaryFailed", EXIT_TURN_FAILED, ""),
    ):
        cls = _loaded(module, name)
        if cls is not None and isinstance(error, cls):
            return code, prefix + str(error), ""
    if isinstance(error, OSError):
        reason = error.strerror or str(error)
        return EXIT_LOCAL, f"cannot use a file: {reason}", location(error.filename)
    if isinstance(error, MemoryError):
        return EXIT_LOCAL, "out of memory", ""
    return None


def _innermost_own_frame(error: BaseException) -> str:
    """Where in Pi Desktop's own code the error surfaced (``desktop/x.py:12``), for bug reports."""
    # Lazy: the --help budget.
    import traceback

    found = ""
    for frame in traceback.extract_tb(error.__traceback__):
        try:
            relative = Path(frame.filename).resolve().relative_to(_PACKAGE_ROOT)
        except ValueError:
            continue
        found = f"{_PACKAGE_ROOT.name}/{relative.as_posix()}:{frame.lineno}"
    return found


def log_traceback(command: str, error: BaseException) -> str:
    """Write the traceback to the app's log file; returns where it went (or why it could not).

    A handler this call attached is detached again, so an in-process caller (a test) keeps
    its logging as it was.
    """
    try:
        # Lazy: the --help budget.
        import logging

        from desktop.host.logging_setup import configure_logging

        root = logging.getLogger()
        before = set(root.handlers)
        path = configure_logging()
        try:
            logging.getLogger("desktop.cli").error(
                "pi-desktop %s failed", command, exc_info=(type(error), error, error.__traceback__)
            )
        finally:
            for handler in set(root.handlers) - before:
                root.removeHandler(handler)
                handler.close()
        return f"the traceback is in {path}"
    except Exception as log_error:  # the log itself is unwritable: say so, still one line
        return f"the traceback could not be logged ({type(log_error).__name__}: {log_error})"


def report(command: str, error: BaseException) -> int:
    """Print the one line for ``error`` and return its exit code."""
    if isinstance(error, KeyboardInterrupt):
        say(command, "interrupted")
        return EXIT_INTERRUPTED
    if isinstance(error, BrokenPipeError):
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    known = describe(error)
    if known is not None:
        code, message, where = known
        say(command, message, where)
        return code
    where = _innermost_own_frame(error)
    logged = log_traceback(command, error)
    detail = one_line(str(error))[:300]
    what = f"{type(error).__name__}: {detail}" if detail else type(error).__name__
    at = f" at {where}" if where else ""
    say(command, f"internal error ({what}){at}; {logged}")
    return EXIT_INTERNAL


def _silence_stdout() -> None:
    """After a broken pipe, point stdout at /dev/null so the interpreter's final flush is quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def run_handler(command: str, handler: Callable[[argparse.Namespace], Any], args: argparse.Namespace) -> int:
    """Run one subcommand behind the boundary; never lets an exception (or a traceback) out.

    Its text output loses terminal control sequences unless ``--raw`` was given (design X23)."""
    saved = sys.stdout, sys.stderr
    wrappers = []
    if not getattr(args, "raw", False):
        # Lazy: the --help budget.
        from desktop.cli._terminal import SanitizedStream

        if sys.stdout is not None:
            wrappers.append(SanitizedStream(sys.stdout))
            sys.stdout = wrappers[-1]  # type: ignore[assignment]
        if sys.stderr is not None:
            wrappers.append(SanitizedStream(sys.stderr))
            sys.stderr = wrappers[-1]  # type: ignore[assignment]
    try:
        try:
            result = handler(args)
            if sys.stdout is not None:
                sys.stdout.flush()
        except SystemExit as exit_request:
            code = exit_request.code
            return code if isinstance(code, int) else (0 if code is None else EXIT_USAGE)
        except BaseException as error:
            return report(command, error)
        return int(result or 0)
    finally:
        for wrapper in wrappers:
            with contextlib.suppress(OSError, ValueError):
                wrapper.release()
        sys.stdout, sys.stderr = saved
