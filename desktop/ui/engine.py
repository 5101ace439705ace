"""The session engine the worker thread drives: routes, dispatch, tools, previews (no Qt).

Everything here runs on the worker thread only. It glues the layers together the way the
window needs them: which routes the switcher offers (the offline emulator stand-ins of
published models, plus real routes for providers that have a key), how a route becomes the
runtime's ``SessionRoute``, the HTTP dispatcher, the tool host, and the payload preview with
its cache break. Keeping it free of Qt keeps it testable without a display; it could move to
``desktop/session`` once the command line needs the same assembly.
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from desktop.pi.capability import capability_status
from desktop.pi.delivery import FallbackDelivery
from desktop.pi.projection import CREDENTIAL_PLACEHOLDER, PROJECTORS, ProviderRequest
from desktop.pi.routes import Route, emulator_route, resolve_model, route_from_string
from desktop.session.runtime import SessionRoute, SessionRuntime
from desktop.ui.payload_text import char_offset, common_prefix, common_suffix, pretty_json

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
PREVIEW_KEY = CREDENTIAL_PLACEHOLDER
PRETTY_LIMIT = 4_000_000


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


def preview_binding(route: Route, fallback: FallbackDelivery, session_id: str | None) -> SessionRoute:
    """Another route's binding for a side-by-side preview (credential placeholder, no secret)."""
    from desktop.session.assembly import route_binding

    return route_binding(resolve_model(route), fallback, session_id or "")


def for_preview(binding: SessionRoute) -> SessionRoute:
    """The binding a preview projects with: the credential stays the placeholder."""
    return replace(binding, options=replace(binding.options, api_key=CREDENTIAL_PLACEHOLDER))


def capability_info(resolved: Any, fallback: FallbackDelivery) -> dict[str, Any]:
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


def preview_headers(request: ProviderRequest, api: str) -> dict[str, str]:
    """Redacted headers, with the auth header the client will add shown (redacted) too."""
    from desktop.host.providers import with_auth

    headers = with_auth(dict(request.headers), api, PREVIEW_KEY)
    return ProviderRequest(request.method, request.url, headers, request.body).redacted_headers()


def build_preview(
    request: ProviderRequest,
    *,
    label: str,
    api: str,
    previous: bytes | None,
    previous_label: str,
) -> dict[str, Any]:
    """The dict the payload tab shows: exact bytes, readable text and the cache break."""
    body = request.body_bytes
    raw = body.decode("utf-8", errors="replace")
    pretty = pretty_json(raw) if len(body) <= PRETTY_LIMIT else None
    preview: dict[str, Any] = {
        "route": label,
        "api": api,
        "method": request.method,
        "url": request.url,
        "headers": preview_headers(request, api),
        "body": body,
        "pretty": pretty.text if pretty is not None else raw,
        "previous": previous,
        "previousLabel": previous_label,
    }
    if previous is not None:
        shared = common_prefix(previous, body)
        chars = char_offset(body, shared)
        preview["breakBytes"] = shared
        tail = common_suffix(previous, body, shared)
        end_chars = char_offset(body, len(body) - tail)
        preview["tailBytes"] = tail
        preview["changedEndChars"] = end_chars
        preview["changedEndPretty"] = pretty.position(end_chars) if pretty is not None else end_chars
        preview["breakChars"] = chars
        preview["breakPretty"] = pretty.position(chars) if pretty is not None else chars
        preview["breakLine"] = pretty.line_of(chars) if pretty is not None else None
    return preview


def previous_messages(runtime: SessionRuntime) -> list[Any] | None:
    """The context the last reply was generated from (everything before the last assistant message)."""
    messages = runtime.view().messages
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].get("role") == "assistant":
            return list(messages[:index])
    return None


def request_for_binding(
    runtime: SessionRuntime, binding: SessionRoute, messages: Sequence[Any]
) -> ProviderRequest:
    from desktop.pi.delivery import deliver
    from desktop.pi.projection import project

    return project(binding.model, deliver(messages, binding.model, binding.fallback), binding.options)


def next_messages(runtime: SessionRuntime) -> list[Any]:
    messages = list(runtime.view().messages)
    pending = runtime.pending_system_fields()
    if pending is not None:
        messages.append(pending["modelSystem"]["message"])
    return messages


def activation_info(gate: Any, rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The Activation tab: live state, its identity inputs, and whether the transcript's newest
    ``tool_activation`` section would be honoured for the current identity (and why not)."""
    from desktop.session.activation import SECTION_NAME
    from desktop.session.history import context_view

    if gate is None:
        return {"available": False, "why": "No session is open."}
    gate.refresh()
    snapshot = gate.snapshot
    route = gate.route
    identity = gate.identity()
    messages = context_view(rows).messages
    verdict = gate.verdict(messages)
    section = None
    for message in reversed(messages):
        sections = message.get("sections") if message.get("role") == "system" else None
        if isinstance(sections, Mapping) and SECTION_NAME in sections:
            section = sections[SECTION_NAME]
            break
    if verdict.source == "rejected":
        valid, why = False, verdict.reason
    elif section is None:
        valid, why = True, "nothing recorded yet: " + verdict.reason
    else:
        valid, why = True, f"the transcript's section matches the current identity ({verdict.reason})"
    policy = gate.policy
    return {
        "available": True,
        "valid": valid,
        "why": why,
        "source": verdict.source,
        "active": list(gate.state.active),
        # Why the session opened with the grants it has (e.g. a copied file: nothing restored).
        "restoredAtOpen": gate.last_restore.reason if gate.last_restore is not None else None,
        "epoch": gate.epoch,
        "identity": identity,
        "inputs": {
            "account": route.account,
            "model": route.model_id,
            "api": route.api,
            "endpoint": route.base_url,
            "mode": gate.mode.value,
            "declarations": [d.get("name") for d in snapshot.declarations()],
            "deferred": sorted(snapshot.deferred_names),
        },
        "policy": {
            "mode": policy.mode,
            "note": policy.note(),
            "fallback": policy.reason if policy.fallback else None,
            "functions": policy.function_count,
            "estimatedTokens": policy.estimated_tokens,
        },
        "section": section,
    }
