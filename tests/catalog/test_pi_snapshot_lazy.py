"""The bundled Pi catalog is decoded one provider at a time (the status budget, docs/architecture.md).

A start resolves one route and reads one provider's models, so the bundled file, which holds
one model a line, is not decoded whole: ``BundledModels`` decodes the lines that name the
provider. These tests hold the shortcut to the full decode on the real bundled file, catalog
lookups included, and show that a file in any other form is decoded whole.
"""

from __future__ import annotations

import orjson
import pytest

from desktop.pi.catalog import pi_snapshot
from desktop.pi.catalog.catalog import Catalog, bundled_models_dev, bundled_pi
from desktop.pi.catalog.pi_snapshot import BundledModels, bundled_snapshot, parse_pi_catalog


@pytest.fixture(scope="module")
def full() -> pi_snapshot.PiCatalogSnapshot:
    return parse_pi_catalog(pi_snapshot.bundled_bytes(), "bundled", check=False)


def test_every_bundled_provider_decoded_alone_equals_the_full_decode(
    full: pi_snapshot.PiCatalogSnapshot,
) -> None:
    lazy = bundled_snapshot(pi_snapshot.bundled_bytes(), "bundled")
    assert isinstance(lazy.models, BundledModels)
    assert lazy._replace(models=()) == full._replace(models=())
    providers = list(dict.fromkeys(model["provider"] for model in full.models))
    assert len(providers) > 10
    for provider in providers:
        mine = [model for model in full.models if model["provider"] == provider]
        assert lazy.models.of_provider(provider) == mine, provider
    assert lazy.models._whole is None
    assert lazy.models.of_provider("no-such-provider") == []
    assert list(lazy.models) == list(full.models) and len(lazy.models) == len(full.models)
    assert lazy.models[3] == full.models[3]


def test_the_catalog_answers_the_same_from_one_provider_as_from_all(
    full: pi_snapshot.PiCatalogSnapshot,
) -> None:
    """Every lookup a route resolution makes, on every bundled provider, against a catalog
    built from the whole decode; ``status`` of an Anthropic route decodes nothing else."""
    whole = Catalog(full, bundled_models_dev())
    keys = [(model["provider"], model["id"]) for model in full.models]
    for provider in dict.fromkeys(p for p, _ in keys):
        lazy = Catalog(bundled_snapshot(pi_snapshot.bundled_bytes(), "bundled"), bundled_models_dev())
        assert lazy.usual_binding(provider) == whole.usual_binding(provider)
        for p, mid in keys:
            if p == provider:
                assert lazy.get(p, mid) == whole.get(p, mid)
                assert lazy.aliases_of(p, mid) == whole.aliases_of(p, mid)
        assert lazy.get(provider, "no-such-model") == whole.get(provider, "no-such-model")
        assert lazy.pi._replace(models=()) == whole.pi._replace(models=())
        assert lazy.pi.models._whole is None  # type: ignore[attr-defined]
    lazy = Catalog(bundled_snapshot(pi_snapshot.bundled_bytes(), "bundled"), bundled_models_dev())
    assert lazy.get("deepseek", "deepseek-flash") == whole.get("deepseek", "deepseek-flash")
    assert lazy.flagged() == whole.flagged()


def test_the_bundled_catalog_a_start_uses_is_the_lazy_one() -> None:
    assert isinstance(bundled_pi().models, BundledModels)


def test_a_file_in_another_form_is_decoded_whole(full: pi_snapshot.PiCatalogSnapshot) -> None:
    """A gzipped or single-line copy (as a refresh downloads) is parsed as before."""
    single = orjson.dumps(orjson.loads(pi_snapshot.bundled_bytes()))
    parsed = bundled_snapshot(single, "bundled")
    assert isinstance(parsed.models, tuple) and parsed == full
    trailing = pi_snapshot.bundled_bytes().replace(b"\n]}\n", b"\n]}")
    parsed = bundled_snapshot(trailing, "bundled")
    assert isinstance(parsed.models, tuple) and parsed == full
