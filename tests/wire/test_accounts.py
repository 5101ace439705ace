"""Accounts: keys in a real (in-process) keyring backend, environment fallback, no-backend message."""

from __future__ import annotations

import pytest

from desktop.host import accounts
from desktop.host.accounts import KeyringUnavailable
from tests.keyrings import MemoryKeyring


def test_keys_round_trip_through_the_keyring(memory_keyring: MemoryKeyring) -> None:
    assert accounts.keyring_available()
    accounts.set_api_key("anthropic-work", "  sk-ant-api03-abcdefghijklmnop  ")

    assert memory_keyring.entries == {("pi-desktop", "anthropic-work"): "sk-ant-api03-abcdefghijklmnop"}
    assert accounts.get_api_key("anthropic-work") == "sk-ant-api03-abcdefghijklmnop"
    assert accounts.get_api_key("other") is None
    assert accounts.delete_api_key("anthropic-work") is True
    assert accounts.delete_api_key("anthropic-work") is False
    assert accounts.get_api_key("anthropic-work") is None


def test_resolution_prefers_the_account_then_the_environment(memory_keyring: MemoryKeyring) -> None:
    env = {"ANTHROPIC_API_KEY": "sk-ant-from-env-0000000000"}
    key, info = accounts.resolve_api_key("anthropic", None, env)
    assert key == "sk-ant-from-env-0000000000"
    assert (info.source, info.detail) == ("env", "ANTHROPIC_API_KEY")

    accounts.set_api_key("anthropic", "sk-ant-stored-1111111111")
    key, info = accounts.resolve_api_key("anthropic", "anthropic", env)
    assert key == "sk-ant-stored-1111111111"
    assert (info.source, info.detail) == ("keyring", "anthropic")
    assert info.fingerprint == accounts.key_fingerprint(key) and key not in repr(info)

    assert accounts.resolve_api_key("mistral", None, {}) == (None, accounts.KeyInfo("none", "mistral"))


@pytest.mark.parametrize(
    ("provider", "variable"),
    [
        ("openai", "OPENAI_API_KEY"),
        ("deepseek", "DEEPSEEK_API_KEY"),
        ("mistral", "MISTRAL_API_KEY"),
        ("google", "GEMINI_API_KEY"),
        ("anthropic", "ANTHROPIC_OAUTH_TOKEN"),
    ],
)
def test_environment_variables_per_provider(provider: str, variable: str) -> None:
    assert accounts.env_api_key(provider, {variable: "value-123"}) == (variable, "value-123")


def test_google_reads_gemini_api_key_only_as_pi_ai_does() -> None:
    assert accounts.env_api_key("google", {"GOOGLE_API_KEY": "g"}) is None
    assert accounts.env_api_key("google", {"GOOGLE_API_KEY": "g", "GEMINI_API_KEY": "gem"}) == (
        "GEMINI_API_KEY",
        "gem",
    )


def test_missing_backend_names_what_to_install_and_keeps_the_offline_route(no_keyring: None) -> None:
    assert not accounts.keyring_available()
    with pytest.raises(KeyringUnavailable) as caught:
        accounts.set_api_key("openai", "sk-proj-abcdefghijklmnopqrstuv")
    message = str(caught.value)
    assert "gnome-keyring" in message and "secretstorage" in message
    assert "OPENAI_API_KEY" in message and "Emulator route" in message
    assert "sk-proj-abcdefghijklmnopqrstuv" not in message
    with pytest.raises(KeyringUnavailable):
        accounts.get_api_key("openai")
    # Reading for a route degrades to the environment instead of failing.
    key, info = accounts.resolve_api_key("openai", "openai", {"OPENAI_API_KEY": "sk-env-22222222222222222"})
    assert key == "sk-env-22222222222222222" and info.source == "env"
    assert accounts.resolve_api_key("openai", "openai", {})[0] is None


def test_bad_account_and_key_input_is_rejected_clearly(memory_keyring: MemoryKeyring) -> None:
    with pytest.raises(ValueError, match="Account name is empty"):
        accounts.set_api_key(" ", "key")
    with pytest.raises(ValueError, match="API key for account 'x' is empty"):
        accounts.set_api_key("x", "   ")
    assert memory_keyring.entries == {}
