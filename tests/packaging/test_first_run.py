"""The window opens on the offline emulator unless a provider key exists."""

from __future__ import annotations

import keyring.errors
import pytest

from desktop.host.accounts import keyring_username
from desktop.host.credentials import API_KEY_ENV
from desktop.host.first_run import (
    EMULATOR,
    KEYRING_SERVICE,
    OFFLINE_ENV,
    PROVIDER_KEY_ENV,
    decide_initial_route,
    initial_route,
    stored_provider_keys,
)


def test_no_key_anywhere_means_the_offline_emulator() -> None:
    route = decide_initial_route({"PATH": "/usr/bin", "HOME": "/home/u"}, set())
    assert route.provider == EMULATOR and route.offline and route.source == "none"
    assert "Offline emulator" in route.label


@pytest.mark.parametrize(
    ("var", "provider"),
    [("ANTHROPIC_API_KEY", "anthropic"), ("OPENAI_API_KEY", "openai"), ("DEEPSEEK_API_KEY", "deepseek")],
)
def test_an_environment_key_selects_its_provider(var: str, provider: str) -> None:
    route = decide_initial_route({var: "sk-test-123"}, set())
    assert (route.provider, route.source, route.env_var) == (provider, "environment", var)
    assert not route.offline


def test_blank_keys_do_not_count() -> None:
    assert decide_initial_route({"OPENAI_API_KEY": "  "}, set()).offline


def test_several_keys_pick_in_a_stable_order() -> None:
    env = {"DEEPSEEK_API_KEY": "d", "OPENAI_API_KEY": "o"}
    assert decide_initial_route(env, set()).provider == "openai"
    assert decide_initial_route(dict(reversed(env.items())), set()).provider == "openai"


def test_a_keyring_key_wins_over_the_environment() -> None:
    route = decide_initial_route({"ANTHROPIC_API_KEY": "a"}, {"deepseek"})
    assert (route.provider, route.source) == ("deepseek", "keyring")


def test_offline_flag_forces_the_emulator() -> None:
    route = decide_initial_route({OFFLINE_ENV: "1", "ANTHROPIC_API_KEY": "a"}, {"openai"})
    assert route.offline and OFFLINE_ENV in route.reason


def test_unknown_keyring_entries_are_ignored() -> None:
    assert decide_initial_route({}, {"some-other-app"}).offline


def test_stored_keys_reads_the_app_service() -> None:
    store = {(KEYRING_SERVICE, "openai/default"): "sk-x", ("other-service", "anthropic/default"): "sk-y"}
    assert stored_provider_keys(lambda service, user: store.get((service, user))) == {"openai"}


def test_a_bare_provider_entry_is_not_a_key_dispatch_could_use() -> None:
    """Dispatch reads ``<provider>/<account>``; a first run must not open on a key it cannot find."""
    store = {(KEYRING_SERVICE, "openai"): "sk-x"}
    assert stored_provider_keys(lambda service, user: store.get((service, user))) == set()


def test_an_anthropic_oauth_token_selects_anthropic_as_dispatch_would_use_it() -> None:
    route = decide_initial_route({"ANTHROPIC_OAUTH_TOKEN": "sk-ant-oat-1"}, set())
    assert (route.provider, route.env_var) == ("anthropic", "ANTHROPIC_OAUTH_TOKEN")


def test_a_key_saved_by_the_accounts_dialog_is_seen_at_first_run() -> None:
    store = {(KEYRING_SERVICE, keyring_username("deepseek")): "sk-z"}
    assert stored_provider_keys(lambda service, user: store.get((service, user))) == {"deepseek"}


def test_a_broken_keyring_means_no_stored_keys() -> None:
    def locked(service: str, user: str) -> str | None:
        raise RuntimeError("keyring locked")

    assert stored_provider_keys(locked) == set()


def test_initial_route_with_no_keyring_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    """The real keyring with its 'fail' backend (as on a machine with no secret service)."""
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    env = {"PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}
    assert initial_route(env).offline
    assert initial_route({**env, "DEEPSEEK_API_KEY": "sk-d"}).provider == "deepseek"


def test_every_first_run_provider_reads_the_shared_credentials_table() -> None:
    assert PROVIDER_KEY_ENV and all(PROVIDER_KEY_ENV[p] == API_KEY_ENV[p] for p in PROVIDER_KEY_ENV)


def test_an_unusable_keyring_is_said_in_one_line() -> None:
    def no_backend(_service: str, _user: str) -> str | None:
        raise keyring.errors.NoKeyringError("No recommended backend was available.")

    problems: list[str] = []
    assert stored_provider_keys(no_backend, problems) == set()
    assert len(problems) == 1 and problems[0].startswith("No usable system keyring (NoKeyringError):")
    assert "\n" not in problems[0]
