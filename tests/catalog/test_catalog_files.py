"""Refreshed catalog files: used when valid and newer; an invalid one names the file and field."""

from __future__ import annotations

import gzip
from collections.abc import Callable
from typing import Any

import orjson
import pytest

from desktop.pi.catalog import CatalogFileError, CatalogSource, build_catalog
from desktop.pi.catalog.catalog import bundled_models_dev
from desktop.pi.catalog.models_dev import parse_models_dev
from desktop.pi.catalog.pi_snapshot import parse_pi_catalog
from desktop.pi.catalog.transport import SYSTEM_MESSAGES

FindModel = Callable[[dict[str, Any], str, str], dict[str, Any]]


def _index_of(doc: dict[str, Any], provider: str, model_id: str) -> int:
    for i, model in enumerate(doc["models"]):
        if model["provider"] == provider and model["id"] == model_id:
            return i
    raise AssertionError(model_id)


def test_invalid_flag_names_file_and_field(pi_doc: dict[str, Any]) -> None:
    index = _index_of(pi_doc, "anthropic", "claude-opus-5-5")
    pi_doc["models"][index]["compat"]["supportsMidConvoToolChanges"] = "yes"
    with pytest.raises(CatalogFileError) as info:
        parse_pi_catalog(orjson.dumps(pi_doc), "/cache/catalogs/pi_catalog.json")
    assert info.value.file == "/cache/catalogs/pi_catalog.json"
    assert info.value.field == f"models[{index}].compat.supportsMidConvoToolChanges"
    assert "/cache/catalogs/pi_catalog.json" in str(info.value)
    assert f"models[{index}].compat.supportsMidConvoToolChanges" in str(info.value)


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda d: d.update(format="something-else"), "format"),
        (lambda d: d.update(v=2), "v"),
        (lambda d: d.update(models=[]), "models"),
        (lambda d: d.update(generatedAt="yesterday"), "generatedAt"),
        (lambda d: d["models"][0].pop("api"), "models[0].api"),
        (lambda d: d["models"][1]["cost"].update(input="free"), "models[1].cost.input"),
        (lambda d: d["models"][2].update(input=["text", "audio"]), "models[2].input"),
        (lambda d: d["models"][3].update(contextWindow=-1), "models[3].contextWindow"),
        (lambda d: d["models"].append(dict(d["models"][0])), "models[{n}].id"),
    ],
)
def test_pi_catalog_validation(
    pi_doc: dict[str, Any], edit: Callable[[dict[str, Any]], Any], field: str
) -> None:
    edit(pi_doc)
    with pytest.raises(CatalogFileError) as info:
        parse_pi_catalog(orjson.dumps(pi_doc), "bad.json")
    assert info.value.field == field.format(n=len(pi_doc["models"]) - 1)


def test_not_json_and_bad_gzip() -> None:
    with pytest.raises(CatalogFileError, match="not valid JSON"):
        parse_pi_catalog(b"{nope", "x.json")
    with pytest.raises(CatalogFileError, match="gzip"):
        parse_models_dev(b"\x1f\x8b\x08garbage", "x.json.gz")


def test_models_dev_validation_names_the_field() -> None:
    doc = {"anthropic": {"id": "anthropic", "models": {"m-1": {"id": "m-1", "limit": {"context": "big"}}}}}
    with pytest.raises(CatalogFileError) as info:
        parse_models_dev(orjson.dumps(doc), "api.json")
    assert info.value.field == 'anthropic.models["m-1"].limit.context'


