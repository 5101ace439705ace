"""The next request as the payload tab and ``pi-desktop payload`` show it (design G4, P5, P6).

One function builds the headers the dispatch really sends (``sent_headers``), so the window's
preview and the command line's ``--headers`` cannot drift apart; ``route_preview`` is the
payload tab's whole computation: the exact bytes for the current route or another one, the
readable rendering, the cache view in the provider's terms (``desktop.pi.cache_view``:
cached and uncached tokens, cost, where the cached prefix ends and why) and, as a secondary
view, where the bytes first differ from the previous request on that route.

The current route's body is the runtime's one next request (``SessionRuntime.next_request``,
what ``pi-desktop payload`` prints and the turn's first dispatch sends), the composer's
draft included; another route projects the same messages with its own binding.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from desktop.pi.cache_retention import asks_long, clock, retention_for, route_times
from desktop.pi.cache_rules import json_spans, prompt_for_model, rule_for, shared_prefix
from desktop.pi.cache_view import check, predict
from desktop.pi.cost import usage_count
from desktop.pi.delivery import FallbackDelivery, deliver
from desktop.pi.projection import CREDENTIAL_PLACEHOLDER, ProviderRequest, project, redacted_headers
from desktop.pi.routes import Route, resolve_model
from desktop.pi.token_units import CHARACTER_RULE, count_tokens, tokenizer_name
from desktop.session.assembly import route_binding
from desktop.session.dispatch import with_credential
from desktop.session.inspector.payload_text import char_offset, common_prefix, common_suffix, pretty_json
from desktop.session.inspector.routes import RouteChoice
from desktop.session.runtime import SessionRoute, SessionRuntime

log = logging.getLogger(__name__)

PREVIEW_KEY = CREDENTIAL_PLACEHOLDER
PRETTY_LIMIT = 4_000_000


def sent_headers(request: ProviderRequest, *, offline: bool) -> dict[str, str]:
    """The headers the dispatch sends (``desktop.session.dispatch.with_credential``), redacted:
    a credential header when the route has a key, none on the keyless emulator."""

    headers = with_credential(request.headers, None if offline else CREDENTIAL_PLACEHOLDER)
    return redacted_headers(headers)  # the body is not read: a spliced one is built on demand


def preview_binding(route: Route, fallback: FallbackDelivery, session_id: str | None) -> SessionRoute:
    """Another route's binding for a side-by-side preview (credential placeholder, no secret)."""

    return route_binding(resolve_model(route), fallback, session_id or "")


def for_preview(binding: SessionRoute) -> SessionRoute:
    """The binding a preview projects with: the credential stays the placeholder."""
    return binding._replace(options=binding.options._replace(api_key=CREDENTIAL_PLACEHOLDER))


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
        "prettyMap": pretty,
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


def request_for_binding(binding: SessionRoute, messages: Sequence[Any]) -> ProviderRequest:
    """Project ``messages`` for ``binding`` exactly as a turn would (delivery, then projection)."""
    return project(binding.model, deliver(messages, binding.model, binding.fallback), binding.options)


def cache_figures(
    model: Mapping[str, Any], body: bytes, sent: Sequence[bytes], pretty: Any | None
) -> dict[str, Any]:
    """The cache view of ``body`` after the bodies ``sent`` on the route (design P6, G4): the
    provider's predicted cached and uncached tokens, cost, where the cached prefix ends (as a
    position in the raw and the readable text) and why."""

    prediction = predict(model, body, sent)
    marker, start, end = cached_spans(model, body, prediction.usage.read_segments)
    end_chars = char_offset(body, marker)
    start_chars, tint_chars = char_offset(body, start), char_offset(body, end)
    return {
        "total": prediction.total,
        "cached": prediction.cached,
        "written": prediction.written,
        # Uncached as the what-if counts it: fresh input plus cache writes, everything the
        # provider processes without the cache; ``fresh`` alone is the rest of the prompt.
        "uncached": prediction.total - prediction.cached,
        "fresh": prediction.uncached,
        "cost": float(prediction.cost.get("total", 0.0)),
        "why": prediction.why,
        "rule": prediction.rule.description,
        "endsAfter": prediction.ends_after,
        "firstChange": prediction.first_change,
        "tolerance": prediction.tolerance,
        "markerByte": prediction.marker_byte,
        "endChars": end_chars,
        "endPretty": pretty.position(end_chars) if pretty is not None else end_chars,
        # The uncached part as one span of the body (from its first to its last segment).
        "uncachedStartChars": start_chars,
        "uncachedStartPretty": pretty.position(start_chars) if pretty is not None else start_chars,
        "uncachedEndChars": tint_chars,
        "uncachedEndPretty": pretty.position(tint_chars) if pretty is not None else tint_chars,
    }


