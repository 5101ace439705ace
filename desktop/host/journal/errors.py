"""Errors the journal hands its callers.

Two kinds matter to the rest of the app and must never be confused with provider errors:

* ``LocalPreparationFailure``: a row a request depends on could not be made durable, so the
  request must not be dispatched (design T3). The runtime shows ``user_message`` as a local
  problem ("your disk is full"), not as something the provider did.
* ``JournalFormatError``: a file is not a session this app can continue; it names the file and
  the line so a user can find and fix it.
"""

from __future__ import annotations

import errno
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

FailureKind = Literal[
    "disk_full", "read_only", "permission", "io", "closed", "invalid_row", "lock", "changed"
]
"""Why rows could not be written. ``lock``: the writer lock or its record path is unusable (a
symlink, a folder); ``changed``: another program replaced, moved or grew the session file under
the writer, so nothing may be written to it (design T8)."""

_ERRNO_KINDS: dict[int, FailureKind] = {
    errno.ENOSPC: "disk_full",
    errno.EDQUOT: "disk_full",
    errno.EFBIG: "disk_full",
    errno.EROFS: "read_only",
    errno.EACCES: "permission",
    errno.EPERM: "permission",
}


class LocalPreparationFailure(Exception):
    """Rows could not be written and acknowledged; the request that needs them must not go out.

    ``row_ids`` are the rows that are *not* durable. Retrying ``append`` with the same rows
    (same ids) is always safe: rows the writer already holds are treated as done.
    """

    def __init__(
        self,
        user_message: str,
        *,
        kind: FailureKind,
        path: Path,
        row_ids: Sequence[str] = (),
        cause: BaseException | None = None,
    ) -> None:
        super().__init__(user_message)
        self.user_message = user_message
        self.kind: FailureKind = kind
        self.path = path
        self.row_ids: tuple[str, ...] = tuple(row_ids)
        self.cause = cause
        if cause is not None:
            self.__cause__ = cause

    @classmethod
    def from_os_error(
        cls, exc: OSError, *, path: Path, row_ids: Sequence[str], doing: str
    ) -> LocalPreparationFailure:
        """Turn an OSError into words a user can act on, keeping the original as the cause."""
        kind = _ERRNO_KINDS.get(exc.errno or 0, "io")
        reason = {
            "disk_full": "the disk (or the file size limit) is full",
            "read_only": "the file system is read-only",
            "permission": "the app is not allowed to write there",
            "io": f"the operating system reported an error ({exc.strerror or exc})",
        }.get(kind, str(exc))
        message = (
            f"Could not save the conversation before sending it: {reason} while {doing} {path}. "
            "Nothing was sent to the model; free space or fix the folder, then retry."
        )
        return cls(message, kind=kind, path=path, row_ids=row_ids, cause=exc)


class JournalFormatError(Exception):
    """A session file cannot be continued because of its content; names the file and the line."""

    def __init__(self, path: Path, line: int, reason: str) -> None:
        super().__init__(f"{path}: line {line}: {reason}")
        self.path = path
        self.line = line
        self.reason = reason


class NotAcknowledged(Exception):
    """A request was about to be dispatched for rows that no acknowledgement covers."""
