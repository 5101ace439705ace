"""One running window per user and data folder: a second launch hands its files over (design G8).

``pi-desktop PATH`` from a shell or "Open with Pi Desktop" in a file manager starts a new
process. If a window is already running for the same user and data folder, that process
connects to the running one's local socket, sends the absolute paths as one JSON line, waits
for ``ok`` and exits 0; the running window opens the file (or just comes to the front when it
is already showing that session). Different ``--data-dir`` values are different instances, so
tests and a second profile never meet.

The socket's name is a hash of the user name and the resolved data folder (never the path
itself: it would leak and may be too long for a Unix socket). On Linux and macOS the socket
lives in a private folder, ``$XDG_RUNTIME_DIR`` or else ``pi-desktop-<uid>`` in the temporary
folder, made 0700 and used only while it is a real directory owned by this user with no access
for others (design X21): a name under ``/tmp`` is computable, so another local user could
otherwise listen there first and receive every path a launch hands over, and the launch would
exit 0 with no window. A folder that fails the check is refused and the app runs without the
single-instance channel. On Windows the name is a per-user pipe, and ``UserAccessOption`` gives
it an owner-only ACL. A socket left behind by a crashed instance refuses connections; it is
removed and claimed. Two launches at the same moment cannot both win: the loser's ``listen``
fails, its probe then reaches the winner, and it hands over like any later launch.
"""

from __future__ import annotations

import getpass
import hashlib
import json
import logging
import os
import stat
import sys
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QEvent, QObject, Signal
from PySide6.QtGui import QFileOpenEvent
from PySide6.QtNetwork import QAbstractSocket, QLocalServer, QLocalSocket

log = logging.getLogger(__name__)

SERVER_PREFIX = "pi-desktop-"
#: How long a second launch waits for the running window's answer before starting its own.
HANDOVER_TIMEOUT_MS = 5000
#: A request larger than this is not a list of paths; the connection is dropped.
MAX_REQUEST_BYTES = 1 << 20
ACK = b"ok\n"


def server_name(data_dir: str | os.PathLike[str]) -> str | None:
    """The local socket for this user and data folder: a path in a private folder (a pipe name
    on Windows), or ``None`` when no private folder can be had (design X21)."""
    try:
        user = getpass.getuser()
    except Exception:  # no login name (a container without passwd entry): the uid still separates users
        user = str(getattr(os, "getuid", lambda: "")())
    folder = os.path.normcase(str(Path(data_dir).expanduser().absolute()))
    digest = hashlib.sha256(f"{user}\0{folder}".encode()).hexdigest()[:24]
    if sys.platform == "win32":
        return SERVER_PREFIX + digest
    private = private_folder()
    return None if private is None else str(private / (SERVER_PREFIX + digest))


