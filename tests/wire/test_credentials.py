"""The one credentials table agrees with pi-ai 1.0.3's own answer (design D3).

``tests/fixtures/credentials/pi_ai_env_api_keys.json`` is what pi-ai's ``findEnvKeys``/``getEnvApiKey``
return when every variable is set (``scripts/oracle/env_api_keys.mjs``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop.host import accounts, first_run
from desktop.host.credentials import API_KEY_ENV, KEYRING_SERVICE, env_api_key, keyring_username

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "credentials" / "pi_ai_env_api_keys.json"
PI_AI: dict[str, dict[str, object]] = json.loads(FIXTURE.read_text())["providers"]

#: pi-ai lists it for discovery but sends it only as a bearer token, never as the key.
BEARER_ONLY = {"ANTHROPIC_AUTH_TOKEN"}
#: Read by pi-ai's Bedrock provider itself rather than through its env-api-keys table.
DESKTOP_ONLY = {"amazon-bedrock": ("AWS_BEARER_TOKEN_BEDROCK",)}


def test_fixture_covers_the_providers_people_use() -> None:
    assert {"anthropic", "openai", "deepseek", "google", "mistral", "openrouter"} <= set(PI_AI)


def test_every_pi_ai_provider_reads_the_same_variables_in_the_same_order() -> None:
    for provider, entry in PI_AI.items():
        names = entry["names"]
        assert isinstance(names, list)
        expected = tuple(name for name in names if name not in BEARER_ONLY)
        assert API_KEY_ENV.get(provider) == expected, provider


def test_no_provider_is_known_here_that_pi_ai_does_not_know_except_the_listed_ones() -> None:
    extra = {p: API_KEY_ENV[p] for p in set(API_KEY_ENV) - set(PI_AI)}
    assert extra == DESKTOP_ONLY


@pytest.mark.parametrize("provider", sorted(PI_AI))
def test_with_every_variable_set_the_key_is_the_one_pi_ai_uses(provider: str) -> None:
    everything = {name: f"value-of-{name}" for names in API_KEY_ENV.values() for name in names}
    everything.update({name: f"value-of-{name}" for name in BEARER_ONLY})
    found = env_api_key(provider, everything)
    assert (found[0] if found else None) == PI_AI[provider]["key"]


def test_accounts_and_first_run_read_this_table() -> None:
    assert accounts.ENV_API_KEYS is API_KEY_ENV
    assert accounts.SERVICE == first_run.KEYRING_SERVICE == KEYRING_SERVICE
    for provider, names in first_run.PROVIDER_KEY_ENV.items():
        assert names == API_KEY_ENV[provider]
        env = {names[-1]: "k-123"}
        route = first_run.decide_initial_route(env, set())
        assert (route.provider, route.env_var) == (provider, names[-1])
        assert accounts.env_api_key(provider, env) == (names[-1], "k-123")


def test_keyring_naming_rule() -> None:
    assert keyring_username("openai") == "openai/default"
    assert keyring_username("openai", "work") == "openai/work"
    assert keyring_username("openai", "") == "openai/default"


def test_blank_values_are_not_keys() -> None:
    assert env_api_key("openai", {"OPENAI_API_KEY": "  "}) is None
    assert env_api_key("anthropic", {"ANTHROPIC_OAUTH_TOKEN": "", "ANTHROPIC_API_KEY": "a"}) == (
        "ANTHROPIC_API_KEY",
        "a",
    )
