"""Refreshing the model catalogs from the network and caching them (design M1).

The provider layer only ever sees bytes; this module owns the I/O. A download is validated with
the same parser the app uses *before* it replaces the cached copy, so a bad download can never
displace a good cache; a cache file that later turns out bad (edited, truncated) is reported by
``load_catalog`` and the bundled snapshot is used instead. Nothing here is needed offline.

When the app uses a refresh: ``install()`` makes every route resolution read the cached copies
(re-read only when a cache file changes), so a refresh reaches the next session opened, in the
window and in every command. ``refresh_catalogs()`` is the on-demand refresh (``pi-desktop
catalog refresh``, the window's menu item); ``refresh_in_background()`` is what the window's
worker runs at start when the cached catalogs are older than 24 hours. Headless commands never
refresh on their own: they stay fast and never wait on the network. Offline, every refresh
fails cleanly and the bundled snapshots stay in use.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, NamedTuple

from desktop.host import paths
from desktop.host.private_files import make_private_dirs, replace_file
from desktop.pi.capability import flag_origins
from desktop.pi.catalog import (
    DEFAULT_PATCHES,
    Catalog,
    CatalogFileError,
    CatalogPatch,
    CatalogSource,
    active_catalog,
    build_catalog,
    default_catalog,
    use_catalog,
)
from desktop.pi.catalog.models_dev import parse_models_dev
from desktop.pi.catalog.pi_snapshot import parse_pi_catalog

if TYPE_CHECKING:
    from desktop.pi.routes import ResolvedModel

CatalogKind = Literal["models.dev", "pi"]

DEFAULT_MODELS_DEV_URL: Final = "https://models.dev/api.json"
MODELS_DEV_URL_ENV: Final = "PI_DESKTOP_MODELS_DEV_URL"
PI_CATALOG_URL_ENV: Final = "PI_DESKTOP_PI_CATALOG_URL"
"""The Pi catalog has no public default URL: point this at a ``pi_catalog.json`` built by
``scripts/oracle/dump_pi_catalog.mjs`` (e.g. the raw file of a newer Pi Desktop release)."""

_FILES: Final[dict[CatalogKind, str]] = {"models.dev": "models_dev_api.json", "pi": "pi_catalog.json"}
KINDS: Final[tuple[CatalogKind, ...]] = ("pi", "models.dev")
#: The window refreshes in the background at start when a cached catalog is older than this.
STALE_AFTER_SECONDS: Final = 24 * 3600


class CatalogRefreshError(RuntimeError):
    """A refresh failed; the cached and bundled catalogs are unchanged."""


class RefreshResult(NamedTuple):
    kind: CatalogKind
    url: str
    path: Path
    size: int
    summary: str


def catalog_url(kind: CatalogKind) -> str | None:
    """The configured URL for a catalog: the environment wins, then the default (models.dev only)."""
    if kind == "models.dev":
        return os.environ.get(MODELS_DEV_URL_ENV) or DEFAULT_MODELS_DEV_URL
    return os.environ.get(PI_CATALOG_URL_ENV) or None


def cache_path(kind: CatalogKind, cache_dir: Path | None = None) -> Path:
    return (cache_dir or paths.cache_dir()) / "catalogs" / _FILES[kind]


def _validate(kind: CatalogKind, data: bytes, origin: str) -> str:
    if kind == "models.dev":
        snapshot = parse_models_dev(data, origin)
        count = sum(len(p["models"]) for p in snapshot.providers.values())
        return f"{count} models from {len(snapshot.providers)} providers, newest record {snapshot.stamp}"
    pi = parse_pi_catalog(data, origin)
    when = pi.generated_at.isoformat() if pi.generated_at else "unknown date"
    return f"{len(pi.models)} models from {pi.package}@{pi.version}, generated {when}"


def refresh_catalog(
    kind: CatalogKind,
    url: str | None = None,
    *,
    cache_dir: Path | None = None,
    timeout: float = 30.0,
) -> RefreshResult:
    """Download a catalog, validate it, and replace the cached copy. Raises CatalogRefreshError."""
    url = url or catalog_url(kind)
    if not url:
        raise CatalogRefreshError(
            f"no URL configured for the {kind} catalog: set {PI_CATALOG_URL_ENV} to a pi_catalog.json URL"
        )
    # Lazy: the status budget.
    import httpx

    try:
        with httpx.Client(timeout=timeout, follow_redirects=True) as client:
            response = client.get(url)
    except httpx.HTTPError as exc:
        raise CatalogRefreshError(f"could not download the {kind} catalog from {url}: {exc}") from exc
    if response.status_code != 200:
        raise CatalogRefreshError(
            f"could not download the {kind} catalog from {url}: HTTP {response.status_code}; the cached copy is unchanged"
        )
    data = response.content
    try:
        summary = _validate(kind, data, url)
    except CatalogFileError as exc:
        raise CatalogRefreshError(f"{exc} (downloaded file rejected; the cached copy is unchanged)") from exc
    path = cache_path(kind, cache_dir)
    make_private_dirs(path.parent)  # design X22
    replace_file(path, data)
    return RefreshResult(kind=kind, url=url, path=path, size=len(data), summary=summary)


def cached_source(kind: CatalogKind, cache_dir: Path | None = None) -> CatalogSource | None:
    path = cache_path(kind, cache_dir)
    try:
        return CatalogSource(name=str(path), data=path.read_bytes())
    except FileNotFoundError:
        return None
    except OSError as exc:
        # An unreadable cache is reported like an invalid one: name the file, use the bundled copy.
        return CatalogSource(name=f"{path} (unreadable: {exc.strerror})", data=b"")


def load_catalog(
    cache_dir: Path | None = None, *, patches: tuple[CatalogPatch, ...] = DEFAULT_PATCHES
) -> Catalog:
    """The merged catalog from cached refreshes when valid and newer, else the bundled snapshots.

    Problems with cached files are in ``Catalog.problems`` (each names the file and the field).
    """
    return build_catalog(
        pi_cached=cached_source("pi", cache_dir),
        models_dev_cached=cached_source("models.dev", cache_dir),
        patches=patches,
    )


# -- using the cache ---------------------------------------------------------------------------

_memo_lock = threading.Lock()
_memo: tuple[tuple[object, ...], Catalog] | None = None


def _signature(cache_dir: Path | None) -> tuple[object, ...]:
    parts: list[object] = []
    for kind in KINDS:
        path = cache_path(kind, cache_dir)
        try:
            info = path.stat()
        except OSError:
            parts.append(None)
        else:
            parts.append((str(path), info.st_mtime_ns, info.st_size))
    return tuple(parts)


def current_catalog(cache_dir: Path | None = None) -> Catalog:
    """``load_catalog()``, re-read only when a cache file changed; the bundled catalog (parsed
    once) when there is no cache at all."""
    global _memo
    signature = _signature(cache_dir)
    with _memo_lock:
        if _memo is not None and _memo[0] == signature:
            return _memo[1]
        catalog = default_catalog() if all(part is None for part in signature) else load_catalog(cache_dir)
        _memo = (signature, catalog)
        return catalog


def install() -> None:
    """Make route resolution (``desktop.pi.routes.resolve_model``) use the cached catalogs."""
    use_catalog(current_catalog)


class CacheState(NamedTuple):
    """One catalog kind as the app sees it now: where it comes from and how old it is."""

    kind: CatalogKind
    path: Path
    #: When the cached copy was downloaded (its file time); None when there is none.
    fetched_at: datetime | None
    url: str | None

    def age_seconds(self, now: datetime | None = None) -> float | None:
        if self.fetched_at is None:
            return None
        return max(0.0, ((now or datetime.now(UTC)) - self.fetched_at).total_seconds())

    def stale(self, now: datetime | None = None, max_age: float = STALE_AFTER_SECONDS) -> bool:
        """Worth refreshing: a URL is configured and the copy is missing or older than ``max_age``."""
        age = self.age_seconds(now)
        return self.url is not None and (age is None or age > max_age)


def cache_state(kind: CatalogKind, cache_dir: Path | None = None) -> CacheState:
    path = cache_path(kind, cache_dir)
    try:
        fetched: datetime | None = datetime.fromtimestamp(path.stat().st_mtime, UTC)
    except OSError:
        fetched = None
    return CacheState(kind, path, fetched, catalog_url(kind))


def describe_age(seconds: float | None) -> str:
    """ "3 h", "2 days" ... for status lines."""
    if seconds is None:
        return "unknown age"
    if seconds < 3600:
        return f"{int(seconds // 60)} min"
    if seconds < 2 * 86400:
        return f"{int(seconds // 3600)} h"
    return f"{int(seconds // 86400)} days"


def catalog_sources(
    catalog: Catalog, cache_dir: Path | None = None, now: datetime | None = None
) -> dict[str, dict[str, object]]:
    """For status: which copy of each catalog is in use, when it was made and fetched, how old."""
    now = now or datetime.now(UTC)
    info = catalog.sources
    out: dict[str, dict[str, object]] = {}
    for kind, origin, made in (
        ("pi", info.pi_origin, info.pi_generated_at),
        ("models.dev", info.models_dev_origin, info.models_dev_stamp or None),
    ):
        state = cache_state(kind, cache_dir)  # type: ignore[arg-type]
        cached = str(state.path) == origin
        fetched = state.fetched_at if cached else None
        made_at = _parse_when(made)
        reference = fetched or made_at
        out[kind] = {
            "origin": "refreshed copy" if cached else "bundled snapshot",
            "file": origin,
            "version": info.pi_version if kind == "pi" else None,
            "madeAt": made,
            "fetchedAt": fetched.isoformat() if fetched else None,
            "ageSeconds": round((now - reference).total_seconds()) if reference else None,
            "age": describe_age((now - reference).total_seconds() if reference else None),
            "url": state.url,
        }
    return out


def route_flags(resolved: ResolvedModel) -> dict[str, Any]:
    """Each transport flag of ``resolved``, where it came from and how old that source is, and
    the catalogs in use (M1, P3): what ``pi-desktop status`` prints and the window's route
    status shows."""
    catalog = active_catalog()
    sources = catalog_sources(catalog)
    listed = [
        {
            "flag": origin.flag,
            "value": origin.value,
            "published": origin.published,
            "from": origin.origin,
            "catalogAge": sources["pi"]["age"],
        }
        for origin in flag_origins(resolved, catalog.sources)
    ]
    return {"flags": listed, "catalogs": sources}


def _parse_when(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        try:
            when = datetime.fromisoformat(text[:10])
        except ValueError:
            return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


# -- refreshing -----------------------------------------------------------------------------------


class RefreshOutcome(NamedTuple):
    kind: CatalogKind
    result: RefreshResult | None = None
    error: str | None = None
    skipped: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def summary(self) -> str:
        """One line for the command line and the window."""
        if self.result is not None:
            return f"{self.kind}: refreshed from {self.result.url}: {self.result.summary}"
        if self.skipped is not None:
            return f"{self.kind}: skipped ({self.skipped})"
        return f"{self.kind}: {self.error}; the cached or bundled copy stays in use"


def refresh_catalogs(
    kinds: Sequence[CatalogKind] = KINDS, *, cache_dir: Path | None = None, timeout: float = 30.0
) -> list[RefreshOutcome]:
    """Refresh every configured catalog now; never raises for a failed download (blocking:
    call it from the worker or a command, never the GUI thread)."""
    outcomes: list[RefreshOutcome] = []
    for kind in kinds:
        if catalog_url(kind) is None:
            outcomes.append(RefreshOutcome(kind, skipped=f"no URL configured; set {PI_CATALOG_URL_ENV}"))
            continue
        try:
            outcomes.append(RefreshOutcome(kind, refresh_catalog(kind, cache_dir=cache_dir, timeout=timeout)))
        except (CatalogRefreshError, OSError) as exc:
            outcomes.append(RefreshOutcome(kind, error=str(exc)))
    return outcomes


def refresh_in_background(
    cache_dir: Path | None = None, *, max_age: float = STALE_AFTER_SECONDS
) -> threading.Thread | None:
    """At start: refresh the stale catalogs on a daemon thread; None when nothing is stale."""
    now = datetime.now(UTC)
    stale = [kind for kind in KINDS if cache_state(kind, cache_dir).stale(now, max_age)]
    if not stale:
        return None

    def work() -> None:
        # Lazy: the status budget.
        import logging

        log = logging.getLogger(__name__)
        started = time.monotonic()
        for outcome in refresh_catalogs(stale, cache_dir=cache_dir):
            log.info("catalog refresh at start (%.1f s): %s", time.monotonic() - started, outcome.summary())

    thread = threading.Thread(target=work, name="catalog-refresh", daemon=True)
    thread.start()
    return thread
