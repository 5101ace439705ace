"""Projection for ``pi-messages``: pi's own message protocol, spoken by the Radius gateway.

The backend receives the transcript exactly as pi-ai holds it (system messages, sections and
tool deltas in place; it does its own provider projection), plus the few request options it
honours. One POST of ``{model, context, options}`` to ``<baseUrl>/messages`` (pi-ai
``pi-messages.ts``). Options the caller left unset are omitted, so backend defaults apply; the
only environment value consulted is the legacy ``PI_CACHE_RETENTION=long`` opt-in.
"""

from __future__ import annotations

from typing import Any

from desktop.pi.projection import ProjectionError, ProviderRequest, RequestOptions
from desktop.pi.types import Message, Model


def _cache_retention(options: RequestOptions) -> str | None:
    if options.cache_retention:
        return options.cache_retention
    return "long" if options.env.get("PI_CACHE_RETENTION") == "long" else None


def request_options(options: RequestOptions) -> dict[str, Any]:
    """The ``options`` member, in pi-ai's key order, unset values left out."""
    values = {
        "temperature": options.temperature,
        "maxTokens": options.max_tokens,
        "reasoning": options.reasoning,
        "cacheRetention": _cache_retention(options),
        "sessionId": options.session_id,
        "toolChoice": options.tool_choice,
    }
    return {key: value for key, value in values.items() if value is not None}


def project(model: Model, messages: list[Message], options: RequestOptions) -> ProviderRequest:
    if not options.api_key:
        raise ProjectionError(
            f'No API key provided for provider "{model["provider"]}"; set the account\'s key (RequestOptions.api_key)'
        )
    url = model["baseUrl"].rstrip("/") + "/messages"
    if options.get("debug"):
        url += "?debug=1"
    headers: dict[str, str] = {
        "authorization": f"Bearer {options.api_key}",
        "accept": "text/event-stream",
        "content-type": "application/json",
    }
    merged: dict[str, tuple[str, str]] = {}
    for name, value in (options.headers or {}).items():
        key = name.lower()
        merged.pop(key, None)
        if value is not None:
            merged[key] = (name, value)
    headers.update(dict(merged.values()))
    body = {"model": model["id"], "context": {"messages": messages}, "options": request_options(options)}
    return ProviderRequest(method="POST", url=url, headers=headers, body=body)


__all__ = ["project", "request_options"]