def comparison(model: Mapping[str, Any], body: bytes, earlier: bytes, *, expired: bool) -> dict[str, Any]:
    """What the cache would read were ``earlier`` still held: shown beside the cold or
    expired prediction, never as it (design P8, P9)."""

    warm = predict(model, body, [earlier])
    share = warm.cached / warm.total if warm.total else 0.0
    if expired:
        lead = "For comparison, had the cache not expired"
        tail = "The provider's retention has passed since this route was last used."
    else:
        lead = "For comparison, had the request behind the last reply been sent on this route"
        tail = "This route has no request in this session yet, so its provider holds none of it."
    return {
        "cached": warm.cached,
        "total": warm.total,
        "cost": float(warm.cost.get("total", 0.0)),
        "text": f"{lead}: {warm.cached:,} of {warm.total:,} input tokens cached ({share:.0%}). {tail}",
    }


def timed_cache_figures(
    runtime: SessionRuntime,
    model: Mapping[str, Any],
    request: ProviderRequest,
    history: Sequence[bytes],
    reprojected: bytes | None,
    pretty: Any | None,
    now_ms: int | None,
) -> dict[str, Any]:
    """The cache figures from what the provider holds now: the bodies sent on the route in
    this run, or else the re-projected last request when the journal has replies on this
    route, kept only while the provider's retention lasts (design P8, P9). The window's
    countdown re-derives the state from ``clock`` (the last use and the retention)."""

    body = request.body_bytes
    now = now_ms if now_ms is not None else time.time_ns() // 1_000_000
    times = route_times(runtime.view().messages, model)
    held = list(history) or ([reprojected] if reprojected is not None and times else [])
    rule = rule_for(str(model.get("api", "")), str(model.get("provider", ""))).name
    retention = retention_for(rule, long=asks_long(request.body))
    if history and not times:  # sent in this run but not journaled yet: just used
        times = [now]
    state = clock(times if held else [], retention, now)
    used = held if state.warm else []
    figures = cache_figures(model, body, used, pretty)
    figures["basis"] = state.state
    stamps = [t for t in times if isinstance(t, int) and not isinstance(t, bool)]
    figures["clock"] = {
        **state.to_json(),
        "label": state.label(),
        "lastUseMs": stamps[-1] if stamps and state.state in ("warm", "expired") else None,
    }
    if not used and (held or reprojected is not None):
        earlier = held[-1] if held else reprojected
        assert earlier is not None
        figures["comparison"] = comparison(model, body, earlier, expired=state.state == "expired")
    cold = figures if not used else cache_figures(model, body, [], None)
    figures["nextSend"] = {"now": figures["cost"], "afterExpiry": cold["cost"]}
    figures["units"] = calibrated_units(runtime.view().messages, model, held, figures["total"], body)
    return figures


def calibrated_units(
    messages: Sequence[Any], model: Mapping[str, Any], held: Sequence[bytes], total: int, body: bytes = b""
) -> dict[str, Any]:
    """Which figures are the provider's (design P6, P12): the last reply on the route reports
    the input tokens of the request behind it, so that prefix is counted in the provider's
    units and only what the next request adds is estimated, with the route's public tokenizer
    where there is one (OpenAI's ``o200k_base``), else four characters per token."""

    usage: Mapping[str, Any] | None = None
    for message in reversed(messages):
        if isinstance(message, Mapping) and message.get("role") == "assistant":
            if (message.get("provider"), message.get("model")) == (model.get("provider"), model.get("id")):
                found = message.get("usage")
                usage = found if isinstance(found, Mapping) else None
            break
    reported = sum(usage_count(usage, key) for key in ("input", "cacheRead", "cacheWrite"))
    tokenizer = tokenizer_name(model) if body else None
    if not reported or not held:
        if tokenizer is None:
            return {
                "kind": "estimated",
                "total": total,
                "method": CHARACTER_RULE,
                "note": f"estimated: {CHARACTER_RULE}",
            }
        whole, method = count_tokens(model, prompt_for_model(model, orjson.loads(body)).text)
        return {"kind": "estimated", "total": whole, "method": method, "note": f"estimated: {method}"}
    if tokenizer is None:  # the cache rules' own count of what was added
        added, method = max(0, total - predict(model, held[-1]).total), CHARACTER_RULE
    else:
        texts = [s.text for s in prompt_for_model(model, orjson.loads(body)).segments]
        before = [s.text for s in prompt_for_model(model, orjson.loads(held[-1])).segments]
        kept = shared_prefix(before, texts)
        added, method = count_tokens(model, "".join(t + "\n" for t in texts[kept:]))
    return {
        "kind": "calibrated",
        "total": reported + added,
        "reported": reported,
        "estimated": added,
        "method": method,
        "note": (
            f"calibrated: {reported:,} tokens as the provider reported them for the last request, "
            f"{added:,} added since estimated ({method})"
        ),
    }


