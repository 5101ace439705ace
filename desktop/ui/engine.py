"""The session engine the worker thread drives: routes, dispatch, tools, previews (no Qt).

Everything here runs on the worker thread only. It glues the layers together the way the
window needs them: which routes the switcher offers (the offline emulator stand-ins of
published models, plus real routes for providers that have a key), how a route becomes the
runtime's ``RouteBinding``, the HTTP dispatcher, the tool host, and the payload preview with
its cache break. Keeping it free of Qt keeps it testable without a display; it could move to
``desktop/session`` once the command line needs the same assembly.
"""

from __future__ import annotations

import importlib.util
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from desktop.pi.capability import capability_status
from desktop.pi.delivery import FallbackDelivery
from desktop.pi.projection import PROJECTORS, ProviderRequest, RequestOptions
from desktop.pi.routes import Route, emulator_route, resolve_model, route_from_string
from desktop.pi.types import AssistantMessage, Model, Tool, ToolCall, ToolResultMessage
from desktop.session.runtime import EventSink, RouteBinding, SessionRuntime
from desktop.ui.payload_text import char_offset, common_prefix, pretty_json

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
DEFAULT_OFFLINE_ROUTE = "emulator/anthropic/claude-opus-5-5"
PREVIEW_KEY = "<api-key>"
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


def bind_route(
    route: Route, fallback: FallbackDelivery, session_id: str | None = None
) -> tuple[Any, RouteBinding]:
    """The resolved model (flags verified or withdrawn) and the runtime binding for it."""
    resolved = resolve_model(route)
    binding = RouteBinding(
        model=resolved.model,  # type: ignore[arg-type]
        identity=resolved.journal_route(),
        options=RequestOptions(session_id=session_id),
        fallback=fallback,
    )
    return resolved, binding


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


class HttpDispatcher:
    """The runtime's dispatcher: the projected bytes go out unchanged, the key is added last."""

    def __init__(self, api_key: str | None) -> None:
        self._api_key = api_key

    def __call__(
        self, request: ProviderRequest, model: Model, *, on_event: EventSink, cancel: threading.Event
    ) -> AssistantMessage:
        from desktop.host.providers import WireRequest, send_streaming

        wire = WireRequest(
            url=request.url, body=request.body_bytes, headers=dict(request.headers), method=request.method
        )
        message: AssistantMessage = send_streaming(  # type: ignore[assignment]
            wire, model=model, api_key=self._api_key, cancel=cancel, on_event=on_event
        )
        return message


class NoTools:
    """Until a tools layer is attached: no declarations, and every call explains why it failed."""

    why = "The tools layer is not available in this build, so no tool can run."

    def declarations(self) -> list[Tool]:
        return []

    def activation_section(self) -> str | None:
        return None

    def execute(self, call: ToolCall, *, cancel: threading.Event) -> ToolResultMessage:
        return {
            "role": "toolResult",
            "toolCallId": call["id"],
            "toolName": call["name"],
            "content": [{"type": "text", "text": self.why}],
            "isError": True,
            "timestamp": 0,
        }


def preview_headers(request: ProviderRequest, api: str) -> dict[str, str]:
    """Redacted headers, with the auth header the client will add shown (redacted) too."""
    headers = dict(request.headers)
    try:
        from desktop.host.providers import with_auth

        headers = with_auth(headers, api, PREVIEW_KEY)
    except ImportError:
        pass
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
    runtime: SessionRuntime, binding: RouteBinding, messages: Sequence[Any]
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


def activation_info(tools: Any, rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """What the Activation tab shows, read from the tool host (a ``ToolGate`` adapter)."""
    describe: Callable[[Sequence[Mapping[str, Any]]], dict[str, Any]] | None = getattr(
        tools, "describe", None
    )
    if describe is None:
        return {
            "available": False,
            "why": getattr(tools, "why", "This tool host reports no activation state."),
        }
    return describe(rows)