def private_folder() -> Path | None:
    """``$XDG_RUNTIME_DIR`` when it is private, else this user's own folder in the temporary
    folder (created 0700); ``None`` when that one exists but is not private (someone made it
    first, or its mode was widened): it is refused, never repaired or used."""
    if sys.platform == "win32":
        return None  # a pipe name, no folder (``server_name``)
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if runtime and os.path.isabs(runtime) and is_private(Path(runtime)):
        return Path(runtime)
    own = Path(os.environ.get("TMPDIR") or "/tmp") / f"{SERVER_PREFIX}{os.getuid()}"
    try:
        os.mkdir(own, 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        log.warning("no private folder for the single-instance socket: %s", exc)
        return None
    if not is_private(own):
        log.warning("refusing %s for the single-instance socket: not a 0700 folder of this user", own)
        return None
    return own


def is_private(folder: Path) -> bool:
    """A real directory (not a link) owned by this user, with no access for group or others."""
    if sys.platform == "win32":
        return False
    try:
        info = os.lstat(folder)
    except OSError:
        return False
    return (
        stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and stat.S_IMODE(info.st_mode) & 0o077 == 0
    )


def encode_request(paths: Sequence[str]) -> bytes:
    return json.dumps({"open": [str(p) for p in paths]}).encode("utf-8") + b"\n"


def decode_request(data: bytes) -> list[str] | None:
    """The paths of one request line, or ``None`` for anything that is not one."""
    try:
        value = json.loads(data.split(b"\n", 1)[0])
    except (ValueError, UnicodeDecodeError):
        return None
    paths = value.get("open") if isinstance(value, dict) else None
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        return None
    return list(paths)


def hand_over(name: str, paths: Sequence[str], timeout_ms: int = HANDOVER_TIMEOUT_MS) -> bool:
    """Give ``paths`` to a running instance; ``True`` once it acknowledged them."""
    socket = QLocalSocket()
    socket.connectToServer(name)
    if not socket.waitForConnected(min(timeout_ms, 1000)):
        return False
    if not _server_is_ours(socket):
        log.warning("the single-instance channel %s is held by another user; not handing over", name)
        socket.abort()
        return False
    try:
        socket.write(encode_request(paths))
        if not socket.waitForBytesWritten(timeout_ms):
            log.warning("the running instance did not take the request: %s", socket.errorString())
            return False
        received = b""
        while b"\n" not in received:
            if not socket.waitForReadyRead(timeout_ms):
                log.warning("the running instance did not answer within %d ms", timeout_ms)
                return False
            received += bytes(socket.readAll().data())
        return received.startswith(ACK)
    finally:
        socket.abort()


class InstanceServer(QObject):
    """The running window's end: each request's paths arrive as ``open_requested(list[str])``."""

    open_requested = Signal(object)

    def __init__(self, name: str | None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = name
        self.server = QLocalServer(self)
        self.server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self.server.newConnection.connect(self._accept)

    def listen(self) -> bool:
        """Claim the name; a stale socket (nobody answers on it) is removed first."""
        if self.name is None:
            return False
        if self.server.listen(self.name):
            return True
        if self.server.serverError() != QAbstractSocket.SocketError.AddressInUseError:
            log.warning("single-instance socket %s: %s", self.name, self.server.errorString())
            return False
        if _answers(self.name):
            return False  # a live instance won the race: hand over to it instead
        log.info("removing the stale single-instance socket %s", self.name)
        QLocalServer.removeServer(self.name)
        return self.server.listen(self.name)

    def close(self) -> None:
        self.server.close()

    def _accept(self) -> None:
        while self.server.hasPendingConnections():
            socket = self.server.nextPendingConnection()
            buffer = bytearray()
            socket.readyRead.connect(lambda s=socket, b=buffer: self._read(s, b))
            socket.disconnected.connect(socket.deleteLater)

    def _read(self, socket: QLocalSocket, buffer: bytearray) -> None:
        buffer += bytes(socket.readAll().data())
        if b"\n" not in buffer:
            if len(buffer) > MAX_REQUEST_BYTES:
                socket.abort()
            return
        paths = decode_request(bytes(buffer))
        if paths is None:
            log.warning("ignored a malformed single-instance request")
            socket.abort()
            return
        log.info("a second launch handed over %d path(s)", len(paths))
        self.open_requested.emit(paths)
        socket.write(ACK)
        socket.flush()
        socket.disconnectFromServer()


def _server_is_ours(socket: QLocalSocket) -> bool:
    """Whether the connected server runs as this user. On Windows a pipe name is global, so
    another user could create it first; there the pipe's server process is checked. Elsewhere
    the socket's private folder already keeps others out (``private_folder``)."""
    if sys.platform == "win32":
        return _pipe_server_is_this_user(int(socket.socketDescriptor()))
    return True


if sys.platform == "win32":  # pragma: no cover - tested on Linux only; typed and written for Windows
    import ctypes
    from ctypes import wintypes

    _PROCESS_QUERY_LIMITED_INFORMATION = 0x1000
    _TOKEN_QUERY = 0x0008
    _TOKEN_USER = 1

    def _pipe_server_is_this_user(handle: int) -> bool:
        """The pipe's server process has this process's user SID (False when it cannot tell)."""
        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
        pid = wintypes.ULONG()
        if not kernel32.GetNamedPipeServerProcessId(wintypes.HANDLE(handle), ctypes.byref(pid)):
            return False
        process = kernel32.OpenProcess(_PROCESS_QUERY_LIMITED_INFORMATION, False, pid.value)
        if not process:
            return False
        try:
            theirs = _user_sid(process)
            return theirs is not None and theirs == _user_sid(kernel32.GetCurrentProcess())
        finally:
            kernel32.CloseHandle(process)

    def _user_sid(process: int) -> bytes | None:
        """The user SID of ``process``'s token, as bytes."""
        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
        advapi32 = ctypes.WinDLL("advapi32", use_last_error=True)
        token = wintypes.HANDLE()
        if not advapi32.OpenProcessToken(process, _TOKEN_QUERY, ctypes.byref(token)):
            return None
        try:
            size = wintypes.DWORD()
            advapi32.GetTokenInformation(token, _TOKEN_USER, None, 0, ctypes.byref(size))
            buffer = ctypes.create_string_buffer(size.value)
            if not advapi32.GetTokenInformation(token, _TOKEN_USER, buffer, size, ctypes.byref(size)):
                return None
            sid = ctypes.cast(buffer, ctypes.POINTER(ctypes.c_void_p))[0]  # TOKEN_USER.User.Sid
            if not sid or not advapi32.IsValidSid(ctypes.c_void_p(sid)):
                return None
            return ctypes.string_at(sid, advapi32.GetLengthSid(ctypes.c_void_p(sid)))
        finally:
            kernel32.CloseHandle(token)


def _answers(name: str) -> bool:
    probe = QLocalSocket()
    probe.connectToServer(name)
    connected = probe.waitForConnected(500)
    probe.abort()
    return bool(connected)


def hand_over_early(data_dir: str | os.PathLike[str], paths: Sequence[str]) -> bool:
    """The launcher's fast path: before the window's modules load, give ``paths`` to a running
    window for this data folder (``True``: done, exit 0)."""
    name = server_name(data_dir)
    return name is not None and hand_over(name, [str(Path(p).absolute()) for p in paths])


def claim_or_hand_over(name: str | None, paths: Sequence[str]) -> InstanceServer | None:
    """``None`` when a running instance took ``paths`` (this process should exit 0); else the
    server this process now runs (it may not be listening if the socket could not be claimed,
    or when ``name`` is ``None``: there was no private place for it)."""
    server = InstanceServer(name)
    if name is None:
        log.warning("running without the single-instance socket: no private folder for it")
        return server
    for _attempt in range(3):
        if hand_over(name, paths):
            server.deleteLater()
            return None
        if server.listen():
            return server
        if not _answers(name):
            break
    log.warning("running without the single-instance socket %s", name)
    return server


class FileOpenEvents(QObject):
    """macOS: Finder's Open (and a drop on the Dock icon) reach the running app as a
    ``QFileOpenEvent``, not as arguments; installed on the application, they open like a
    second launch's files do."""

    open_requested = Signal(object)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.FileOpen and isinstance(event, QFileOpenEvent):
            path = event.file()
            if path:
                self.open_requested.emit([path])
                return True
        return super().eventFilter(watched, event)
