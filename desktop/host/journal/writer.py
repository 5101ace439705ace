"""The one writer of a session file (design T1, T3, T5, T6, T8).

Write-ahead: ``append`` writes a batch of rows with one ``write`` and one fsync (group commit) and
only then returns an ``Ack``; the runtime needs that ``Ack`` to dispatch. A failure leaves the file
exactly as it was before the batch (the partial write is truncated away, but only when the file
holds nothing but this writer's bytes after the batch start) and raises
``LocalPreparationFailure``; the retry re-uses the row ids and an id the writer already holds is
treated as done, so a retry never duplicates a row.

On open the writer takes the OS lock on the file itself (``lock.py``: every other name of the
same file gets a read-only view with a message saying why), moves a torn last line into
``<session>.torn-<n>`` so the next append cannot merge with it, and fsyncs once so every row it
reads back is durable before it can be acknowledged again. Before every append it checks that
its path still names the file it locked and that the file ends where its last batch ended; a
file replaced, moved or grown by another program is refused (kind ``changed``), never written.
"""

from __future__ import annotations

import errno
import os
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, TypeAlias

import orjson

from desktop.host.journal.ack import Ack, issue_ack
from desktop.host.journal.durable import sync_file, write_all, write_new_file
from desktop.host.journal.envelope import SCHEMA_VERSION, new_row_id
from desktop.host.journal.errors import FailureKind, LocalPreparationFailure
from desktop.host.journal.lines import JournalRows
from desktop.host.journal.reader import (
    READ_BUFFER,
    Diagnostic,
    SessionLog,
    TornTail,
    file_identity,
    parse_lines,
    parse_session,
    read_session,
)
from desktop.host.journal.rows import ROW_MODELS, RowBase, SessionHeader, build
from desktop.host.private_files import create_private, make_private_dirs, sync_dir
from desktop.host.schema import SchemaError, shape_error

if TYPE_CHECKING:
    from desktop.host.journal.lock import SessionLock

RowLike: TypeAlias = "RowBase | Mapping[str, Any]"

