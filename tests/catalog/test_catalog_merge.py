"""Merging (design M1): models.dev limits, prices and modalities; Pi compat and transport flags."""

from __future__ import annotations

from typing import Any

import orjson

from desktop.pi.catalog import Catalog, CatalogSource, build_catalog
from desktop.pi.catalog.catalog import bundled_models_dev
from desktop.pi.catalog.transport import SYSTEM_MESSAGES, TRANSPORT_FLAGS


def _md(provider: str, model_id: str) -> dict[str, Any]:
    record = bundled_models_dev().record(provider, model_id)
    assert record is not None, f"models.dev snapshot has no {provider}/{model_id}"
    return dict(record)


def test_prices_and_limits_from_models_dev_flags_from_pi(catalog: Catalog) -> None:
    entry = catalog.get("deepseek", "deepseek-v4-pro")
    pi = Catalog(catalog.pi, None).get("deepseek", "deepseek-v4-pro").model  # type: ignore[union-attr]
    record = _md("deepseek", "deepseek-v4-pro")
    assert entry is not None
    # The two catalogs disagree on price; models.dev wins.
    assert pi["cost"]["input"] != record["cost"]["input"]
    assert entry.model["cost"]["input"] == record["cost"]["input"]
    assert entry.model["cost"]["output"] == record["cost"]["output"]
    assert entry.model["cost"]["cacheRead"] == record["cost"]["cache_read"]
    assert entry.model["contextWindow"] == record["limit"]["context"]
    assert entry.model["maxTokens"] == record["limit"]["output"]
    assert entry.provenance["contextWindow"] == "models.dev"
    # Compat — the five flags and every body-shaping field — is Pi's, untouched.
    assert entry.model["compat"] == pi["compat"]
    assert entry.flags[SYSTEM_MESSAGES] is True
    # models.dev leaves cacheWrite out: Pi's value stays and provenance says so.
    assert "cache_write" not in record["cost"]
    assert entry.model["cost"]["cacheWrite"] == pi["cost"]["cacheWrite"]
    assert "else pi" in entry.provenance["cost"]


def test_models_dev_tiers_become_pi_tiers(catalog: Catalog) -> None:
    entry = catalog.get("openai", "gpt-5.4")
    record = _md("openai", "gpt-5.4")
    assert entry is not None
    tier = record["cost"]["tiers"][0]
    assert entry.model["cost"]["tiers"][0]["inputTokensAbove"] == tier["tier"]["size"]
    assert entry.model["cost"]["tiers"][0]["input"] == tier["input"]
    assert set(entry.model["cost"]["tiers"][0]) == {
        "inputTokensAbove",
        "input",
        "output",
        "cacheRead",
        "cacheWrite",
    }


def test_modalities_come_from_models_dev(catalog: Catalog) -> None:
    entry = catalog.get("openai", "gpt-5.4")
    assert entry is not None
    assert entry.model["input"] == ["text", "image"]
    assert entry.provenance["input"] == "models.dev"


def test_renamed_provider_maps_but_lookalike_provider_does_not(catalog: Catalog) -> None:
    fireworks = catalog.get("fireworks", "accounts/fireworks/models/gpt-oss-120b")
    assert fireworks is not None
    assert fireworks.provenance["contextWindow"] == "models.dev"
    # openai-codex is a subscription endpoint, not the OpenAI API: no models.dev prices.
    codex = catalog.get("openai-codex", "gpt-5.5")
    assert codex is not None
    assert codex.provenance["cost"] == "pi"


def test_model_without_models_dev_record_keeps_pi_values(catalog: Catalog) -> None:
    entry = catalog.get("anthropic", "claude-opus-5-5")
    pi = Catalog(catalog.pi, None).get("anthropic", "claude-opus-5-5").model  # type: ignore[union-attr]
    assert entry is not None
    assert dict(entry.model) == dict(pi) and set(entry.provenance.values()) == {"pi"}


def test_models_dev_only_record_never_supplies_flags(catalog: Catalog) -> None:
    entry = catalog.get("deepseek", "deepseek-v4-flash")
    assert entry is not None
    assert entry.source == "models.dev" and not entry.in_pi
    assert "compat" not in entry.model
    assert not any(entry.flags.values())
    assert entry.model["api"] == "openai-completions"
    assert entry.model["baseUrl"] == "https://api.deepseek.com"


def test_a_models_dev_record_claiming_flags_is_ignored() -> None:
    """Even a refreshed models.dev file that carries flag-like fields cannot grant transport."""
    doc = {
        "deepseek": {
            "id": "deepseek",
            "models": {
                "deepseek-v4-flash": {
                    "id": "deepseek-v4-flash",
                    "name": "DeepSeek V4 Flash",
                    "last_updated": "2999-01-01",
                    "limit": {"context": 1000, "output": 100},
                    "cost": {"input": 9, "output": 9},
                    "modalities": {"input": ["text"], "output": ["text"]},
                    "compat": {name: True for name in TRANSPORT_FLAGS},
                    **{name: True for name in TRANSPORT_FLAGS},
                }
            },
        }
    }
    catalog = build_catalog(models_dev_cached=CatalogSource("fresh.json", orjson.dumps(doc)))
    assert catalog.problems == ()
    entry = catalog.get("deepseek", "deepseek-v4-flash")
    assert entry is not None
    assert entry.model["contextWindow"] == 1000  # the refreshed file is in use...
    assert not any(entry.flags.values())  # ...but grants nothing
    assert "compat" not in entry.model


def test_get(catalog: Catalog) -> None:
    entry = catalog.get("anthropic", "claude-opus-5-5")
    assert entry is not None and entry.key == "anthropic/claude-opus-5-5"
    assert catalog.get("anthropic", "no-such-model") is None
    assert catalog.get("no-such-provider", "x") is None
