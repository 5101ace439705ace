"""The per-installation secret behind the ``tool_activation`` MAC (design A8).

A session file can be copied, shared, downloaded or edited; the secret is what lets this
installation recognize the activation sections it wrote itself. It is made in the OS keyring
(service ``pi-desktop``, user ``installation/activation-mac``); where no keyring backend
exists it is made as a file ``<data dir>/installation-secret`` with mode 0600, owned by the user.

A secret stays where it was made: when the private file exists it is the installation's
secret, and it is read without loading the keyring at all (``import keyring`` and its backend
search cost more than parsing a long session). A keyring that appears later, or still holds a
secret made before the file, is consulted only to *verify* a section the file's secret does
not (``keyring_secret``), so nothing sealed under either stops verifying (design A8).

The file is published atomically: the secret is written and fsynced to a private temporary
file (``O_CREAT | O_EXCL | O_NOFOLLOW``), then hard-linked to its name, which never replaces
an existing file. Two processes starting at once therefore agree on one secret, and a reader
never sees half a secret. A symlink, a non-regular file, a file of another user or one other
users can read is refused with a message naming the file (the caller then grants nothing).

Reading never writes: ``create=False`` (used by read-only opens such as ``status``) never
creates a secret; with none yet, nothing can have been sealed here, so nothing verifies.
The value is never printed, logged or put in an exception message. It is drawn from
``os.urandom`` (what ``secrets.token_bytes`` returns; ``secrets`` would load ``random`` and
``base64`` into every command that verifies a section, the status budget).
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from desktop.host import paths
from desktop.host.accounts import SERVICE, keyring_available
from desktop.host.private_files import make_private_dirs, sync_dir

KEYRING_USER = "installation/activation-mac"
FILE_NAME = "installation-secret"
SECRET_BYTES = 32

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_lock = threading.Lock()
_cache: dict[tuple[str, int], InstallationSecret] = {}


class InstallationSecretError(RuntimeError):
    """The secret exists but cannot be used safely; the message names the place, never the value."""


@dataclass(frozen=True, slots=True, eq=False)
class InstallationSecret:
    """This installation's secret and where it lives. Its repr shows no value."""

    value: bytes = field(repr=False)
    source: Literal["keyring", "file"]
    where: str
    """Where it lives, for messages ("the OS keyring (…)" or the file path); never the value."""


def secret_path(data_dir: Path | None = None) -> Path:
    return (data_dir or paths.data_dir()) / FILE_NAME


def _decode(text: str, where: str) -> bytes:
    value = text.strip()
    try:
        raw = bytes.fromhex(value)
    except ValueError:
        raw = b""
    if len(raw) != SECRET_BYTES:
        raise InstallationSecretError(f"{where}: the installation secret is not {SECRET_BYTES} bytes of hex")
    return raw


