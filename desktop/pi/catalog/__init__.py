"""Model catalogs: Pi's published models (transport flags) merged with models.dev (limits, prices).

See ``docs/catalogs.md`` for how the snapshots are built, refreshed and merged.
"""

from __future__ import annotations

from desktop.pi.catalog.catalog import (
    Catalog,
    CatalogEntry,
    CatalogSource,
    active_catalog,
    build_catalog,
    default_catalog,
    use_catalog,
)
from desktop.pi.catalog.errors import CatalogFileError, RouteError
from desktop.pi.catalog.patches import (
    DEEPSEEK_FLASH_SYSTEM_MESSAGES,
    DEFAULT_PATCHES,
    CatalogPatch,
)
from desktop.pi.catalog.transport import TRANSPORT_FLAGS

__all__ = [
    "DEEPSEEK_FLASH_SYSTEM_MESSAGES",
    "DEFAULT_PATCHES",
    "TRANSPORT_FLAGS",
    "Catalog",
    "CatalogEntry",
    "CatalogFileError",
    "CatalogPatch",
    "CatalogSource",
    "RouteError",
    "active_catalog",
    "build_catalog",
    "default_catalog",
    "use_catalog",
]