def test_invalid_cached_file_falls_back_to_bundled(pi_doc: dict[str, Any]) -> None:
    pi_doc["generatedAt"] = "2999-01-01T00:00:00Z"
    pi_doc["models"][5]["compat"] = "broken"
    bad_md = orjson.dumps({"openai": {"models": {"gpt-x": {"limit": {"output": "lots"}}}}})
    catalog = build_catalog(
        pi_cached=CatalogSource("/data/cache/catalogs/pi_catalog.json", orjson.dumps(pi_doc)),
        models_dev_cached=CatalogSource("/data/cache/catalogs/models_dev_api.json", bad_md),
    )
    assert catalog.pi.origin == "bundled pi_catalog.json"
    assert catalog.models_dev is not None and catalog.models_dev.origin.startswith("bundled")
    assert len(catalog.problems) == 2
    assert "/data/cache/catalogs/pi_catalog.json" in catalog.problems[0]
    assert "models[5].compat" in catalog.problems[0]
    assert (
        "models_dev_api.json" in catalog.problems[1]
        and 'openai.models["gpt-x"].limit.output' in catalog.problems[1]
    )
    assert catalog.get("anthropic", "claude-opus-5-5") is not None


def test_newer_cached_pi_catalog_is_used(pi_doc: dict[str, Any], find_model: FindModel) -> None:
    pi_doc["generatedAt"] = "2999-01-01T00:00:00Z"
    pi_doc["source"]["version"] = "9.9.9"
    find_model(pi_doc, "deepseek", "deepseek-flash")["compat"]["supportsMidConvoSystemMessages"] = True
    catalog = build_catalog(pi_cached=CatalogSource("fresh.json.gz", gzip.compress(orjson.dumps(pi_doc))))
    assert catalog.problems == ()
    assert catalog.pi.version == "9.9.9" and catalog.sources.pi_origin == "fresh.json.gz"
    # The upgraded catalog carries the correction itself, so the patch applies nowhere.
    flash = catalog.get("deepseek", "deepseek-flash")
    assert flash is not None and flash.flags[SYSTEM_MESSAGES] and flash.patches == ()


def test_older_cached_pi_catalog_is_ignored(pi_doc: dict[str, Any]) -> None:
    pi_doc["generatedAt"] = "2020-01-01T00:00:00Z"
    pi_doc["source"]["version"] = "0.1.0"
    catalog = build_catalog(pi_cached=CatalogSource("old.json", orjson.dumps(pi_doc)))
    assert catalog.pi.version == "1.0.3"
    assert catalog.problems == () and "not newer" in catalog.notes[0]


def test_newer_models_dev_file_supplies_prices() -> None:
    bundled = bundled_models_dev()
    doc = {pid: dict(p) for pid, p in bundled.providers.items()}
    doc["anthropic"] = dict(doc["anthropic"], models=dict(doc["anthropic"]["models"]))
    record = dict(doc["anthropic"]["models"]["claude-opus-4-7"])
    record["cost"] = dict(record["cost"], input=123.0)
    record["last_updated"] = "2999-12-31"
    doc["anthropic"]["models"]["claude-opus-4-7"] = record
    catalog = build_catalog(models_dev_cached=CatalogSource("api.json", orjson.dumps(doc)))
    assert catalog.sources.models_dev_stamp == "2999-12-31"
    assert catalog.get("anthropic", "claude-opus-4-7").model["cost"]["input"] == 123.0  # type: ignore[union-attr]
    stale = build_catalog(models_dev_cached=CatalogSource("api.json", orjson.dumps(dict(bundled.providers))))
    assert stale.sources.models_dev_origin.startswith("bundled") and "not newer" in stale.notes[0]


def test_the_bundled_snapshots_pass_every_check_the_start_skips() -> None:
    """Each start reads the bundled snapshots without the per-entry checks (the status budget), because
    they ship with the app: this is where they are checked, entry by entry, as a refreshed
    copy would be."""
    from desktop.pi.catalog import models_dev, pi_snapshot

    pi = pi_snapshot.parse_pi_catalog(pi_snapshot.bundled_bytes(), "bundled", check=True)
    md = models_dev.parse_models_dev(models_dev.bundled_bytes(), "bundled", check=True)
    assert len(pi.models) > 100 and len(md.providers) > 10
    trusted = bundled_models_dev()
    assert trusted.stamp == md.stamp and trusted.providers == md.providers
