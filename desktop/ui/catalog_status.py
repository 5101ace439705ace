"""Where the route's capability flags came from and how old that is (design M1, P3).

The worker takes the figures ``pi-desktop status`` prints (``desktop.host.catalog_cache.route_flags``:
it stats the catalog cache files): each transport flag, its value, the catalog (bundled
snapshot or refreshed copy, a patch, a fallback) it came from, and the age of that catalog.
``flags_text`` turns them into the lines the route status shows on the GUI thread.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


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
