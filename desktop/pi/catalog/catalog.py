"""The merged model catalog: Pi's published models with models.dev's limits, prices and modalities.

Two snapshots feed it. Each may come from a refreshed file (bytes read by the host from its cache)
or from the copy bundled with the app; a refreshed file is used only when it is valid and newer,
otherwise the problem is recorded and the bundled copy is used, so the app always has a catalog
and always works offline.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from functools import cache
from typing import Any, Literal, NamedTuple

from desktop.pi.catalog import models_dev as md
from desktop.pi.catalog import pi_snapshot
from desktop.pi.catalog.errors import CatalogFileError
from desktop.pi.catalog.merge import merge_model, model_from_record
from desktop.pi.catalog.models_dev import ModelsDevSnapshot
from desktop.pi.catalog.patches import DEFAULT_PATCHES, CatalogPatch, apply_patches
from desktop.pi.catalog.pi_snapshot import BundledModels, PiCatalogSnapshot
from desktop.pi.catalog.transport import SYSTEM_MESSAGES, Binding, transport_flags

EntrySource = Literal["pi", "models.dev"]


class CatalogSource(NamedTuple):
    """Catalog bytes from somewhere outside the provider layer, with a name for error messages."""

    name: str
    data: bytes


class CatalogEntry(NamedTuple):
    """One model as the catalog knows it, at its published binding.

    ``model`` is the merged pi-ai ``Model`` dict (treat it as read-only; ``resolve_model`` copies
    it before adapting it to a route). ``flags`` are the transport flags Pi publishes for
    ``binding`` (after patches) — a route only gets them if it matches that binding exactly.
    """

    provider: str
    model_id: str
    model: Mapping[str, Any]
    binding: Binding
    source: EntrySource
    flags: Mapping[str, bool]
    provenance: Mapping[str, str]
    patches: tuple[str, ...] = ()

    @property
    def in_pi(self) -> bool:
        return self.source == "pi"

    @property
    def key(self) -> str:
        return f"{self.provider}/{self.model_id}"


_DATE_SUFFIX = re.compile(r"-(?:20\d{6}|\d{4}-\d{2}-\d{2}|latest)$")


def normalized_id(model_id: str) -> str:
    """A spelling-insensitive form of a model id, used only to *name* aliases in explanations."""
    tail = model_id.rsplit("/", 1)[-1].lower().lstrip("~")
    return _DATE_SUFFIX.sub("", tail.replace(".", "-").replace("_", "-"))


class SourceInfo(NamedTuple):
    """Which snapshot is in use and why (shown in status and diagnostics)."""

    pi_origin: str
    pi_version: str
    pi_generated_at: str | None
    models_dev_origin: str
    models_dev_stamp: str


class _Patched(NamedTuple):
    """Pi models with the patches applied, keyed by (provider, id) in the snapshot's order, with
    the names of the patches each model got."""

    models: dict[tuple[str, str], Mapping[str, Any]]
    patched: dict[tuple[str, str], tuple[str, ...]]

    @classmethod
    def of(cls, models: Iterable[Mapping[str, Any]], patches: Iterable[CatalogPatch]) -> _Patched:
        patched_models, outcomes = apply_patches(models, patches)
        patched: dict[tuple[str, str], tuple[str, ...]] = {}
        for outcome in outcomes:
            if outcome.status == "applied":
                key = (outcome.patch.binding.provider, outcome.patch.binding.model_id)
                patched[key] = (*patched.get(key, ()), outcome.patch.name)
        return cls({(m["provider"], m["id"]): m for m in patched_models}, patched)


class Catalog:
    """The merged catalog. Build it with ``build_catalog`` or ``default_catalog``.

    The Pi models are patched as they are first asked for, one provider at a time: resolving
    a route reads one provider, and the bundled snapshot then decodes only that provider's
    models (``pi_snapshot.BundledModels``); what walks every model patches them all, once.
    """

    def __init__(
        self,
        pi: PiCatalogSnapshot,
        models_dev: ModelsDevSnapshot | None,
        *,
        patches: Iterable[CatalogPatch] = DEFAULT_PATCHES,
        problems: Iterable[str] = (),
        notes: Iterable[str] = (),
    ) -> None:
        self.pi = pi
        self.models_dev = models_dev
        self.patches = tuple(patches)
        self.problems = tuple(problems)
        """Refreshed catalog files that could not be used, each naming the file and the field."""
        self.notes = tuple(notes)
        """Informational: e.g. a refreshed file that is valid but not newer than the bundled one."""
        self._all: _Patched | None = None
        self._providers: dict[str, _Patched] = {}
        self._entries: dict[tuple[str, str], CatalogEntry | None] = {}

    def _every_model(self) -> _Patched:
        if self._all is None:
            self._all = _Patched.of(self.pi.models, self.patches)
        return self._all

    def _provider_models(self, provider: str) -> _Patched:
        """The provider's Pi models, patched: only its own are decoded and patched, unless all
        already are (a patch names one binding, so it changes the same model either way)."""
        if self._all is not None:
            return self._all
        found = self._providers.get(provider)
        if found is None:
            models = self.pi.models
            if isinstance(models, BundledModels):
                mine: Iterable[Mapping[str, Any]] = models.of_provider(provider)
            else:
                mine = [model for model in models if model["provider"] == provider]
            found = self._providers[provider] = _Patched.of(mine, self.patches)
        return found

    # -- lookups -------------------------------------------------------------------------------

    def get(self, provider: str, model_id: str) -> CatalogEntry | None:
        """The model published under exactly this provider and id: Pi first, else models.dev."""
        key = (provider, model_id)
        if key not in self._entries:
            self._entries[key] = self._build_entry(provider, model_id)
        return self._entries[key]

    def flagged(self) -> list[CatalogEntry]:
        """Entries Pi (after patches) flags with ``supportsMidConvoSystemMessages``."""
        # The flags of a Pi entry are its Pi model's, so filter before merging (merging every
        # model with models.dev costs tens of milliseconds on each start of a command).
        flagged = [
            key
            for key, model in self._every_model().models.items()
            if transport_flags(model)[SYSTEM_MESSAGES]
        ]
        return [entry for entry in (self.get(*key) for key in flagged) if entry is not None]

    def aliases_of(self, provider: str, model_id: str) -> list[str]:
        """Pi ids under ``provider`` that spell the same model differently (never ``model_id``)."""
        wanted = normalized_id(model_id)
        return [
            mid
            for p, mid in self._provider_models(provider).models
            if p == provider and mid != model_id and normalized_id(mid) == wanted
        ]

    def flagged_elsewhere(self, provider: str, model_id: str) -> list[CatalogEntry]:
        """Flagged bindings of the same model under *other* providers (to explain relays)."""
        wanted = normalized_id(model_id)
        return [e for e in self.flagged() if e.provider != provider and normalized_id(e.model_id) == wanted]

    def usual_binding(self, provider: str) -> tuple[str, str] | None:
        """The (api, baseUrl) most of a provider's Pi models use, for models Pi does not list."""
        models = self._provider_models(provider).models
        counts = Counter((m["api"], m["baseUrl"]) for (p, _), m in models.items() if p == provider)
        return counts.most_common(1)[0][0] if counts else None

    @property
    def sources(self) -> SourceInfo:
        return SourceInfo(
            pi_origin=self.pi.origin,
            pi_version=self.pi.version,
            pi_generated_at=self.pi.generated_at.isoformat() if self.pi.generated_at else None,
            models_dev_origin=self.models_dev.origin if self.models_dev else "(none)",
            models_dev_stamp=self.models_dev.stamp if self.models_dev else "",
        )

    # -- building ------------------------------------------------------------------------------

    def _record(self, provider: str, model_id: str) -> Mapping[str, Any] | None:
        return self.models_dev.record(provider, model_id) if self.models_dev else None

    def _build_entry(self, provider: str, model_id: str) -> CatalogEntry | None:
        record = self._record(provider, model_id)
        pi_models = self._provider_models(provider)
        pi_model = pi_models.models.get((provider, model_id))
        if pi_model is not None:
            model, provenance = merge_model(pi_model, record)
            patches = pi_models.patched.get((provider, model_id), ())
            if patches:
                provenance["compat"] = f"pi + patch {', '.join(patches)}"
            return CatalogEntry(
                provider=provider,
                model_id=model_id,
                model=model,
                binding=Binding.of(pi_model),
                source="pi",
                flags=transport_flags(pi_model),
                provenance=provenance,
                patches=patches,
            )
        usual = self.usual_binding(provider)
        if record is None or usual is None:
            return None
        model, provenance = model_from_record(provider, record, api=usual[0], base_url=usual[1])
        model["id"] = model_id
        return CatalogEntry(
            provider=provider,
            model_id=model_id,
            model=model,
            binding=Binding.of(model),
            source="models.dev",
            flags=transport_flags({}),
            provenance=provenance,
        )


