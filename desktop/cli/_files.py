"""Reading a file a user named, without surprises (design D6: reading never writes).

A read-only command must never block on a FIFO, read a device, or create, lock or change
anything. The path is checked with ``stat`` first (a missing file, a directory, a FIFO or a
device is refused before it is opened), then opened non-blocking and checked again on the
open descriptor (so a file swapped for a FIFO in between is refused too) and read once.
"""

from __future__ import annotations

import contextlib
import errno
import gc
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from desktop.cli._args import EXIT_LOCAL, CliError
from desktop.host.foreign.detect import Detected, detect_format
from desktop.host.journal.reader import parse_session
from desktop.host.regular_files import NotRegularFile, open_regular_fd, special_kind

if TYPE_CHECKING:
    from desktop.host.journal import SessionLog

#: How much of a file ``check_session_file`` reads to find its first line.
FIRST_LINE_LIMIT = 1 << 20


def _os_problem(path: Path, error: OSError) -> CliError:
    if error.errno in (errno.ENOENT, errno.ENOTDIR):
        return CliError(f"no such session file: {path}")
    if error.errno in (errno.EACCES, errno.EPERM):
        return CliError(f"cannot read {path}: permission denied", code=EXIT_LOCAL)
    if error.errno == errno.ELOOP:
        return CliError(f"cannot read {path}: too many levels of symbolic links")
    return CliError(f"cannot read {path}: {error.strerror or error}", code=EXIT_LOCAL)


def require_regular_file(path: Path) -> os.stat_result:
    """The file's status, or a ``CliError`` for a missing file or anything but a regular file."""
    try:
        status = os.stat(path)
    except OSError as error:
        raise _os_problem(path, error) from None
    except ValueError:  # an embedded NUL in the name
        raise CliError(f"no such session file: {path!r}") from None
    if not stat.S_ISREG(status.st_mode):
        raise CliError(f"not a session file: {path} is {special_kind(status.st_mode)}")
    return status


def read_regular_file(path: Path, *, limit: int | None = None) -> bytes:
    """The file's bytes (the first ``limit`` bytes at most), refusing anything but a regular file
    before opening it (``desktop.host.regular_files``, the check every reader shares: design X24)."""
    try:
        fd = open_regular_fd(path)
    except NotRegularFile as error:
        raise CliError(f"not a session file: {path} is {error.kind}") from None
    except OSError as error:
        raise _os_problem(path, error) from None
    except ValueError:  # an embedded NUL in the name
        raise CliError(f"no such session file: {path!r}") from None
    try:
        status = os.fstat(fd)
        chunks: list[bytes] = []
        remaining = limit if limit is not None else -1
        # Without a limit the whole file is asked for at once: one buffer, returned as it is,
        # where megabyte reads joined at the end copied a long session twice (the status budget).
        whole = status.st_size + 1
        while remaining != 0:
            want = whole if remaining < 0 else min(remaining, 1 << 20)
            chunk = os.read(fd, want)
            if not chunk:
                break
            chunks.append(chunk)
            if remaining > 0:
                remaining -= len(chunk)
            if limit is not None and b"\n" in chunk:
                break
        return b"".join(chunks)
    except OSError as error:
        raise _os_problem(path, error) from None
    finally:
        os.close(fd)


@contextlib.contextmanager
def lasting() -> Iterator[None]:
    """For what a read-only command makes once and keeps until it ends (the parsed session, the
    catalogs, the opened session): no cyclic collection while it is made (tens of thousands of
    new containers, none of them garbage), and afterwards it moves to the permanent generation,
    so later collections, and the one at exit, do not walk it again (the status budget). Headless
    commands only: the window never freezes the collector."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
        gc.freeze()


def read_session_log(path: Path) -> SessionLog:
    """Parse a session file once, read-only; a file that is not a session is a ``CliError``."""

    data = read_regular_file(path)
    with lasting():
        log = parse_session(path, data)
    if log.header is None:
        problem = log.format_error()
        reason = problem.reason.removesuffix("; this is not a session file")
        raise CliError(f"not a Pi Desktop session file: {reason}", path=path, line=problem.line)
    return log


def check_session_file(path: Path) -> None:
    """Refuse, before the window starts, a path that cannot be a session: missing, not a regular
    file, empty, or whose first line is not a JSON object (the window's Open tells the formats apart)."""

    head = read_regular_file(path, limit=FIRST_LINE_LIMIT)
    if not head.strip():
        raise CliError("not a session file: the file is empty", path=path, line=1)
    first = head.split(b"\n", 1)[0]
    try:
        value = orjson.loads(first)
    except orjson.JSONDecodeError:
        raise CliError("not a session file: line 1 is not JSON", path=path, line=1) from None
    if not isinstance(value, dict):
        raise CliError("not a session file: line 1 is not a JSON object", path=path, line=1)


FOREIGN_FORMATS = ("pi", "claude-code", "codex")


def detected_foreign(path: Path) -> Detected | None:
    """The detected format when ``path`` is another agent's session, else None (a Desktop
    session or an unknown file goes the usual way). The path is checked with ``stat`` first,
    so a FIFO or a device is refused before anything opens it."""

    require_regular_file(path)
    detected = detect_format(path)
    return detected if detected.format in FOREIGN_FORMATS else None
