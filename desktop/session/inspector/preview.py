"""The next request as the payload tab and ``pi-desktop payload`` show it (design G4).

One function builds the headers the dispatch really sends (``sent_headers``), so the window's
preview and the command line's ``--headers`` cannot drift apart; ``route_preview`` is the
payload tab's whole computation: the exact bytes for the current route or another one, the
readable rendering, and the cache break against the previous request on that route.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from desktop.pi.delivery import FallbackDelivery
from desktop.pi.projection import CREDENTIAL_PLACEHOLDER, ProviderRequest
from desktop.pi.routes import Route, resolve_model
from desktop.session.inspector.payload_text import char_offset, common_prefix, common_suffix, pretty_json
from desktop.session.inspector.routes import RouteChoice
from desktop.session.runtime import SessionRoute, SessionRuntime

log = logging.getLogger(__name__)

PREVIEW_KEY = CREDENTIAL_PLACEHOLDER
PRETTY_LIMIT = 4_000_000


def sent_headers(request: ProviderRequest, *, offline: bool) -> dict[str, str]:
    """The headers the dispatch sends (``desktop.session.dispatch.with_credential``), redacted:
    a credential header when the route has a key, none on the keyless emulator."""
    from desktop.session.dispatch import with_credential

    headers = with_credential(request.headers, None if offline else CREDENTIAL_PLACEHOLDER)
    return ProviderRequest(request.method, request.url, headers, request.body).redacted_headers()


def preview_binding(route: Route, fallback: FallbackDelivery, session_id: str | None) -> SessionRoute:
    """Another route's binding for a side-by-side preview (credential placeholder, no secret)."""
    from desktop.session.assembly import route_binding

    return route_binding(resolve_model(route), fallback, session_id or "")


def for_preview(binding: SessionRoute) -> SessionRoute:
    """The binding a preview projects with: the credential stays the placeholder."""
    return replace(binding, options=replace(binding.options, api_key=CREDENTIAL_PLACEHOLDER))


def build_preview(
    request: ProviderRequest,
    *,
    label: str,
    api: str,
    previous: bytes | None,
    previous_label: str,
    offline: bool = False,
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
        "headers": sent_headers(request, offline=offline),
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
    """Project ``messages`` for ``binding`` exactly as a turn would (delivery, then projection)."""
    from desktop.pi.delivery import deliver
    from desktop.pi.projection import project

    return project(binding.model, deliver(messages, binding.model, binding.fallback), binding.options)


def next_messages(runtime: SessionRuntime) -> list[Any]:
    """The context of the next request: the history plus the system update it would carry."""
    messages = list(runtime.view().messages)
    pending = runtime.pending_system_fields()
    if pending is not None:
        messages.append(pending["modelSystem"]["message"])
    return messages


def route_preview(
    runtime: SessionRuntime,
    choice: RouteChoice,
    *,
    current: bool,
    fallback: FallbackDelivery,
    session_id: str,
    sent: bytes | None,
    draft: str | None = None,
) -> dict[str, Any]:
    """The payload tab for ``choice``: the current route's next request, or another route's.

    With ``draft`` (``/payload next DRAFT``, design G8) it is the first request of the turn that
    sending the draft would start, as ``SessionRuntime.next_request(draft)`` builds it.

    ``sent`` is the body last sent on that route; without one, the request behind the last
    reply is re-projected, so the cache break is shown from the first preview on.
    """
    try:
        if current:
            binding = for_preview(runtime.route)
        else:
            binding = preview_binding(choice.route, fallback, session_id)
        api = str(binding.model["api"])
        messages = next_messages(runtime)
        if draft is not None:
            messages.append(runtime.draft_message(draft))
        request = request_for_binding(runtime, binding, messages)
        previous = sent
        previous_label = "the last request sent on this route"
        if previous is None:
            before = previous_messages(runtime)
            if before is not None:
                previous = request_for_binding(runtime, binding, before).body_bytes
                previous_label = "the request behind the last reply, re-projected"
        label = (
            choice.label + (" — current route" if current else "") + (" — with your draft" if draft else "")
        )
        return build_preview(
            request,
            label=label,
            api=api,
            previous=previous,
            previous_label=previous_label,
            offline=choice.route.offline,
        )
    except Exception as exc:
        log.info("preview for %s failed: %s", choice.key, exc)
        return {"route": choice.label, "error": f"{type(exc).__name__}: {exc}"}