def _newer_pi(candidate: PiCatalogSnapshot, bundled: PiCatalogSnapshot) -> bool:
    if candidate.generated_at is None:
        return False
    return bundled.generated_at is None or candidate.generated_at > bundled.generated_at


@cache
def bundled_pi() -> PiCatalogSnapshot:
    return pi_snapshot.bundled_snapshot(pi_snapshot.bundled_bytes(), pi_snapshot.BUNDLED_NAME)


@cache
def bundled_models_dev() -> ModelsDevSnapshot:
    return md.bundled_snapshot(md.bundled_bytes(), md.BUNDLED_NAME)


def build_catalog(
    *,
    pi_cached: CatalogSource | None = None,
    models_dev_cached: CatalogSource | None = None,
    patches: Iterable[CatalogPatch] = DEFAULT_PATCHES,
) -> Catalog:
    """Merge the bundled snapshots with any refreshed copies the host read from its cache.

    A refreshed copy replaces the bundled one only when it is valid and newer (Pi: its
    ``generatedAt``; models.dev: its newest ``last_updated``). An invalid copy never stops the
    app: its ``CatalogFileError`` message (file and field) lands in ``Catalog.problems``.
    """
    problems: list[str] = []
    notes: list[str] = []
    pi = bundled_pi()
    if pi_cached is not None:
        try:
            candidate = pi_snapshot.parse_pi_catalog(pi_cached.data, pi_cached.name)
        except CatalogFileError as exc:
            problems.append(str(exc))
        else:
            if _newer_pi(candidate, pi):
                pi = candidate
            else:
                notes.append(
                    f"{pi_cached.name} is not newer than the bundled Pi catalog; using the bundled one"
                )
    models_dev = bundled_models_dev()
    if models_dev_cached is not None:
        try:
            fresh = md.parse_models_dev(models_dev_cached.data, models_dev_cached.name)
        except CatalogFileError as exc:
            problems.append(str(exc))
        else:
            if fresh.stamp > models_dev.stamp:
                models_dev = fresh
            else:
                notes.append(
                    f"{models_dev_cached.name} is not newer than the bundled models.dev snapshot; using the bundled one"
                )
    return Catalog(pi, models_dev, patches=patches, problems=problems, notes=notes)


@cache
def default_catalog() -> Catalog:
    """The bundled snapshots with the default patches (what the app uses offline)."""
    return build_catalog()


_active_source: Callable[[], Catalog] | None = None


def use_catalog(source: Callable[[], Catalog] | None) -> None:
    """Where ``active_catalog`` comes from: the host installs its cache reader here
    (``desktop.host.catalog_cache.install``); None goes back to the bundled snapshots. The
    provider layer itself never reads a file."""
    global _active_source
    _active_source = source


def active_catalog() -> Catalog:
    """The catalog routes resolve against: the refreshed one when the host installed it."""
    return _active_source() if _active_source is not None else default_catalog()
