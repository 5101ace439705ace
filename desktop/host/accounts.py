"""API keys for provider accounts (design D3): the OS keyring first, environment variables second.

Keys are stored with ``keyring`` under service ``pi-desktop`` and the account name as
user name; nothing here writes a key to a file or a log, and everything that describes a
key (``KeyInfo``) carries only where it came from and a short fingerprint. The usual
environment variables are honoured as pi-ai maps them (``ANTHROPIC_API_KEY``,
``OPENAI_API_KEY``, ``DEEPSEEK_API_KEY``, ``MISTRAL_API_KEY``, ``GEMINI_API_KEY``, ...): the
names and the keyring naming rule live in one table, ``desktop.host.credentials``.

Without a keyring backend (headless Linux without a Secret Service, a ``fail`` backend)
storing fails with ``KeyringUnavailable`` whose message says what to install; reading
falls back to the environment, and the offline emulator route needs no key at all.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Mapping
from typing import NamedTuple

from desktop.host.credentials import API_KEY_ENV as ENV_API_KEYS
from desktop.host.credentials import KEYRING_SERVICE as SERVICE
from desktop.host.credentials import env_api_key, keyring_username
from desktop.host.redaction import redact_text

if sys.platform != "darwin":
    # keyring loads every backend it ships to pick one, and its macOS backend's API module looks
    # for three macOS frameworks with ``ctypes.util.find_library``, which on Linux runs
    # ``ldconfig`` and a compiler in subprocesses: 60 ms of every first keyring use (``payload``,
    # ``status`` of a section sealed elsewhere, the window's routes). That backend refuses any
    # other system in its ``priority`` whether or not the module loaded, and keyring loads it in a
    # ``try``, so here it is marked absent; the backend keyring picks is the same.
    sys.modules.setdefault("keyring.backends.macOS.api", None)  # type: ignore[arg-type]

__all__ = [
    "ENV_API_KEYS",
    "SERVICE",
    "KeyInfo",
    "KeyringUnavailable",
    "delete_api_key",
    "env_api_key",
    "get_api_key",
    "key_fingerprint",
    "keyring_available",
    "keyring_username",
    "known_secrets",
    "redact_text",
    "resolve_api_key",
    "set_api_key",
]

NO_KEYRING_MESSAGE = (
    "No OS keyring is available, so API keys cannot be stored safely. "
    "On Linux install and unlock a Secret Service keyring (GNOME Keyring: `gnome-keyring` plus the "
    "`secretstorage` Python package; or KWallet with `dbus-python`); macOS Keychain and Windows "
    "Credential Manager work out of the box. Until then set the provider's environment variable "
    "(e.g. ANTHROPIC_API_KEY, OPENAI_API_KEY) or use the offline Emulator route, which needs no key."
)


class KeyringUnavailable(RuntimeError):
    """No usable keyring backend; the message says what to install and how to keep working."""

    def __init__(self, detail: str = "") -> None:
        super().__init__(NO_KEYRING_MESSAGE + (f" (keyring said: {detail})" if detail else ""))


class KeyInfo(NamedTuple):
    """Where a key came from, safe to show: never the key itself."""

    source: str  # "keyring", "env" or "none"
    detail: str  # account name or environment variable name
    fingerprint: str = ""


def key_fingerprint(key: str) -> str:
    """Eight hex digits that tell two keys apart without revealing either."""
    return hashlib.sha256(key.encode()).hexdigest()[:8]


def _check_account(account: str) -> None:
    if not account or not account.strip():
        raise ValueError("Account name is empty; name the account (e.g. 'anthropic' or 'openai-work')")


def keyring_available() -> bool:
    """True when a real backend is active (not keyring's ``fail`` placeholder)."""
    # Lazy: the status budget.
    import keyring
    import keyring.backends.fail

    backend = keyring.get_keyring()
    return not isinstance(backend, keyring.backends.fail.Keyring) and getattr(backend, "priority", 1) > 0


def set_api_key(account: str, key: str) -> None:
    # Lazy: the status budget.
    import keyring
    import keyring.errors

    _check_account(account)
    if not key or not key.strip():
        raise ValueError(f"The API key for account {account!r} is empty; paste the key and try again")
    try:
        keyring.set_password(SERVICE, account, key.strip())
    except keyring.errors.KeyringError as exc:  # NoKeyringError included
        raise KeyringUnavailable(redact_text(str(exc), [key])) from exc


def get_api_key(account: str) -> str | None:
    """The stored key, or None when there is none; KeyringUnavailable without a backend."""
    # Lazy: the status budget.
    import keyring
    import keyring.errors

    _check_account(account)
    try:
        value = keyring.get_password(SERVICE, account)
    except keyring.errors.KeyringError as exc:  # NoKeyringError included
        raise KeyringUnavailable(str(exc)) from exc
    if isinstance(value, str) and value:
        _read_from_keyring[account] = value
        return value
    return None


#: Keyring values this process has read (account -> key), so tool output can be scrubbed of
#: them (design A9). Process memory only; never written anywhere.
_read_from_keyring: dict[str, str] = {}
#: Variables that hold provider credentials besides the API keys above (cloud signing, OAuth).
EXTRA_CREDENTIAL_VARS = (
    "ANTHROPIC_AUTH_TOKEN",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
)


def credential_env_names(extra: tuple[str, ...] = ()) -> frozenset[str]:
    """Every environment variable the app may read a provider credential from."""
    names = {name for names in ENV_API_KEYS.values() for name in names}
    return frozenset({*names, *EXTRA_CREDENTIAL_VARS, *extra})


def known_secrets(env: Mapping[str, str] | None = None, extra_env: tuple[str, ...] = ()) -> dict[str, str]:
    """Every credential value this process holds, by a name safe to show: the provider
    variables set in the environment and the keyring keys read so far."""
    source = os.environ if env is None else env
    found = {name: source[name] for name in credential_env_names(extra_env) if source.get(name)}
    found.update({f"keyring:{account}": value for account, value in list(_read_from_keyring.items())})
    return found


def delete_api_key(account: str) -> bool:
    """Remove the stored key; False when there was none."""
    # Lazy: the status budget.
    import keyring
    import keyring.errors

    _check_account(account)
    try:
        keyring.delete_password(SERVICE, account)
    except keyring.errors.PasswordDeleteError:
        return False
    except keyring.errors.NoKeyringError as exc:
        raise KeyringUnavailable(str(exc)) from exc
    return True


def resolve_api_key(
    provider: str, account: str | None = None, env: Mapping[str, str] | None = None
) -> tuple[str | None, KeyInfo]:
    """The key to use for a route: the account's keyring entry, else the provider's variable.

    A missing keyring backend is not an error here: the environment is consulted instead,
    and the returned KeyInfo says where (or that nothing was found).
    """
    if account:
        try:
            stored = get_api_key(account)
        except KeyringUnavailable:
            stored = None
        if stored:
            return stored, KeyInfo("keyring", account, key_fingerprint(stored))
    found = env_api_key(provider, env)
    if found:
        name, value = found
        return value, KeyInfo("env", name, key_fingerprint(value))
    return None, KeyInfo("none", account or provider)