_O_BINARY = getattr(os, "O_BINARY", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_WRITE_FLAGS = os.O_RDWR | os.O_APPEND | _O_CLOEXEC | _O_BINARY


class _SessionExists(FileExistsError):
    """Our own "already exists", told apart from an OS refusal such as a file in the folder's place."""


class JournalWriter:
    """Owns one session file. Create with ``create`` or ``open``; use as a context manager."""

    def __init__(
        self,
        path: Path,
        log: SessionLog,
        *,
        fd: int | None,
        lock: SessionLock | None,
        read_only_reason: str | None,
        torn_sidecar: Path | None = None,
    ) -> None:
        self.path = path
        self._log = log
        self._fd = fd
        self._lock = lock
        self._read_only_reason = read_only_reason
        self._end = log.end
        self._mutex = threading.Lock()
        self._broken: str | None = None
        self._broken_kind: FailureKind = "io"
        self._refusal: FailureKind = "read_only"
        self._check_path = Path(os.path.abspath(path))
        self._closed = False
        self.torn_sidecar = torn_sidecar
        """Where a torn last line was moved on this open, if there was one."""
        self.syncs = 0
        """fsync calls made by ``append`` (one per batch that wrote something)."""

    # --- opening ------------------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        path: str | os.PathLike[str],
        *,
        cwd: str | os.PathLike[str],
        app_version: str,
        session_id: str | None = None,
    ) -> JournalWriter:
        """Create a new session file holding only its header, durably, and open it for writing.

        The header is written to a temporary file and linked into place, so a crash never leaves
        an empty or half-written session file behind. Raises ``FileExistsError`` if ``path``
        exists and ``LocalPreparationFailure`` if the OS refuses.
        """
        path = Path(path)
        fields = {"id": session_id or new_row_id(), "cwd": str(cwd), "appVersion": app_version}
        header = build(SessionHeader, fields)
        line = orjson.dumps(header.to_json(), option=orjson.OPT_APPEND_NEWLINE)
        # Lazy: the status budget.
        from desktop.host.journal.lock import LockHeld, LockPathError, check_record_path, lock_path_for

        lock: SessionLock | None = None
        fd: int | None = None
        try:
            created_parent = not path.parent.exists()
            make_private_dirs(path.parent)  # design X22
            if created_parent:
                sync_dir(path.parent.parent)
            check_record_path(lock_path_for(path))
            if path.exists() or path.is_symlink():
                raise _SessionExists(errno.EEXIST, "a session file already exists", str(path))
            lock = _create_locked(path, line)
            fd = os.open(path, _WRITE_FLAGS)
            if not lock.identity.same_file(os.fstat(fd)):
                raise _SessionExists(errno.EEXIST, "another file took the session's name", str(path))
        except LockHeld as held:
            raise FileExistsError(errno.EEXIST, held.user_message, str(path)) from held
        except OSError as exc:
            if fd is not None:
                os.close(fd)
            if lock is not None:
                lock.release()
            if isinstance(exc, _SessionExists):
                raise FileExistsError(*exc.args) from None
            if isinstance(exc, LockPathError):
                raise LocalPreparationFailure(
                    exc.user_message, kind="lock", path=path, row_ids=[header.id], cause=exc
                ) from exc
            raise LocalPreparationFailure.from_os_error(
                exc, path=path, row_ids=[header.id], doing="creating the session file"
            ) from exc
        return cls(path, parse_session(path, line), fd=fd, lock=lock, read_only_reason=None)

    @classmethod
    def open(
        cls, path: str | os.PathLike[str], *, read_only: bool = False, read: SessionLog | None = None
    ) -> JournalWriter:
        """Open an existing session; read-only (with ``read_only_reason``) if it cannot be written.

        ``read`` is this file as ``read_session`` read it moments before (the window read it
        to show its rows): it is taken instead of a second reading while the file is still the
        one read, unchanged, once it is locked (design X26).

        Raises ``FileNotFoundError`` for a missing file and ``JournalFormatError`` (file and line)
        when the file is not a session at all. Problems inside the file never raise: they are in
        ``diagnostics`` and ``set_aside``.
        """
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(errno.ENOENT, "no session file here", str(path))
        reason = "Opened read-only on request." if read_only else None
        refusal: FailureKind = "read_only"
        lock: SessionLock | None = None
        fd: int | None = None
        if not read_only:
            lock, reason, refusal = _try_lock(path)
        try:
            if lock is not None:
                try:
                    fd = os.open(path, _WRITE_FLAGS)
                    if not lock.identity.same_file(os.fstat(fd)):
                        raise OSError(errno.ESTALE, "the file was replaced while it was being opened")
                except OSError as exc:
                    if isinstance(exc, FileNotFoundError):
                        raise
                    fd, lock = _drop(fd, lock)
                    reason = (
                        f"This session file cannot be written ({exc.strerror or exc}), "
                        "so it is shown read-only."
                    )
            if read is not None and read.source == file_identity(
                os.fstat(fd) if fd is not None else os.stat(path)
            ):
                log = read
            elif fd is not None:
                # Line by line from the start: the descriptor was just opened, at offset 0.
                with open(fd, "rb", buffering=READ_BUFFER, closefd=False) as handle:
                    log = parse_lines(path, handle)
            else:
                log = read_session(path)
            if log.header is None:
                raise log.format_error()
            if fd is not None and log.newer_format:
                reason = (
                    "This session was written by a newer version of Pi Desktop. It is shown "
                    "read-only so this version cannot change it; update the app to continue it."
                )
                fd, lock = _drop(fd, lock)
            sidecar: Path | None = None
            if fd is not None:
                try:
                    if log.torn is not None:
                        sidecar = _set_aside_tail(path, fd, log.torn)
                        _note_sidecar(log, sidecar)
                    sync_file(fd)  # rows a killed writer left in the page cache become durable
                except OSError as exc:
                    reason = (
                        f"An interrupted write left an incomplete last line that could not be set "
                        f"aside ({exc.strerror or exc}), so the session is shown read-only."
                    )
                    fd, lock = _drop(fd, lock)
                    sidecar = None
        except BaseException:
            _drop(fd, lock)
            raise
        writer = cls(path, log, fd=fd, lock=lock, read_only_reason=reason, torn_sidecar=sidecar)
        writer._refusal = refusal
        return writer

    # --- state --------------------------------------------------------------------------------

    @property
    def header(self) -> dict[str, Any]:
        header = self._log.header
        assert header is not None  # guaranteed by create/open
        return header

    @property
    def session_id(self) -> str:
        return str(self.header["id"])

    @property
    def rows(self) -> JournalRows:
        """Every acknowledged row in journal order (raw JSON objects decoded on demand from
        their lines, ``lines.JournalRows``; do not mutate them)."""
        return self._log.rows

    @property
    def read_only(self) -> bool:
        return self._fd is None

    @property
    def read_only_reason(self) -> str | None:
        """Why this session cannot be written, in words for the user; ``None`` when writable."""
        if self._closed:
            return "The session was closed."
        return self._read_only_reason if self._fd is None else None

    @property
    def diagnostics(self) -> Sequence[Diagnostic]:
        return self._log.diagnostics

    # --- writing ------------------------------------------------------------------------------

    def append(self, rows: Iterable[RowLike]) -> Ack:
        """Write the rows durably with one fsync and acknowledge them.

        Rows whose id the writer already holds are skipped (idempotent retry). On any failure
        nothing of the batch remains in the file and ``LocalPreparationFailure`` is raised.
        """
        with self._mutex:
            batch = [self._prepare(row) for row in rows]
            ids = [row_id for row_id, _ in batch]
            self._check_writable(ids)
            assert self._fd is not None
            held = self._log.ids
            fresh: dict[str, dict[str, Any]] = {}
            for row_id, data in batch:
                if row_id not in held and row_id not in fresh:
                    fresh[row_id] = data
            if not fresh:
                return issue_ack(self.path, self.session_id, ids, (), 0)
            lines = [orjson.dumps(d, option=orjson.OPT_APPEND_NEWLINE) for d in fresh.values()]
            payload = b"".join(lines)
            start = self._end
            self._check_file(list(fresh))
            self._record_holder(list(fresh))
            try:
                write_all(self._fd, payload)
                sync_file(self._fd)
            except OSError as exc:
                self._roll_back(start, payload)
                raise LocalPreparationFailure.from_os_error(
                    exc, path=self.path, row_ids=list(fresh), doing="writing to"
                ) from exc
            self._end = start + len(payload)
            self.syncs += 1
            stored = self._log.rows
            for (row_id, data), line in zip(fresh.items(), lines, strict=True):
                held[row_id] = len(stored)
                stored.add(line, data, row_id, keep=True)
            return issue_ack(self.path, self.session_id, ids, tuple(fresh), 1)

    def _prepare(self, row: RowLike) -> tuple[str, dict[str, Any]]:
        """Check a row against the one schema, as the reader will, and return its id and a private
        JSON copy of it (design T10)."""
        data = row.to_json() if isinstance(row, RowBase) else dict(row)
        try:
            row_id = data.get("id")
            if not isinstance(row_id, str) or not row_id:
                raise ValueError("the row has no id; give one so a retry can reuse it")
            model_type = ROW_MODELS.get(str(data.get("type")))
            if model_type is None:
                raise ValueError(f"unknown row type {data.get('type')!r}")
            if isinstance(row, RowBase) and type(row) is not model_type:
                raise ValueError(f"{type(row).__name__} rows cannot be appended")
            model = build(model_type, data)
            if model.v != SCHEMA_VERSION:
                raise ValueError(f"row version {model.v} is not {SCHEMA_VERSION}")
        except ValueError as exc:
            reason = shape_error(exc, data).message if isinstance(exc, SchemaError) else str(exc)
            raise LocalPreparationFailure(
                f"Could not save the conversation before sending it: row {data.get('id')!r} is invalid "
                f"({reason}). Nothing was sent to the model.",
                kind="invalid_row",
                path=self.path,
                row_ids=[str(data.get("id"))],
                cause=exc,
            ) from exc
        return model.id, model.to_json()

    def _check_writable(self, ids: Sequence[str]) -> None:
        kind: FailureKind
        if self._closed:
            message, kind = "The session was closed; reopen it to continue.", "closed"
        elif self._fd is None:
            message, kind = f"{self._read_only_reason} Nothing was sent to the model.", self._refusal
        elif self._broken is not None:
            message, kind = self._broken, self._broken_kind
        else:
            return
        raise LocalPreparationFailure(message, kind=kind, path=self.path, row_ids=ids)

    def _record_holder(self, ids: Sequence[str]) -> None:
        """Name this window in the lock record before its first row lands (opening alone wrote
        nothing, design G12); a record path turned into a link or a folder refuses the write."""
        from desktop.host.journal.lock import LockPathError  # Lazy: the status budget.

        assert self._lock is not None
        try:
            self._lock.record_holder()
        except LockPathError as bad:
            raise LocalPreparationFailure(bad.user_message, kind="lock", path=self.path, row_ids=ids) from bad

    def _check_file(self, ids: Sequence[str]) -> None:
        """Refuse to append unless the path still names the file this writer locked and the
        file still ends where this writer left it (design T8): another program that replaced,
        moved or appended to the file would otherwise get rows interleaved with its own."""
        assert self._fd is not None and self._lock is not None
        mine = os.fstat(self._fd)
        try:
            at_path: os.stat_result | None = os.stat(self._check_path)
        except OSError:
            at_path = None
        if at_path is None or not self._lock.identity.same_file(at_path):
            problem = (
                f"the session file {self.path} was replaced, moved or deleted by another program "
                "since this window opened it"
            )
        elif mine.st_size != self._end:
            problem = (
                f"another program changed the session file {self.path} (it holds {mine.st_size:,} "
                f"bytes; this window wrote up to {self._end:,})"
            )
        else:
            return
        self._broken_kind = "changed"
        self._broken = (
            f"Could not save the conversation: {problem}. Nothing was written and nothing was sent; "
            "reopen the session to continue."
        )
        raise LocalPreparationFailure(self._broken, kind="changed", path=self.path, row_ids=ids)

    def _roll_back(self, start: int, payload: bytes) -> None:
        """Cut a failed batch off the file so a retry cannot land behind half a row.

        Only this writer's own bytes are cut: the file must hold exactly ``start`` bytes plus a
        prefix of this batch. Anything else (another program appended meanwhile) is left alone
        and the writer refuses further appends until the session is reopened (design T8).
        """
        assert self._fd is not None
        try:
            size = os.fstat(self._fd).st_size
            if size == start:
                return
            landed = size - start
            if 0 < landed <= len(payload) and _read_at(self._fd, start, landed) == payload[:landed]:
                os.ftruncate(self._fd, start)
                sync_file(self._fd)
                return
            self._broken_kind = "changed"
            self._broken = (
                f"Could not save the conversation: a failed write could not be undone because "
                f"another program changed {self.path} meanwhile; nothing was cut from the file. "
                "Nothing was sent; reopen the session to continue."
            )
        except OSError as exc:
            self._broken = (
                f"Could not save the conversation: a failed write could not be undone "
                f"({exc.strerror or exc}). Nothing was sent; reopen the session to continue."
            )

    # --- read-only views ----------------------------------------------------------------------

    def refresh(self) -> int:
        """Re-read a read-only session (another window may be writing it); returns new row count."""
        if not self.read_only:
            return 0
        before = len(self._log.rows)
        self._log = read_session(self.path)
        return len(self._log.rows) - before

    # --- closing ------------------------------------------------------------------------------

    def close(self) -> None:
        with self._mutex:
            if self._closed:
                return
            self._closed = True
            self._fd, self._lock = _drop(self._fd, self._lock)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _try_lock(path: Path) -> tuple[SessionLock | None, str | None, FailureKind]:
    # The lock loads with the first writable open: a read-only open (``status``) takes none.
    from desktop.host.journal.lock import LockHeld, LockPathError, SessionLock  # Lazy: the status budget.

    try:
        return SessionLock.acquire(path), None, "read_only"
    except LockHeld as held:
        return None, held.user_message, "read_only"
    except LockPathError as bad:
        return None, bad.user_message, "lock"
    except OSError as exc:
        return (
            None,
            (
                f"This session file cannot be locked for writing ({exc.strerror or exc}), "
                "so it is shown read-only."
            ),
            "lock",
        )


