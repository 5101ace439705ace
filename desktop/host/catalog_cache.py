"""Refreshing the model catalogs from the network and caching them (SPEC M1).

The provider layer only ever sees bytes; this module owns the I/O. A download is validated with
the same parser the app uses *before* it replaces the cached copy, so a bad download can never
displace a good cache; a cache file that later turns out bad (edited, truncated) is reported by
``load_catalog`` and the bundled snapshot is used instead. Nothing here is needed offline.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

import httpx

from desktop.host import paths
from desktop.pi.catalog import (
    DEFAULT_PATCHES,
    Catalog,
    CatalogFileError,
    CatalogPatch,
    CatalogSource,
    build_catalog,
)
from desktop.pi.catalog.models_dev import parse_models_dev
from desktop.pi.catalog.pi_snapshot import parse_pi_catalog

CatalogKind = Literal["models.dev", "pi"]

DEFAULT_MODELS_DEV_URL: Final = "https://models.dev/api.json"
MODELS_DEV_URL_ENV: Final = "PI_DESKTOP_MODELS_DEV_URL"
PI_CATALOG_URL_ENV: Final = "PI_DESKTOP_PI_CATALOG_URL"
"""The Pi catalog has no public default URL: point this at a ``pi_catalog.json`` built by
``scripts/oracle/dump_pi_catalog.mjs`` (e.g. the raw file of a newer Pi Desktop release)."""

_FILES: Final[dict[CatalogKind, str]] = {"models.dev": "models_dev_api.json", "pi": "pi_catalog.json"}


class CatalogRefreshError(RuntimeError):
    """A refresh failed; the cached and bundled catalogs are unchanged."""


@dataclass(frozen=True)
class RefreshResult:
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


def _write_atomically(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    if hasattr(os, "O_DIRECTORY"):
        dir_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def refresh_catalog(
    kind: CatalogKind,
    url: str | None = None,
    *,
    cache_dir: Path | None = None,
    timeout: float = 30.0,
    client: httpx.Client | None = None,
) -> RefreshResult:
    """Download a catalog, validate it, and replace the cached copy. Raises CatalogRefreshError."""
    url = url or catalog_url(kind)
    if not url:
        raise CatalogRefreshError(
            f"no URL configured for the {kind} catalog: set {PI_CATALOG_URL_ENV} to a pi_catalog.json URL"
        )
    try:
        if client is None:
            with httpx.Client(timeout=timeout, follow_redirects=True) as own:
                response = own.get(url)
        else:
            response = client.get(url, timeout=timeout, follow_redirects=True)
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
    _write_atomically(path, data)
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


__all__ = [
    "DEFAULT_MODELS_DEV_URL",
    "MODELS_DEV_URL_ENV",
    "PI_CATALOG_URL_ENV",
    "CatalogRefreshError",
    "RefreshResult",
    "cache_path",
    "cached_source",
    "catalog_url",
    "load_catalog",
    "refresh_catalog",
]
