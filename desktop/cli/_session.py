"""Opening a session for a command: choosing the route, the offline emulator (imported lazily)."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from desktop.cli._args import CliError
from desktop.host.first_run import initial_route
from desktop.host.journal import JournalFormatError, read_session
from desktop.host.permissions import PermissionMode, headless_bridge
from desktop.pi.catalog import RouteError
from desktop.pi.routes import EMULATOR_FAMILY, Account, Route, emulator_route, route_from_string
from desktop.session.assembly import OpenSession, SessionConfig, open_session
from desktop.session.compaction import CompactionSettings
from desktop.session.default_route import default_route


def last_route(path: Path) -> str | None:
    if not path.exists():
        return None
    for row in reversed(read_session(path).rows):
        route = row.get("route") if row.get("type") == "assistant" else None
        if isinstance(route, dict) and route.get("provider") and route.get("model"):
            prefix = f"{EMULATOR_FAMILY}/" if route.get("emulator") else ""
            return f"{prefix}{route['provider']}/{route['model']}"
    return None


@contextlib.contextmanager
def opened(args: argparse.Namespace, *, read_only: bool = False) -> Iterator[tuple[OpenSession, Any]]:
    """Open the session for the command, starting an in-process emulator for offline routes."""
    from desktop.emulator import Emulator

    path = Path(args.session)
    spec = args.model or last_route(path)
    emulator: Emulator | None = None
    try:
        offline = spec is None and initial_route().offline
        if (spec and spec.startswith(EMULATOR_FAMILY + "/")) or offline:
            emulator = Emulator().start()
        account = Account.make(base_url=args.endpoint) if getattr(args, "endpoint", None) else None
        try:
            if spec is None:
                route: Route = default_route(initial_route(), emulator.url if emulator else None)
            elif spec.startswith(EMULATOR_FAMILY + "/"):
                assert emulator is not None
                route = emulator_route(spec.split("/", 1)[1], emulator.url, emulated=True, account=account)
            else:
                route = route_from_string(spec, account=account)
        except RouteError as error:
            raise CliError(str(error)) from error
        mode = getattr(args, "mode", None)
        config = SessionConfig(
            route=route,
            workspace=Path(args.workspace).resolve(),
            fallback=args.fallback,
            mode=PermissionMode(mode) if mode else None,
            compaction=CompactionSettings(),
        )
        try:
            bridge = headless_bridge(yes=getattr(args, "yes", False), no=getattr(args, "no", False))
        except ValueError as error:
            raise CliError(str(error)) from error
        try:
            session = open_session(path, config, bridge=bridge, read_only=read_only)
        except (JournalFormatError, OSError) as error:
            raise CliError(str(error)) from error
        with session:
            yield session, emulator
    finally:
        if emulator is not None:
            emulator.stop()
