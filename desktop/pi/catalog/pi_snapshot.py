"""The Pi catalog: pi-ai's published chat models, shipped as data.

The snapshot is produced by ``scripts/oracle/dump_pi_catalog.mjs`` from the pinned pi-ai
package and is the only source of the transcript transport flags. Each model is kept exactly
as pi-ai publishes it (unknown fields included) because request projections read many compat
fields besides the five flags. Validation only checks the fields Desktop relies on, so a
newer pi-ai that adds fields still loads.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple, overload

import orjson

from desktop.pi.catalog.errors import CatalogFileError, decode_catalog_json
from desktop.pi.catalog.transport import TRANSPORT_FLAGS

FORMAT = "pi-desktop/pi-catalog"
BUNDLED_NAME = "bundled pi_catalog.json"
_INPUTS = frozenset({"text", "image"})
_COST_RATES = ("input", "output", "cacheRead", "cacheWrite")


class PiCatalogSnapshot(NamedTuple):
    """One parsed Pi catalog file."""

    origin: str
    """Where the bytes came from (a file path, or the bundled snapshot)."""
    package: str
    version: str
    generated_at: datetime | None
    models: Sequence[Mapping[str, Any]]
    """Every model, in the file's order: a tuple, or ``BundledModels`` for the bundled file."""


def bundled_bytes() -> bytes:
    # Beside this module in an installed or source tree; through ``importlib.resources`` only
    # where it is not a plain file (a zip), so a start does not load the resource readers
    # (the status budget).
    plain = Path(__file__).with_name("data") / "pi_catalog.json"
    if plain.is_file():
        return plain.read_bytes()
    # Lazy: the status budget.
    from importlib import resources

    data = resources.files("desktop.pi.catalog") / "data"
    plain_resource = data / "pi_catalog.json"
    if plain_resource.is_file():
        return plain_resource.read_bytes()
    # Lazy: the status budget.
    import gzip

    return gzip.decompress((data / "pi_catalog.json.gz").read_bytes())


#: How the bundled file opens its list of models, one model a line after it (the generator,
#: ``scripts/oracle/dump_pi_catalog.mjs``, writes it so).
_MODELS_OPEN = b'"models":['
_MODELS_CLOSE = b"]}"


class BundledModels(Sequence[Mapping[str, Any]]):
    """The bundled snapshot's models, one provider's decoded at a time (the status budget).

    A start resolves one route, which reads the models of one provider, yet decoding all
    1,500 models costs more than the rest of resolving the route. The bundled file holds one
    model a line, so a provider's models are found by the text of their ``provider`` field and
    only those lines are decoded; anything that walks every model (``len``, iteration,
    indexing) decodes the whole file, as ``parse_pi_catalog`` does. Both give the same models
    (``tests/catalog/test_pi_snapshot_lazy.py`` holds them to each other on the bundled file).
    """

    def __init__(self, raw: bytes, lines: list[bytes], origin: str) -> None:
        self._raw = raw
        self._lines = lines
        self._origin = origin
        self._whole: tuple[Mapping[str, Any], ...] | None = None

    def whole(self) -> tuple[Mapping[str, Any], ...]:
        """Every model, the file decoded in full (once)."""
        if self._whole is None:
            self._whole = tuple(parse_pi_catalog(self._raw, self._origin, check=False).models)
        return self._whole

    def of_provider(self, provider: str) -> list[Mapping[str, Any]]:
        """The models of ``provider`` in the file's order, decoding only their lines.

        A model's line always holds its provider as JSON writes it; a line that holds the same
        text elsewhere is decoded and then left out by its own ``provider``.
        """
        if self._whole is not None:
            return [model for model in self._whole if model["provider"] == provider]
        needle = b'"provider":' + orjson.dumps(provider)
        found = (orjson.loads(line.removesuffix(b",")) for line in self._lines if needle in line)
        return [model for model in found if model["provider"] == provider]

    @overload
    def __getitem__(self, index: int) -> Mapping[str, Any]: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Mapping[str, Any]]: ...
    def __getitem__(self, index: int | slice) -> Mapping[str, Any] | Sequence[Mapping[str, Any]]:
        return self.whole()[index]

    def __iter__(self) -> Iterator[Mapping[str, Any]]:
        return iter(self.whole())

    def __len__(self) -> int:
        return len(self.whole())


def bundled_snapshot(raw: bytes, origin: str) -> PiCatalogSnapshot:
    """The bundled snapshot without decoding its models: the header is read from the first
    line, and the models one provider at a time (``BundledModels``). A file not in that
    one-model-a-line form is parsed whole, as ``parse_pi_catalog(check=False)`` would."""
    head, _, rest = raw.partition(b"\n")
    lines = rest.split(b"\n")
    if (
        not head.endswith(_MODELS_OPEN)
        or lines[-2:] != [_MODELS_CLOSE, b""]
        or len(lines) < 3
        or not all(line[:1] == b"{" for line in lines[:-2])
    ):
        return parse_pi_catalog(raw, origin, check=False)
    header = _header(decode_catalog_json(head + _MODELS_CLOSE, origin), origin)
    return header._replace(models=BundledModels(raw, lines[:-2], origin))


