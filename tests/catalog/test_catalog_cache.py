"""Catalog refresh over real loopback HTTP into a real cache directory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from desktop.host import catalog_cache
from desktop.host.catalog_cache import CatalogRefreshError, cache_path, load_catalog, refresh_catalog
from desktop.pi.catalog.pi_snapshot import bundled_bytes
from tests.catalog.conftest import static_server

FRESH_MODELS_DEV = orjson.dumps(
    {
        "anthropic": {
            "id": "anthropic",
            "models": {
                "claude-opus-4-7": {
                    "id": "claude-opus-4-7",
                    "name": "Claude Opus 4.7",
                    "last_updated": "2999-01-01",
                    "limit": {"context": 555_000, "output": 64_000},
                    "cost": {"input": 7, "output": 35, "cache_read": 0.7, "cache_write": 8.75},
                    "modalities": {"input": ["text", "image"], "output": ["text"]},
                }
            },
        }
    }
)
BAD_MODELS_DEV = orjson.dumps({"anthropic": {"models": {"x": {"limit": {"context": "huge"}}}}})


@pytest.fixture
def server() -> Iterator[str]:
    pi_doc = orjson.loads(bundled_bytes())
    pi_doc["generatedAt"] = "2999-01-01T00:00:00Z"
    pi_doc["source"]["version"] = "9.9.9"
    routes = {
        "/api.json": FRESH_MODELS_DEV,
        "/bad.json": BAD_MODELS_DEV,
        "/pi_catalog.json": orjson.dumps(pi_doc),
    }
    with static_server(routes) as url:
        yield url


def test_refresh_validates_caches_and_is_used(server: str, tmp_path: Path) -> None:
    result = refresh_catalog("models.dev", f"{server}/api.json", cache_dir=tmp_path)
    assert result.path == cache_path("models.dev", tmp_path) and result.path.read_bytes() == FRESH_MODELS_DEV
    assert "newest record 2999-01-01" in result.summary
    catalog = load_catalog(tmp_path)
    assert catalog.problems == ()
    opus = catalog.get("anthropic", "claude-opus-4-7")
    assert opus is not None and opus.model["contextWindow"] == 555_000 and opus.model["cost"]["input"] == 7


def test_refresh_pi_catalog_from_configured_url(
    server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(catalog_cache.PI_CATALOG_URL_ENV, f"{server}/pi_catalog.json")
    result = refresh_catalog("pi", cache_dir=tmp_path)
    assert "9.9.9" in result.summary
    assert load_catalog(tmp_path).pi.version == "9.9.9"


def test_invalid_download_keeps_the_cache(server: str, tmp_path: Path) -> None:
    refresh_catalog("models.dev", f"{server}/api.json", cache_dir=tmp_path)
    with pytest.raises(CatalogRefreshError) as info:
        refresh_catalog("models.dev", f"{server}/bad.json", cache_dir=tmp_path)
    assert f"{server}/bad.json" in str(info.value) and 'anthropic.models["x"].limit.context' in str(
        info.value
    )
    assert cache_path("models.dev", tmp_path).read_bytes() == FRESH_MODELS_DEV


def test_http_errors_are_clear(server: str, tmp_path: Path) -> None:
    with pytest.raises(CatalogRefreshError, match="HTTP 404"):
        refresh_catalog("models.dev", f"{server}/missing.json", cache_dir=tmp_path)
    with pytest.raises(CatalogRefreshError, match="could not download"):
        refresh_catalog("models.dev", "http://127.0.0.1:9/api.json", cache_dir=tmp_path, timeout=2)
    assert not cache_path("models.dev", tmp_path).exists()


def test_pi_refresh_needs_a_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(catalog_cache.PI_CATALOG_URL_ENV, raising=False)
    with pytest.raises(CatalogRefreshError, match=catalog_cache.PI_CATALOG_URL_ENV):
        refresh_catalog("pi", cache_dir=tmp_path)


def test_corrupted_cache_file_is_reported_and_bundled_used(tmp_path: Path) -> None:
    path = cache_path("pi", tmp_path)
    path.parent.mkdir(parents=True)
    path.write_bytes(b'{"format": "pi-desktop/pi-catalog", "v": 1, "source": {"version": 3}}')
    catalog = load_catalog(tmp_path)
    assert catalog.pi.version == "1.0.3"
    assert str(path) in catalog.problems[0] and "source.version" in catalog.problems[0]


def test_offline_without_cache_uses_bundled(tmp_path: Path) -> None:
    catalog = load_catalog(tmp_path)
    assert catalog.problems == () and catalog.pi.version == "1.0.3"
    assert catalog.sources.models_dev_origin.startswith("bundled")


def test_default_cache_dir_honours_the_data_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PI_DESKTOP_DATA_DIR", str(tmp_path))
    assert cache_path("models.dev") == tmp_path / "cache" / "catalogs" / "models_dev_api.json"
    assert catalog_cache.catalog_url("models.dev") == catalog_cache.DEFAULT_MODELS_DEV_URL
