"""The next request a foreign session would send, on any route (design X1, P4).

The context comes from the session's own rebuilding (pi's algorithm for pi files, the model's
chain for Claude Code); the request is the one projection Desktop has for every API
(``desktop.pi.projection``), which is byte-exact with pi-ai 1.0.3. The options are the ones
pi-agent-core passes: the session id and the thinking level unless it is "off". The key is the
credential placeholder, so a preview never holds a secret.
"""

from __future__ import annotations

from desktop.pi.projection import CREDENTIAL_PLACEHOLDER, ProviderRequest, RequestOptions, project
from desktop.pi.routes import resolve_model, route_from_string
from desktop.pi.types import Model
from desktop.session.foreign.base import ForeignSession
from desktop.session.foreign.model import ForeignContext


def request_options(session: ForeignSession, context: ForeignContext) -> RequestOptions:
    level = context.thinking_level
    return RequestOptions(
        session_id=session.session_id,
        reasoning=level if level and level != "off" else None,
        api_key=CREDENTIAL_PLACEHOLDER,
    )


def route_model(route: str) -> Model:
    """The pi-ai ``Model`` of a "provider/model-id" route (raises ``RouteError`` naming it)."""
    return resolve_model(route_from_string(route)).model  # type: ignore[return-value]


def next_request(
    session: ForeignSession,
    route: str | Model,
    *,
    leaf: str | None = None,
    options: RequestOptions | None = None,
) -> ProviderRequest:
    """The exact request for the context at ``leaf`` on ``route`` (a route key or a Model)."""
    model = route_model(route) if isinstance(route, str) else route
    context = session.context(leaf)
    return project(model, context.messages, options or request_options(session, context))
