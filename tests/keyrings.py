"""Keyring backends for tests: never the developer's real keyring."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import keyring
import keyring.backend
import keyring.errors


@contextlib.contextmanager
def using(backend: keyring.backend.KeyringBackend) -> Iterator[None]:
    """``backend`` as this process's keyring inside the block, the previous one after it."""
    previous = keyring.get_keyring()
    keyring.set_keyring(backend)
    try:
        yield
    finally:
        keyring.set_keyring(previous)


class MemoryKeyring(keyring.backend.KeyringBackend):
    """A complete keyring backend that keeps entries in this process only."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.entries: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.entries.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.entries[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if (service, username) not in self.entries:
            raise keyring.errors.PasswordDeleteError("no such entry")
        del self.entries[(service, username)]