def cached_spans(model: Mapping[str, Any], body: bytes, whole: int) -> tuple[int, int, int]:
    """Byte offsets in ``body``: where the last wholly cached part *in the provider's cache
    order* ends (the marker; a request's JSON order differs: Anthropic caches tools first but
    the body lists them after the messages), and the span the uncached parts cover."""

    decoded = orjson.loads(body)
    segments = prompt_for_model(model, decoded).segments
    first = max(whole - 1, 0)
    spans = json_spans(decoded, [segment.path for segment in segments[first:]])  # one pass
    last = spans[0] if whole > 0 and spans else None
    rest = [s for s in spans[whole - first :] if s is not None]
    marker = last[1] if last is not None else 0
    if not rest:
        return marker, len(body), len(body)
    return marker, min(a for a, _ in rest), max(b for _, b in rest)


def check_text(
    model: Mapping[str, Any], body: bytes, sent: Sequence[bytes], usage: Mapping[str, Any]
) -> dict[str, Any]:
    """After a request: its prediction (from the bodies sent before it) against the usage the
    provider reported, as the payload tab shows it."""

    prediction = predict(model, body, sent)
    verdict = check(prediction, usage)
    reported = int(usage.get("cacheRead") or 0)
    basis = "" if sent else " (a cold cache: the first request on this route in this session)"
    if verdict.ok:
        unit = "exactly" if verdict.tolerance == 0 else f"within {verdict.tolerance:,} tokens"
        text = (
            f"Last request: predicted {verdict.predicted_cached:,} cached tokens{basis}, the provider "
            f"reported {reported:,} — the prediction held ({unit})."
        )
    else:
        text = f"Last request: the prediction missed — {verdict.mismatch}."
    return {"ok": verdict.ok, "text": text, "predicted": verdict.predicted_cached, "reported": reported}


def route_preview(
    runtime: SessionRuntime,
    choice: RouteChoice,
    *,
    current: bool,
    fallback: FallbackDelivery,
    session_id: str,
    sent: bytes | Sequence[bytes] | None,
    draft: str | None = None,
    check: Mapping[str, Any] | None = None,
    now_ms: int | None = None,
) -> dict[str, Any]:
    """The payload tab for ``choice``: the current route's next request, or another route's.

    With ``draft`` (the composer's text, or ``/payload next DRAFT``, design G8) it is the
    first request of the turn that sending the draft would start, as
    ``SessionRuntime.next_request(draft)`` builds it.

    ``sent`` are the bodies sent on that route in this run, oldest first (the provider's
    cache holds what they wrote); without any, the request behind the last reply is
    re-projected and taken as sent, so the cache view and the byte diff are shown from the
    first preview on. ``check`` is the last request's prediction against its reported usage,
    shown with the view.

    Retention (design P9): the replies on the route in the journal say when its provider
    cache was last used; past the provider's retention (at ``now_ms``, the wall clock by
    default) the prediction is expired, with the warm figure as the comparison.
    """
    try:
        if current:
            binding = for_preview(runtime.route)
            request = runtime.next_request(draft=draft)  # the runtime's one next request (P5)
        else:
            binding = preview_binding(choice.route, fallback, session_id)
            request = runtime.next_request(draft=draft, route=binding)  # the same, on another route
        api = str(binding.model["api"])
        history = [sent] if isinstance(sent, bytes) else list(sent or ())
        previous_label = "the last request sent on this route"
        # The provider holds only what this session sent on the route: with nothing sent yet
        # its cache is cold, whatever earlier replies on other routes re-project to. That
        # re-projection is kept as the byte diff's baseline and a comparison, never as the
        # prediction (design P8).
        reprojected: bytes | None = None
        if not history:
            before = previous_messages(runtime)
            if before is not None:
                reprojected = request_for_binding(binding, before).body_bytes
                previous_label = "the request behind the last reply, re-projected"
        label = (
            choice.label + (" — current route" if current else "") + (" — with your draft" if draft else "")
        )
        preview = build_preview(
            request,
            label=label,
            api=api,
            previous=history[-1] if history else reprojected,
            previous_label=previous_label,
            offline=choice.route.offline,
        )
        # No credential found: the body assumes the kind the route would use (design P5).
        preview["credentialNote"] = binding.credential_note
        preview["draft"] = draft
        pretty = preview.pop("prettyMap", None)
        try:
            preview["cache"] = timed_cache_figures(
                runtime, binding.model, request, history, reprojected, pretty, now_ms
            )
        except Exception as exc:  # a body the rules cannot read: say so, keep the preview
            log.info("cache view for %s failed: %s", choice.key, exc)
            preview["cache"] = {"error": f"{type(exc).__name__}: {exc}"}
        if current and draft is None and "error" not in preview["cache"]:
            # The session's one context figure (design G14), the one Compact and the meter show.
            preview["cache"]["context"] = runtime.context_tokens()
        if check is not None and current:
            preview["check"] = dict(check)
        return preview
    except Exception as exc:
        log.info("preview for %s failed: %s", choice.key, exc)
        return {"route": choice.label, "error": f"{type(exc).__name__}: {exc}"}
