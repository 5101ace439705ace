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
from desktop.pi.projection._cache import resolve_cache_retention
from desktop.pi.projection._headers import merge_headers
from desktop.pi.types import Message, Model


def request_options(options: RequestOptions) -> dict[str, Any]:
    """The ``options`` member, in pi-ai's key order, unset values left out."""
    values = {
        "temperature": options.temperature,
        "maxTokens": options.max_tokens,
        "reasoning": options.reasoning,
        "cacheRetention": resolve_cache_retention(options, None),
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
    defaults = {
        "authorization": f"Bearer {options.api_key}",
        "accept": "text/event-stream",
        "content-type": "application/json",
    }
    # pi-ai spreads the caller's headers over its own: nothing removes a default header.
    headers = {**defaults, **merge_headers(options.headers)}
    body = {"model": model["id"], "context": {"messages": messages}, "options": request_options(options)}
    return ProviderRequest(method="POST", url=url, headers=headers, body=body)
