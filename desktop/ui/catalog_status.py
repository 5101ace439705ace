"""Where the route's capability flags came from and how old that is (design M1, P3).

``route_flags`` runs on the worker (it stats the catalog cache files) and returns plain data,
the same figures ``pi-desktop status`` prints: each transport flag, its value, the catalog
(bundled snapshot or refreshed copy, a patch, a fallback) it came from, and the age of that
catalog. ``flags_text`` turns them into the lines the route status shows on the GUI thread.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from desktop.host.catalog_cache import catalog_sources
from desktop.pi.capability import flag_origins
from desktop.pi.catalog import active_catalog


def route_flags(resolved: Any) -> dict[str, Any]:
    """The flags of ``resolved`` (a ``ResolvedModel``) with their origins, and the catalogs in use."""

    catalog = active_catalog()
    sources = catalog_sources(catalog)
    return {
        "flags": [
            {
                "flag": origin.flag,
                "value": origin.value,
                "published": origin.published,
                "from": origin.origin,
                "catalogAge": sources["pi"]["age"],
            }
            for origin in flag_origins(resolved, catalog.sources)
        ],
        "catalogs": sources,
    }


def flags_text(capability: Mapping[str, Any]) -> str:
    """Plain lines for the route status: one per flag, then one per catalog in use."""
    lines = []
    for flag in capability.get("flags") or ():
        value = "on" if flag.get("value") else "off"
        lines.append(f"{flag.get('flag')}: {value} — from {flag.get('from')}, {flag.get('catalogAge')} old")
    for kind, source in (capability.get("catalogs") or {}).items():
        made = source.get("madeAt") or "unknown date"
        fetched = f", fetched {source['fetchedAt']}" if source.get("fetchedAt") else ""
        lines.append(f"{kind} catalog: {source.get('origin')} made {made}{fetched} ({source.get('age')} old)")
    return "\n".join(lines)
