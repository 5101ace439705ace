"""Which routes the switcher offers, and how a route's capability is described (design G3).

The offline emulator's stand-ins of published models come first (they always work), then
real routes for providers that have a key. A route whose API has no request projection yet
is listed but not usable, with the reason.
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from desktop.pi.capability import capability_status
from desktop.pi.delivery import FallbackDelivery
from desktop.pi.projection import PROJECTORS
from desktop.pi.routes import ResolvedModel, Route, emulator_route, resolve_model, route_from_string

log = logging.getLogger(__name__)

#: Published models offered on the offline emulator (and online when a key exists), by API.
PUBLISHED_ROUTES: tuple[str, ...] = (
    "anthropic/claude-opus-5-5",
    "anthropic/claude-sonnet-5",
    "openai/gpt-5.5",
    "deepseek/deepseek-flash",
    "mistral/mistral-large-latest",
    "google/gemini-2.5-flash",
)
DEFAULT_OFFLINE_ROUTE = "emulator/deepseek/deepseek-flash"


def projector_available(api: str) -> bool:
    module = PROJECTORS.get(api)
    return module is not None and importlib.util.find_spec(f"desktop.pi.projection.{module}") is not None


@dataclass(frozen=True)
class RouteChoice:
    key: str
    label: str
    route: Route
    available: bool
    why: str = ""


def route_choices(emulator_origin: str | None, keyed_providers: Sequence[str]) -> list[RouteChoice]:
    """Emulator stand-ins first (they always work), then real routes whose provider has a key."""
    choices: list[RouteChoice] = []
    for published in PUBLISHED_ROUTES:
        provider = published.split("/", 1)[0]
        candidates: list[tuple[str, Route]] = []
        if emulator_origin is not None:
            candidates.append(
                (f"emulator/{published}", emulator_route(published, emulator_origin, emulated=True))
            )
        if provider in keyed_providers:
            candidates.append((published, route_from_string(published)))
        for key, route in candidates:
            try:
                api = str(resolve_model(route).model["api"])
            except Exception as exc:  # a catalog without this model: skip it, say why in the log
                log.info("route %s is not offered: %s", key, exc)
                continue
            ok = projector_available(api)
            suffix = " — offline emulator" if route.offline else ""
            choices.append(
                RouteChoice(
                    key,
                    f"{published} ({api}){suffix}",
                    route,
                    ok,
                    "" if ok else f"no request projection for {api} yet",
                )
            )
    return choices


def pick_route(choices: Sequence[RouteChoice], wanted: str) -> str:
    """The wanted route if usable, else the default offline route, else the first usable one."""
    usable = [c for c in choices if c.available]
    for key in (wanted, DEFAULT_OFFLINE_ROUTE):
        if any(c.key == key for c in usable):
            return key
    return usable[0].key if usable else ""


def capability_info(resolved: ResolvedModel, fallback: FallbackDelivery) -> dict[str, Any]:
    status = capability_status(resolved, fallback)
    return {
        "delivery": status.delivery,
        "toolPath": status.tool_path,
        "summary": status.summary(),
        "explanation": status.explanation,
        "verified": status.route_verified,
        "reason": status.route_reason,
        "offline": bool(resolved.offline),
        "label": resolved.route.label(),
    }
