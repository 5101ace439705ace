"""The bundled models.dev snapshot is decoded one provider at a time (the status budget, docs/architecture.md).

A start resolves one route and reads one provider's records, so the 2 MB document is not
decoded whole: ``BundledProviders`` finds the provider's object by its key and decodes only
that. These tests hold the shortcut to the full decode on the real bundled file, and show
that wherever the text leaves any doubt the whole document is decoded instead.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from desktop.pi.catalog import models_dev
from desktop.pi.catalog.models_dev import BundledProviders, bundled_snapshot, parse_models_dev


@pytest.fixture(scope="module")
def full() -> models_dev.ModelsDevSnapshot:
    return parse_models_dev(models_dev.bundled_bytes(), "bundled", check=False)


def test_every_bundled_provider_decoded_alone_equals_the_full_decode(
    full: models_dev.ModelsDevSnapshot,
) -> None:
    lazy = bundled_snapshot(models_dev.bundled_bytes(), "bundled")
    assert lazy.stamp == full.stamp and lazy.stamp > "2025"
    providers = lazy.providers
    assert isinstance(providers, BundledProviders)
    for name, provider in full.providers.items():
        assert providers[name] == provider, name
    # The providers routes use most are each found without decoding the whole document.
    lazy = bundled_snapshot(models_dev.bundled_bytes(), "bundled")
    for name in ("anthropic", "openai", "google", "mistral", "deepseek", "openrouter", "amazon-bedrock"):
        assert lazy.providers[name] == full.providers[name], name
    assert lazy.providers._whole is None  # type: ignore[attr-defined]
    record = lazy.record("anthropic", "claude-opus-4-1")
    assert record is not None and record == full.record("anthropic", "claude-opus-4-1")
    assert lazy.record("together", "no-such-model") is None
    assert lazy.record("together", "no-such-model") == full.record("together", "no-such-model")


def test_a_walk_over_every_provider_decodes_the_whole_document(full: models_dev.ModelsDevSnapshot) -> None:
    lazy = bundled_snapshot(models_dev.bundled_bytes(), "bundled")
    assert dict(lazy.providers) == dict(full.providers)
    assert len(lazy.providers) == len(full.providers)


def _doc(**providers: Any) -> bytes:
    return orjson.dumps(providers)


def _provider(pid: str, **models: Any) -> dict[str, Any]:
    return {"id": pid, "models": models}


def test_a_key_spelled_twice_is_read_from_the_whole_document() -> None:
    """A model named like a provider: the text alone cannot tell which object is the provider."""
    doc = _doc(
        other=_provider("other", acme={"id": "acme", "last_updated": "2024-01-01"}),
        acme=_provider("acme", m={"id": "m", "last_updated": "2025-02-03"}),
    )
    lazy = bundled_snapshot(doc, "test")
    assert lazy.providers["acme"] == _provider("acme", m={"id": "m", "last_updated": "2025-02-03"})
    assert lazy.providers._whole is not None  # type: ignore[attr-defined]
    assert lazy.stamp == "2025-02-03"


def test_a_nested_object_that_is_not_the_provider_is_never_taken_for_it() -> None:
    doc = _doc(other=_provider("other", m={"id": "m", "acme": {"models": {}}}))
    lazy = bundled_snapshot(doc, "test")
    assert lazy.record("acme", "m") is None
    with pytest.raises(KeyError):
        lazy.providers["acme"]


def test_an_absent_provider_and_an_unusual_document_are_decoded_whole() -> None:
    doc = _doc(acme=_provider("acme", m={"id": "m"}))
    lazy = bundled_snapshot(doc, "test")
    assert lazy.record("nobody", "m") is None
    assert lazy.providers._whole is not None  # type: ignore[attr-defined]
    spaced = b'{ "acme" : {"id": "acme", "models": {"m": {"last_updated": "2020-01-01"}}} }'
    parsed = bundled_snapshot(spaced, "test")
    assert not isinstance(parsed.providers, BundledProviders)
    assert parsed.record("acme", "m") == {"last_updated": "2020-01-01"}
    assert parsed.stamp == "2020-01-01"


def test_a_gzip_file_in_two_parts_or_damaged_is_read_the_usual_way() -> None:
    """The bundled file is inflated by zlib in one pass; a gzip file of two members (which that
    pass would cut short) or a damaged one is read by ``parse_models_dev`` as before."""
    import gzip

    first = _doc(acme=_provider("acme", m={"id": "m", "last_updated": "2021-01-01"}))
    two_parts = gzip.compress(first[:-1]) + gzip.compress(
        b',"zeta":' + orjson.dumps(_provider("zeta")) + b"}"
    )
    parsed = bundled_snapshot(two_parts, "test")
    assert not isinstance(parsed.providers, BundledProviders)
    assert set(parsed.providers) == {"acme", "zeta"} and parsed.stamp == "2021-01-01"
    one_part = bundled_snapshot(gzip.compress(first), "test")
    assert isinstance(one_part.providers, BundledProviders)
    assert one_part.record("acme", "m") == {"id": "m", "last_updated": "2021-01-01"}
    damaged = bytearray(gzip.compress(first))
    damaged[-6] ^= 0xFF  # the checksum
    with pytest.raises(models_dev.CatalogFileError, match="gzip"):
        bundled_snapshot(bytes(damaged), "test")
