"""Routes (design M2): flags only for the exact published binding; everything else falls back."""

from __future__ import annotations

import orjson
import pytest

from desktop.pi.capability import capability_status
from desktop.pi.catalog import Catalog, RouteError
from desktop.pi.catalog.transport import SYSTEM_MESSAGES, TOOL_CHANGES, TRANSPORT_FLAGS
from desktop.pi.routes import (
    Account,
    Route,
    emulator_route,
    resolve_model,
    route_from_string,
)

EMULATOR = "http://127.0.0.1:8765"


def _no_flags_in(model: dict[str, object]) -> bool:
    compat = model.get("compat") or {}
    assert isinstance(compat, dict)
    return not any(flag in compat for flag in TRANSPORT_FLAGS)


def test_exact_binding_gets_pi_flags(catalog: Catalog) -> None:
    resolved = resolve_model(route_from_string("anthropic/claude-opus-5-5"), catalog)
    assert resolved.transport_verified and resolved.fallback_cause is None
    assert resolved.model["compat"][SYSTEM_MESSAGES] is True
    assert resolved.model["compat"][TOOL_CHANGES] is True
    assert resolved.model["baseUrl"] == "https://api.anthropic.com"
    assert "exact Pi binding" in resolved.reason
    assert capability_status(resolved).delivery == "native system sections"


def test_exact_binding_without_flags_stays_unflagged(catalog: Catalog) -> None:
    resolved = resolve_model(route_from_string("anthropic/claude-sonnet-5"), catalog)
    assert resolved.transport_verified
    assert not any(resolved.flags.values())
    status = capability_status(resolved)
    assert status.delivery == "folded"
    assert "Pi publishes no supportsMidConvoSystemMessages" in status.explanation


def test_alias_gets_the_fallback(catalog: Catalog) -> None:
    resolved = resolve_model(route_from_string("anthropic/claude-opus-5.5"), catalog)
    assert not resolved.transport_verified
    assert resolved.fallback_cause == "alias"
    assert "claude-opus-5-5" in resolved.reason
    assert _no_flags_in(resolved.model)
    status = capability_status(resolved, "attributed")
    assert status.delivery == "attributed user updates"
    assert "Aliases do not inherit" in status.explanation


def test_relay_by_endpoint_gets_the_fallback(catalog: Catalog) -> None:
    route = Route("anthropic", "claude-opus-5-5", base_url="https://openrouter.ai/api/v1")
    resolved = resolve_model(route, catalog)
    assert resolved.fallback_cause == "relay"
    assert not resolved.transport_verified
    assert _no_flags_in(resolved.model)
    assert resolved.model["baseUrl"] == "https://openrouter.ai/api/v1"
    assert "relay" in capability_status(resolved).explanation


def test_same_model_via_openrouter_gets_no_flags(catalog: Catalog) -> None:
    resolved = resolve_model(route_from_string("openrouter/anthropic/claude-opus-5.5"), catalog)
    # That is openrouter's own published binding: verified, and Pi flags nothing there.
    assert resolved.transport_verified
    assert not any(resolved.flags.values())
    assert "anthropic/claude-opus-5-5" in resolved.reason  # names where the flags really are
    assert capability_status(resolved).delivery == "folded"
    relayed_flash = resolve_model(route_from_string("openrouter/deepseek/deepseek-v4-flash"), catalog)
    assert not relayed_flash.flags[SYSTEM_MESSAGES]


def test_endpoint_override_gets_the_fallback_and_keeps_other_compat(catalog: Catalog) -> None:
    account = Account.make("work", api_key_ref="env:DEEPSEEK_API_KEY", base_url="https://proxy.example/v1")
    resolved = resolve_model(Route("deepseek", "deepseek-flash", account=account), catalog)
    assert resolved.fallback_cause == "endpoint override"
    assert resolved.model["baseUrl"] == "https://proxy.example/v1"
    assert resolved.published.base_url == "https://api.deepseek.com"  # retained before the override
    assert _no_flags_in(resolved.model)
    assert resolved.model["compat"]["thinkingFormat"] == "deepseek"
    assert "overrides the endpoint" in capability_status(resolved).explanation


def test_override_to_the_same_endpoint_is_not_an_override(catalog: Catalog) -> None:
    account = Account.make(base_url="https://API.deepseek.com/")
    resolved = resolve_model(Route("deepseek", "deepseek-flash", account=account), catalog)
    assert resolved.transport_verified
    assert resolved.flags[SYSTEM_MESSAGES]


def test_unknown_model_gets_the_fallback(catalog: Catalog) -> None:
    resolved = resolve_model(route_from_string("deepseek/deepseek-imaginary"), catalog)
    assert resolved.fallback_cause == "unknown model"
    assert resolved.source == "unknown"
    assert resolved.model["api"] == "openai-completions"
    assert resolved.model["baseUrl"] == "https://api.deepseek.com"
    assert _no_flags_in(resolved.model)
    assert "neither Pi nor models.dev" in capability_status(resolved).explanation


