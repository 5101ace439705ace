"""Capability status (design P3) follows the provider-support table and pi-ai's flag rules."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
import pytest

from desktop.pi.capability import capability_status
from desktop.pi.catalog import Catalog
from desktop.pi.catalog.catalog import Catalog as CatalogClass
from desktop.pi.catalog.pi_snapshot import parse_pi_catalog
from desktop.pi.catalog.transport import SYSTEM_MESSAGES, TOOL_ADDITIONS, TOOL_CHANGES
from desktop.pi.routes import resolve_model, route_from_string

FindModel = Callable[[dict[str, Any], str, str], dict[str, Any]]


@pytest.mark.parametrize(
    ("route", "delivery", "tool_path"),
    [
        ("anthropic/claude-opus-5-5", "native system sections", "native tool changes"),
        ("openai/gpt-5.5", "native system sections", "additional tools"),
        ("openai-codex/gpt-5.5", "native system sections", "tool search"),
        ("openai-codex/gpt-6-sol", "native system sections", "additional tools"),
        ("moonshotai/kimi-k3", "native system sections", "system-message tools"),
        ("deepseek/deepseek-v4-pro", "native system sections", "full list at request level"),
        ("deepseek/deepseek-flash", "native system sections", "full list at request level"),
        ("github-copilot/claude-opus-5", "native system sections", "full list at request level"),
        ("anthropic/claude-sonnet-5", "folded", "full list at request level"),
        ("openai-codex/gpt-5.3-codex-spark", "folded", "full list at request level"),
        ("mistral/mistral-large-latest", "folded", "full list at request level"),
        ("google/gemini-2.5-pro", "folded", "full list at request level"),
    ],
)
def test_status_table(catalog: Catalog, route: str, delivery: str, tool_path: str) -> None:
    status = capability_status(resolve_model(route_from_string(route), catalog))
    assert (status.delivery, status.tool_path) == (delivery, tool_path)


def test_fallback_delivery_choice_only_affects_unflagged_routes(catalog: Catalog) -> None:
    flagged = resolve_model(route_from_string("anthropic/claude-opus-5-5"), catalog)
    plain = resolve_model(route_from_string("anthropic/claude-sonnet-5"), catalog)
    assert capability_status(flagged, "attributed").delivery == "native system sections"
    assert capability_status(plain, "attributed").delivery == "attributed user updates"
    assert capability_status(plain, "folded").delivery == "folded"
    assert "labelled user message" in capability_status(plain, "attributed").explanation
    assert "leading system prompt" in capability_status(plain, "folded").explanation


def test_unpatched_flash_is_folded(published: Catalog) -> None:
    status = capability_status(resolve_model(route_from_string("deepseek/deepseek-flash"), published))
    assert status.delivery == "folded"


def _catalog_with(
    pi_doc: dict[str, Any], find_model: FindModel, key: str, compat: dict[str, bool]
) -> Catalog:
    """The bundled Pi catalog with ``compat`` set on the model ``key`` ("provider/id"), unpatched."""
    find_model(pi_doc, *key.split("/", 1)).setdefault("compat", {}).update(compat)
    return CatalogClass(parse_pi_catalog(orjson.dumps(pi_doc), "edited.json"), None, patches=())


@pytest.mark.parametrize(
    ("key", "compat", "delivery"),
    [
        # Tool flags need the system flag.
        ("anthropic/claude-opus-5-5", {SYSTEM_MESSAGES: False, TOOL_CHANGES: True}, "folded"),
        # supportsMidConvoToolAdditions is a Completions flag: it does nothing on Anthropic Messages.
        (
            "anthropic/claude-sonnet-5",
            {SYSTEM_MESSAGES: True, TOOL_ADDITIONS: True},
            "native system sections",
        ),
    ],
)
def test_tool_flags_need_the_system_flag_and_their_own_api(
    pi_doc: dict[str, Any], find_model: FindModel, key: str, compat: dict[str, bool], delivery: str
) -> None:
    catalog = _catalog_with(pi_doc, find_model, key, compat)
    status = capability_status(resolve_model(route_from_string(key), catalog))
    assert (status.delivery, status.tool_path) == (delivery, "full list at request level")


def test_google_always_folds_even_when_flagged(pi_doc: dict[str, Any], find_model: FindModel) -> None:
    catalog = _catalog_with(pi_doc, find_model, "google/gemini-2.5-pro", {SYSTEM_MESSAGES: True})
    resolved = resolve_model(route_from_string("google/gemini-2.5-pro"), catalog)
    assert resolved.flags[SYSTEM_MESSAGES]
    status = capability_status(resolved, "attributed")
    assert status.delivery == "attributed user updates"
    assert "no mid-conversation system path" in status.explanation