def _header(doc: Any, origin: str) -> PiCatalogSnapshot:
    """The snapshot's header fields checked, with its models not yet looked at."""
    if not isinstance(doc, dict):
        raise CatalogFileError(origin, "", "expected a JSON object")
    if doc.get("format") != FORMAT:
        raise CatalogFileError(origin, "format", f"expected {FORMAT!r}, got {doc.get('format')!r}")
    if doc.get("v") != 1:
        raise CatalogFileError(origin, "v", f"unknown version {doc.get('v')!r} (this build reads v1)")
    source = doc.get("source")
    if not isinstance(source, dict) or not isinstance(source.get("version"), str):
        raise CatalogFileError(origin, "source.version", "expected the pi-ai version string")
    return PiCatalogSnapshot(
        origin=origin,
        package=str(source.get("package", "")),
        version=source["version"],
        generated_at=_parse_time(origin, doc.get("generatedAt")),
        models=(),
    )


def parse_pi_catalog(raw: bytes, origin: str, *, check: bool = True) -> PiCatalogSnapshot:
    """Parse and validate Pi catalog bytes (plain or gzipped JSON); raise CatalogFileError.

    ``check=False`` skips the per-model checks, for the bundled snapshot only: it ships with
    the app and a test validates it, so each start need not (the status budget). A refreshed copy is
    always checked.
    """
    doc = decode_catalog_json(raw, origin)
    header = _header(doc, origin)
    models = doc.get("models")
    if not isinstance(models, list) or not models:
        raise CatalogFileError(origin, "models", "expected a non-empty list of models")
    seen: set[tuple[str, str]] = set()
    for index, model in enumerate(models):
        if check:
            _check_model(origin, f"models[{index}]", model)
        key = (model["provider"], model["id"])
        if key in seen:
            raise CatalogFileError(origin, f"models[{index}].id", f"duplicate model {key[0]}/{key[1]}")
        seen.add(key)
    return header._replace(models=tuple(models))


def _parse_time(origin: str, value: Any) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise CatalogFileError(origin, "generatedAt", "expected an ISO 8601 timestamp or null")
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise CatalogFileError(origin, "generatedAt", f"not an ISO 8601 timestamp: {value!r}") from exc


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check_model(origin: str, at: str, model: Any) -> None:
    def fail(field: str, problem: str) -> CatalogFileError:
        return CatalogFileError(origin, f"{at}.{field}" if field else at, problem)

    if not isinstance(model, dict):
        raise fail("", "expected a model object")
    for name in ("id", "name", "api", "provider"):
        if not isinstance(model.get(name), str) or not model[name]:
            raise fail(name, f"expected a non-empty string, got {model.get(name)!r}")
    if not isinstance(model.get("baseUrl"), str):
        raise fail("baseUrl", f"expected a string, got {model.get('baseUrl')!r}")
    if not isinstance(model.get("reasoning"), bool):
        raise fail("reasoning", f"expected true or false, got {model.get('reasoning')!r}")
    inputs = model.get("input")
    if not isinstance(inputs, list) or not inputs or not set(inputs) <= _INPUTS:
        raise fail("input", f'expected a list of "text"/"image", got {inputs!r}')
    for name in ("contextWindow", "maxTokens"):
        if not _is_number(model.get(name)) or model[name] < 0:
            raise fail(name, f"expected a non-negative number, got {model.get(name)!r}")
    cost = model.get("cost")
    if not isinstance(cost, dict):
        raise fail("cost", "expected an object with input, output, cacheRead, cacheWrite")
    for rate in _COST_RATES:
        if not _is_number(cost.get(rate)):
            raise fail(f"cost.{rate}", f"expected a number, got {cost.get(rate)!r}")
    tiers = cost.get("tiers")
    if tiers is not None:
        if not isinstance(tiers, list):
            raise fail("cost.tiers", "expected a list")
        for i, tier in enumerate(tiers):
            if not isinstance(tier, dict) or not _is_number(tier.get("inputTokensAbove")):
                raise fail(f"cost.tiers[{i}].inputTokensAbove", "expected a number")
            for rate in _COST_RATES:
                if not _is_number(tier.get(rate)):
                    raise fail(f"cost.tiers[{i}].{rate}", f"expected a number, got {tier.get(rate)!r}")
    headers = model.get("headers")
    if headers is not None and (
        not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values())
    ):
        raise fail("headers", "expected an object of string values")
    compat = model.get("compat")
    if compat is not None:
        if not isinstance(compat, dict):
            raise fail("compat", "expected an object")
        for flag in TRANSPORT_FLAGS:
            if flag in compat and not isinstance(compat[flag], bool):
                raise fail(f"compat.{flag}", f"expected true or false, got {compat[flag]!r}")
    for name in ("thinkingLevelMap", "promptCache"):
        if name in model and not isinstance(model[name], dict):
            raise fail(name, "expected an object")