def test_unknown_provider_needs_api_and_endpoint(catalog: Catalog) -> None:
    with pytest.raises(RouteError, match="give the route an api and base_url"):
        resolve_model(route_from_string("acme/model-1"), catalog)
    resolved = resolve_model(
        Route("acme", "model-1", api="openai-completions", base_url="https://acme.example/v1"), catalog
    )
    assert resolved.fallback_cause == "unknown model"
    assert resolved.model["baseUrl"] == "https://acme.example/v1"


def test_models_dev_only_record_gets_the_fallback(catalog: Catalog) -> None:
    resolved = resolve_model(route_from_string("deepseek/deepseek-v4-flash"), catalog)
    assert resolved.fallback_cause == "models.dev-only record"
    assert resolved.source == "models.dev"
    assert not any(resolved.flags.values())
    assert resolved.model["contextWindow"] > 0
    assert "only from models.dev" in capability_status(resolved).explanation


def test_api_mismatch_gets_the_fallback(catalog: Catalog) -> None:
    resolved = resolve_model(Route("deepseek", "deepseek-v4-pro", api="anthropic-messages"), catalog)
    assert resolved.fallback_cause == "api mismatch"
    assert resolved.model["api"] == "anthropic-messages"
    assert _no_flags_in(resolved.model)


def test_emulator_route_is_offline_and_unverified_by_default(catalog: Catalog) -> None:
    route = route_from_string("emulator/anthropic/claude-opus-5-5", emulator=EMULATOR)
    assert route.offline and not route.emulated
    assert "offline emulator" in route.label()
    resolved = resolve_model(route, catalog)
    assert resolved.fallback_cause == "offline emulator"
    assert resolved.model["baseUrl"] == f"{EMULATOR}/anthropic"
    assert _no_flags_in(resolved.model)
    assert resolved.journal_route()["emulator"] is True


def test_emulated_route_stands_in_for_the_official_endpoint(catalog: Catalog) -> None:
    resolved = resolve_model(emulator_route("openai/gpt-5.5", EMULATOR, emulated=True), catalog)
    official = resolve_model(route_from_string("openai/gpt-5.5"), catalog)
    assert resolved.transport_verified and resolved.offline
    assert resolved.model["baseUrl"] == f"{EMULATOR}/openai/v1"
    assert resolved.flags == official.flags
    assert {k: v for k, v in resolved.model.items() if k != "baseUrl"} == {
        k: v for k, v in official.model.items() if k != "baseUrl"
    }
    assert "stands in" in resolved.reason and "stands in" in resolved.route.label()


def test_emulated_alias_still_gets_the_fallback(catalog: Catalog) -> None:
    resolved = resolve_model(emulator_route("anthropic/claude-opus-5.5", EMULATOR, emulated=True), catalog)
    assert resolved.fallback_cause == "alias"


def test_emulator_must_be_loopback() -> None:
    with pytest.raises(RouteError, match="loopback"):
        emulator_route("anthropic/claude-opus-5-5", "http://emulator.example:8765")
    with pytest.raises(RouteError, match="emulator"):
        route_from_string("emulator/anthropic/claude-opus-5-5")


def test_route_strings() -> None:
    route = route_from_string("openrouter/openai/gpt-5.5")
    assert (route.provider, route.model) == ("openrouter", "openai/gpt-5.5")
    for bad in ["claude-opus-5-5", "/x", "anthropic/", ""]:
        with pytest.raises(RouteError, match="provider/model-id"):
            route_from_string(bad)


def test_account_headers_merge_and_no_key_reference_leaks(catalog: Catalog) -> None:
    account = Account.make(
        "team", api_key_ref="keyring:pi-desktop/github", headers={"user-agent": "pi-desktop"}
    )
    resolved = resolve_model(Route("github-copilot", "claude-opus-5", account=account), catalog)
    headers = resolved.model["headers"]
    assert headers["user-agent"] == "pi-desktop"
    assert "User-Agent" not in headers  # replaced case-insensitively, like HTTP does
    assert "Copilot-Integration-Id" in headers
    assert b"keyring:" not in orjson.dumps(resolved.model)
    assert b"keyring:" not in orjson.dumps(resolved.journal_route())


def test_resolving_never_mutates_the_catalog(catalog: Catalog) -> None:
    before = orjson.dumps(catalog.get("deepseek", "deepseek-flash").model)  # type: ignore[union-attr]
    resolve_model(
        Route("deepseek", "deepseek-flash", account=Account.make(base_url="https://x.example")), catalog
    )
    assert orjson.dumps(catalog.get("deepseek", "deepseek-flash").model) == before  # type: ignore[union-attr]


def test_route_json_round_trip() -> None:
    route = emulator_route(
        Route(
            "deepseek", "deepseek-flash", account=Account.make("a", api_key_ref="env:K", headers={"x": "1"})
        ),
        EMULATOR,
        emulated=True,
    )
    assert Route.from_json(orjson.loads(orjson.dumps(route.to_json()))) == route
    with pytest.raises(RouteError, match="model"):
        Route.from_json({"provider": "deepseek"})


def test_journal_route_shape(catalog: Catalog) -> None:
    resolved = resolve_model(route_from_string("deepseek/deepseek-flash"), catalog)
    assert resolved.journal_route() == {
        "provider": "deepseek",
        "model": "deepseek-flash",
        "api": "openai-completions",
        "baseUrl": "https://api.deepseek.com",
        "account": "default",
    }
