"""`pi-desktop catalog`: refresh the model catalogs now, or show which copies are in use.

``catalog refresh`` downloads the Pi catalog (when ``PI_DESKTOP_PI_CATALOG_URL`` is set) and
models.dev (``PI_DESKTOP_MODELS_DEV_URL``, default models.dev), validates each and only then
replaces the cached copy; the next session opened (window or command) resolves its route
against it. A failed download changes nothing. Exit codes: 0 every configured catalog
refreshed, 1 at least one download failed (the cached or bundled copy stays in use).

``catalog status`` prints which copy of each catalog is in use and how old it is (read-only).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "catalog",
        help="refresh the model catalogs, or show which copies are in use",
        description="Refresh the model catalogs (network) or show their sources and ages.",
    )
    actions = parser.add_subparsers(dest="catalog_action", metavar="ACTION", required=True)
    refresh = actions.add_parser("refresh", help="download, validate and cache the catalogs now")
    refresh.add_argument(
        "--kind", choices=("pi", "models.dev"), action="append", help="only this catalog (repeatable)"
    )
    refresh.add_argument("--timeout", type=float, default=30.0, help="seconds per download (default: 30)")
    refresh.set_defaults(handler=run_refresh)
    status = actions.add_parser("status", help="which copy of each catalog is in use, and how old")
    status.add_argument("--json", action="store_true", help="machine-readable output")
    status.set_defaults(handler=run_status)


def run_refresh(args: argparse.Namespace) -> int:
    # Lazy: the --help budget.
    from desktop.host.catalog_cache import KINDS, refresh_catalogs

    kinds = tuple(args.kind) if args.kind else KINDS
    outcomes = refresh_catalogs(kinds, timeout=args.timeout)
    for outcome in outcomes:
        stream = sys.stdout if outcome.ok else sys.stderr
        prefix = "" if outcome.ok else "pi-desktop catalog refresh: "
        print(prefix + outcome.summary(), file=stream)
    return 0 if all(outcome.ok for outcome in outcomes) else 1


def run_status(args: argparse.Namespace) -> int:
    # Lazy: the --help budget.
    from desktop.host.catalog_cache import catalog_sources, current_catalog

    catalog = current_catalog()
    sources: dict[str, Any] = catalog_sources(catalog)
    info = {"catalogs": sources, "problems": list(catalog.problems), "notes": list(catalog.notes)}
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    for kind, source in sources.items():
        made = f", made {source['madeAt']}" if source["madeAt"] else ""
        fetched = f", fetched {source['fetchedAt']}" if source["fetchedAt"] else ""
        print(f"{kind}: {source['origin']} {source['file']}{made}{fetched} ({source['age']} old)")
    for problem in catalog.problems:
        print(f"problem: {problem}", file=sys.stderr)
    for note in catalog.notes:
        print(f"note: {note}")
    return 0