def _read_file(path: Path) -> bytes | None:
    """The file's secret, None when there is no file; refuses anything but a private regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        kind = "a symbolic link" if path.is_symlink() else (exc.strerror or "unreadable")
        raise InstallationSecretError(
            f"{path}: the installation secret file is {kind}; remove it so a new one is created"
        ) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InstallationSecretError(f"{path}: the installation secret is not a regular file")
        if hasattr(os, "getuid") and info.st_uid != os.getuid():
            raise InstallationSecretError(f"{path}: the installation secret belongs to another user")
        if os.name == "posix" and info.st_mode & 0o077:
            raise InstallationSecretError(
                f"{path}: the installation secret is readable by other users; run chmod 600 on it"
            )
        data = os.read(fd, 4 * SECRET_BYTES)
    finally:
        os.close(fd)
    return _decode(data.decode("ascii", errors="replace"), str(path))


def _write_private(path: Path, value: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o600)
    try:
        os.write(fd, value.hex().encode("ascii") + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)


def _create_file(path: Path) -> bytes:
    """Publish a new secret at ``path`` unless another process got there first; return the winner."""
    make_private_dirs(path.parent)  # design X22
    temp = path.with_name(f".{FILE_NAME}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    _write_private(temp, os.urandom(SECRET_BYTES))
    try:
        try:
            os.link(temp, path)
        except FileExistsError:
            pass  # another process published first: use theirs
        except OSError:
            # No hard links on this filesystem: exclusive create is still never a replacement.
            with contextlib.suppress(FileExistsError):
                _write_private(path, _decode(temp.read_text(encoding="ascii"), str(temp)))
    finally:
        temp.unlink(missing_ok=True)
    sync_dir(path.parent)
    value = _read_file(path)
    if value is None:
        raise InstallationSecretError(f"{path}: the installation secret vanished while it was created")
    return value


def _from_keyring(path: Path, *, create: bool) -> InstallationSecret | None:
    """The keyring's secret; None when the keyring cannot be used (the file is used instead)."""
    # Lazy: the status budget.
    import keyring
    import keyring.errors

    where = f"the OS keyring (service {SERVICE!r}, user {KEYRING_USER!r})"
    try:
        stored = keyring.get_password(SERVICE, KEYRING_USER)
    except keyring.errors.KeyringError:
        return None
    if stored:
        try:
            return InstallationSecret(_decode(stored, where), "keyring", where)
        except InstallationSecretError:
            if not create:
                raise
    # A usable file was taken before the keyring was asked; what is left is no file (a new
    # secret goes to the keyring) or an unsafe one, refused here as before.
    if not create:
        existing = _read_file(path)
        return InstallationSecret(existing, "file", str(path)) if existing is not None else None
    value = _read_file(path) or os.urandom(SECRET_BYTES)
    try:
        keyring.set_password(SERVICE, KEYRING_USER, value.hex())
        stored = keyring.get_password(SERVICE, KEYRING_USER)  # two first starts: one value wins
    except keyring.errors.KeyringError:
        return None
    return InstallationSecret(_decode(stored or value.hex(), where), "keyring", where)


def load_installation_secret(
    data_dir: Path | None = None, *, create: bool = True
) -> InstallationSecret | None:
    """This installation's secret (the private file when there is one, else the keyring, else a
    new file), created on first use.

    Returns None only with ``create=False`` when no secret exists yet. Raises
    ``InstallationSecretError`` when one exists but is unsafe or unreadable. Blocking (the
    keyring may talk D-Bus): call it on the worker or in a headless command, never the GUI thread.

    The file comes first and alone (design A8), so ``status`` seals and verifies as the runtime
    would; an unsafe file is left to the keyring path, which refuses it when it needs the file.
    """
    path = secret_path(data_dir)
    try:
        made_in_file = _read_file(path)
    except InstallationSecretError:
        made_in_file = None
    if made_in_file is not None:
        return InstallationSecret(made_in_file, "file", str(path))

    # Lazy: the status budget.
    import keyring

    backend = keyring.get_keyring() if keyring_available() else None
    key = (str(path.absolute()), id(backend))
    with _lock:
        cached = _cache.get(key)
        if cached is not None:
            return cached
        found: InstallationSecret | None = None
        if backend is not None:
            found = _from_keyring(path, create=create)
        if found is None:
            value = _read_file(path)
            if value is None and create:
                value = _create_file(path)
            found = InstallationSecret(value, "file", str(path)) if value is not None else None
        if found is not None:
            _cache[key] = found
        return found


def keyring_secret() -> bytes | None:
    """The secret the keyring holds, when a backend is reachable and holds a valid one; never
    creates, writes or raises. Only for verifying a section the file's secret does not (a
    secret made in the keyring before the file existed still counts, design A8)."""
    # Lazy: the status budget.
    import keyring
    import keyring.errors

    if not keyring_available():
        return None
    try:
        stored = keyring.get_password(SERVICE, KEYRING_USER)
    except keyring.errors.KeyringError:
        return None
    try:
        return _decode(stored, "the OS keyring") if stored else None
    except InstallationSecretError:
        return None