def _create_locked(path: Path, header_line: bytes) -> SessionLock:
    """Write the header to a new temporary file, lock it, then link it into place: the file is
    locked before its name exists, so no other writer can ever take it first (design T8)."""
    from desktop.host.journal.lock import SessionLock  # Lazy: the status budget.

    temp = path.with_name(f".{path.name}.{os.getpid()}.new")
    temp.unlink(missing_ok=True)
    fd = create_private(temp, os.O_RDWR)  # the session file is this file: 0600 (design X22)
    lock: SessionLock | None = None
    try:
        write_all(fd, header_line)
        sync_file(fd)
        if os.name == "nt":  # pragma: no cover - an open file cannot be renamed on Windows
            os.close(fd)
            _publish(temp, path)
            return SessionLock.acquire(path)
        lock = SessionLock.adopt(fd, path)
        _publish(temp, path)
        sync_dir(path.parent)
        return lock
    except BaseException:
        if lock is not None:
            lock.release()
        elif os.name != "nt":
            os.close(fd)
        raise
    finally:
        temp.unlink(missing_ok=True)


def _read_at(fd: int, offset: int, size: int) -> bytes:
    chunks: list[bytes] = []
    while size > 0:
        if hasattr(os, "pread"):
            chunk = os.pread(fd, min(size, 1 << 24), offset)
        else:  # pragma: no cover - Windows
            os.lseek(fd, offset, os.SEEK_SET)
            chunk = os.read(fd, min(size, 1 << 24))
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _drop(fd: int | None, lock: SessionLock | None) -> tuple[None, None]:
    if fd is not None:
        os.close(fd)
    if lock is not None:
        lock.release()
    return None, None


def _publish(temp: Path, path: Path) -> None:
    """Move a finished file into place without ever replacing an existing one."""
    if os.name == "nt":  # pragma: no cover - rename refuses to overwrite on Windows
        os.rename(temp, path)
    else:
        os.link(temp, path)


def _note_sidecar(log: SessionLog, sidecar: Path) -> None:
    log.diagnostics[:] = [
        d._replace(
            message=f"the last line was incomplete (an interrupted write, never acknowledged); "
            f"it was moved to {sidecar.name} so new rows cannot merge with it",
        )
        if d.code == "torn-tail"
        else d
        for d in log.diagnostics
    ]


def _set_aside_tail(path: Path, fd: int, torn: TornTail) -> Path:
    """Move an incomplete last line into a sidecar file, then cut it off the session."""
    number = 1
    while (sidecar := path.with_name(f"{path.name}.torn-{number}")).exists():
        number += 1
    tail = _read_at(fd, torn.offset, torn.size)
    if len(tail) != torn.size:
        raise OSError(errno.EIO, "the incomplete last line changed while the session was opened")
    write_new_file(sidecar, tail)
    sync_dir(path.parent)
    os.ftruncate(fd, torn.offset)
    sync_file(fd)
    return sidecar
