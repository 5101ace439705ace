"""The deepseek-flash correction: one removable patch on the single Pi catalog (design M3)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from desktop.pi.catalog import (
    DEEPSEEK_FLASH_SYSTEM_MESSAGES,
    DEFAULT_PATCHES,
    Catalog,
    build_catalog,
)
from desktop.pi.catalog.catalog import Catalog as CatalogClass
from desktop.pi.catalog.patches import apply_patches
from desktop.pi.catalog.pi_snapshot import parse_pi_catalog
from desktop.pi.catalog.transport import (
    ADDITIONAL_TOOLS,
    SYSTEM_MESSAGES,
    TOOL_ADDITIONS,
    TOOL_CHANGES,
    TOOL_SEARCH,
    transport_flags,
)

FindModel = Callable[[dict[str, Any], str, str], dict[str, Any]]


def test_patch_is_in_the_default_set_and_names_its_exact_binding() -> None:
    assert DEEPSEEK_FLASH_SYSTEM_MESSAGES in DEFAULT_PATCHES
    binding = DEEPSEEK_FLASH_SYSTEM_MESSAGES.binding
    assert (binding.provider, binding.model_id, binding.api, binding.base_url) == (
        "deepseek",
        "deepseek-flash",
        "openai-completions",
        "https://api.deepseek.com",
    )
    assert dict(DEEPSEEK_FLASH_SYSTEM_MESSAGES.compat) == {SYSTEM_MESSAGES: True}


def test_patch_sets_only_the_system_flag_on_the_official_flash(catalog: Catalog, published: Catalog) -> None:
    patched = catalog.get("deepseek", "deepseek-flash").model  # type: ignore[union-attr]
    original = published.get("deepseek", "deepseek-flash").model  # type: ignore[union-attr]
    assert patched["compat"][SYSTEM_MESSAGES] is True
    for flag in (TOOL_ADDITIONS, TOOL_CHANGES, ADDITIONAL_TOOLS, TOOL_SEARCH):
        assert flag not in patched["compat"]
    rest = {k: v for k, v in patched["compat"].items() if k != SYSTEM_MESSAGES}
    assert rest == original["compat"]
    assert {k: v for k, v in patched.items() if k != "compat"} == {
        k: v for k, v in original.items() if k != "compat"
    }
    assert catalog.get("deepseek", "deepseek-flash").patches == (DEEPSEEK_FLASH_SYSTEM_MESSAGES.name,)  # type: ignore[union-attr]


def test_patch_touches_exactly_one_model(catalog: Catalog, published: Catalog) -> None:
    """Not openrouter's or opencode's deepseek flash, not deepseek-v4-pro, nothing else."""
    changed = [
        f"{m['provider']}/{m['id']}"
        for m in published.pi.models
        if catalog.get(m["provider"], m["id"]) != published.get(m["provider"], m["id"])
    ]
    assert changed == ["deepseek/deepseek-flash"]
    for provider, model_id in [
        ("openrouter", "deepseek/deepseek-v4-flash"),
        ("openrouter", "~deepseek/deepseek-flash-latest"),
        ("opencode", "deepseek-v4-flash"),
        ("fireworks", "accounts/fireworks/routers/deepseek-flash-latest"),
    ]:
        entry = catalog.get(provider, model_id)
        assert entry is not None and not entry.flags[SYSTEM_MESSAGES], (provider, model_id)
        assert entry.patches == ()


def test_removing_the_patch_restores_pi_flags_exactly(published: Catalog) -> None:
    for model in published.pi.models:
        assert published.get(model["provider"], model["id"]).flags == transport_flags(model)  # type: ignore[union-attr]
    entry = published.get("deepseek", "deepseek-flash")
    assert entry is not None and not entry.flags[SYSTEM_MESSAGES] and entry.patches == ()


def test_patch_is_a_no_op_once_pi_publishes_the_flag(pi_doc: dict[str, Any], find_model: FindModel) -> None:
    find_model(pi_doc, "deepseek", "deepseek-flash")["compat"][SYSTEM_MESSAGES] = True
    snapshot = parse_pi_catalog(orjson.dumps(pi_doc), "upgraded.json")
    models, outcomes = apply_patches(snapshot.models, DEFAULT_PATCHES)
    assert [o.status for o in outcomes] == ["already published"]
    assert "remove the patch" in outcomes[0].describe()
    assert all(a is b for a, b in zip(models, snapshot.models, strict=True))


def test_patch_does_not_follow_the_model_to_another_endpoint(
    pi_doc: dict[str, Any], find_model: FindModel
) -> None:
    find_model(pi_doc, "deepseek", "deepseek-flash")["baseUrl"] = "https://relay.example/deepseek"
    snapshot = parse_pi_catalog(orjson.dumps(pi_doc), "relay.json")
    assert [o.status for o in apply_patches(snapshot.models, DEFAULT_PATCHES)[1]] == ["binding not found"]
    catalog = CatalogClass(snapshot, None)
    flash = catalog.get("deepseek", "deepseek-flash")
    assert flash is not None and SYSTEM_MESSAGES not in flash.model["compat"] and flash.patches == ()


def test_build_catalog_patches_option() -> None:
    assert build_catalog(patches=()).get("deepseek", "deepseek-flash").flags[SYSTEM_MESSAGES] is False  # type: ignore[union-attr]
    assert build_catalog().get("deepseek", "deepseek-flash").flags[SYSTEM_MESSAGES] is True  # type: ignore[union-attr]
