"""The bundled Pi snapshot is pi-ai 1.0.3's published catalog, flags included, unaltered."""

from __future__ import annotations

from desktop.pi.catalog import TRANSPORT_FLAGS, Catalog
from desktop.pi.catalog.transport import SYSTEM_MESSAGES, TOOL_CHANGES


def _flagged(catalog: Catalog, provider: str) -> set[str]:
    return {e.model_id for e in catalog.flagged() if e.provider == provider}


def test_snapshot_is_pi_ai_1_0_3_with_every_chat_model(published: Catalog) -> None:
    assert published.pi.package == "@earendil-works/pi-ai"
    assert published.pi.version == "1.0.3"
    assert len(published.pi.models) > 1000
    assert {"anthropic", "openai", "openai-codex", "deepseek", "mistral", "openrouter"} <= {
        model["provider"] for model in published.pi.models
    }
    # Every model keeps the fields a projection reads, in pi-ai's JSON names.
    for published_model in published.pi.models:
        model = published.get(published_model["provider"], published_model["id"]).model  # type: ignore[union-attr]
        for name in ("id", "name", "api", "provider", "baseUrl", "reasoning", "input", "cost"):
            assert name in model, (model["provider"], model["id"], name)


def test_flagged_models_as_published_in_1_0_3(published: Catalog) -> None:
    assert _flagged(published, "anthropic") == {
        "claude-fable-5",
        "claude-fable-5-1",
        "claude-opus-4-8",
        "claude-opus-5",
        "claude-opus-5-5",
        "claude-sonnet-5-5",
    }
    assert _flagged(published, "openai-codex") == {
        "gpt-5.5",
        "gpt-5.6-luna",
        "gpt-5.6-sol",
        "gpt-5.6-terra",
        "gpt-6-astra",
        "gpt-6-luna",
        "gpt-6-sol",
        "gpt-6.1-sol",
    }
    assert _flagged(published, "deepseek") == {"deepseek-v4-pro"}
    assert _flagged(published, "mistral") == set()
    assert _flagged(published, "kimi-coding") == set()
    assert _flagged(published, "moonshotai") >= {"kimi-k3"}


def test_opus_5_5_has_native_tool_changes_and_sonnet_5_has_nothing(published: Catalog) -> None:
    opus = published.get("anthropic", "claude-opus-5-5")
    sonnet = published.get("anthropic", "claude-sonnet-5")
    assert opus is not None and sonnet is not None
    assert opus.flags[SYSTEM_MESSAGES] and opus.flags[TOOL_CHANGES]
    assert not any(sonnet.flags[flag] for flag in TRANSPORT_FLAGS)


def test_published_deepseek_flash_lacks_the_system_flag(published: Catalog) -> None:
    flash = published.get("deepseek", "deepseek-flash").model  # type: ignore[union-attr]
    assert flash["api"] == "openai-completions"
    assert flash["baseUrl"] == "https://api.deepseek.com"
    assert SYSTEM_MESSAGES not in flash.get("compat", {})
