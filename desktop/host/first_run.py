"""Which route the window opens on: a real provider only when a key for it exists.

A first launch must work with no key and no network (design D4), so the offline emulator is
the default and is labelled as such. A key in the OS keyring (saved through the accounts
dialog) wins over one in the environment, because saving it was a deliberate choice in
this app; among several, the fixed order below keeps the choice stable between launches.

``decide_initial_route`` is pure; ``initial_route`` gathers its inputs from the process
environment and the keyring, and treats a missing keyring backend as "no stored keys".
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, replace
from typing import Final, Literal

from desktop.host.credentials import API_KEY_ENV, KEYRING_SERVICE, env_api_key, keyring_username

#: Forces the emulator even when keys exist (demos, screenshots, the packaging smoke tests).
OFFLINE_ENV: Final = "PI_DESKTOP_OFFLINE"
EMULATOR: Final = "emulator"

#: The providers a first launch may open on, in preference order: those with a published route
#: the window offers. Their key variables and keyring entries come from the one credentials table.
FIRST_RUN_PROVIDERS: Final = ("anthropic", "openai", "deepseek", "google", "openrouter")
#: Provider id -> environment variables holding its key (a view of ``credentials.API_KEY_ENV``).
PROVIDER_KEY_ENV: Final[Mapping[str, tuple[str, ...]]] = {p: API_KEY_ENV[p] for p in FIRST_RUN_PROVIDERS}

KeySource = Literal["none", "keyring", "environment"]


@dataclass(frozen=True)
class InitialRoute:
    provider: str
    """A provider id from ``PROVIDER_KEY_ENV``, or ``"emulator"`` for the offline route."""
    source: KeySource
    reason: str
    env_var: str | None = None
    keyring_note: str = ""
    """One line when the keyring could not be read (no backend, locked, no D-Bus), else empty."""

    @property
    def offline(self) -> bool:
        return self.provider == EMULATOR

    @property
    def label(self) -> str:
        if self.offline:
            return "Offline emulator (no network, no API key)"
        return f"{self.provider} ({self.reason})"


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in {"1", "true", "yes", "on"}


def decide_initial_route(env: Mapping[str, str], stored_keys: Collection[str]) -> InitialRoute:
    """Pure: the route for a process with environment ``env`` and keyring entries for ``stored_keys``."""
    if _truthy(env.get(OFFLINE_ENV)):
        return InitialRoute(EMULATOR, "none", f"{OFFLINE_ENV} is set")
    for provider in PROVIDER_KEY_ENV:
        if provider in stored_keys:
            return InitialRoute(provider, "keyring", "API key saved in the system keyring")
    for provider in PROVIDER_KEY_ENV:
        found = env_api_key(provider, env)
        if found:
            return InitialRoute(provider, "environment", f"{found[0]} is set", env_var=found[0])
    return InitialRoute(EMULATOR, "none", "no API key in the keyring or the environment")


def stored_provider_keys(
    get_password: Callable[[str, str], str | None], problems: list[str] | None = None
) -> set[str]:
    """Providers with a keyring entry; a broken or absent backend means none, logged once and
    said in one line appended to ``problems`` (the window shows it, design G13)."""
    found: set[str] = set()
    for provider in PROVIDER_KEY_ENV:
        try:
            secret = get_password(KEYRING_SERVICE, keyring_username(provider))
        except Exception as exc:  # any backend failure: locked, no D-Bus, no backend at all
            logging.getLogger(__name__).info(
                "keyring unavailable (%s: %s); using environment keys only", type(exc).__name__, exc
            )
            if problems is not None:
                problems.append(
                    f"No usable system keyring ({type(exc).__name__}): API keys cannot be saved in "
                    "Pi Desktop; keys in environment variables (ANTHROPIC_API_KEY, …) still work."
                )
            return found
        if secret:
            found.add(provider)
    return found


def initial_route(environ: Mapping[str, str] | None = None) -> InitialRoute:
    env = os.environ if environ is None else environ
    if _truthy(env.get(OFFLINE_ENV)):
        return decide_initial_route(env, ())

    # Here, not at the top: the window's launch reads ``OFFLINE_ENV`` before its first paint,
    # and loading the keyring (with its HTTP and e-mail modules) costs a tenth of a second.
    import keyring

    problems: list[str] = []
    decision = decide_initial_route(env, stored_provider_keys(keyring.get_password, problems))
    return replace(decision, keyring_note=problems[0]) if problems else decision
