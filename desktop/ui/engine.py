"""Moved to ``desktop.session.inspector`` (the window and the command line share it).

Re-exported here for code written against the old place; new code imports from
``desktop.session.inspector.routes``, ``.preview`` and ``.activation``.
"""

from desktop.session.inspector.activation import activation_info
from desktop.session.inspector.preview import (
    PRETTY_LIMIT,
    PREVIEW_KEY,
    build_preview,
    for_preview,
    next_messages,
    preview_binding,
    previous_messages,
    request_for_binding,
    route_preview,
    sent_headers,
)
from desktop.session.inspector.routes import (
    DEFAULT_OFFLINE_ROUTE,
    PUBLISHED_ROUTES,
    RouteChoice,
    capability_info,
    pick_route,
    projector_available,
    route_choices,
)

__all__ = [
    "DEFAULT_OFFLINE_ROUTE",
    "PRETTY_LIMIT",
    "PREVIEW_KEY",
    "PUBLISHED_ROUTES",
    "RouteChoice",
    "activation_info",
    "build_preview",
    "capability_info",
    "for_preview",
    "next_messages",
    "pick_route",
    "preview_binding",
    "previous_messages",
    "projector_available",
    "request_for_binding",
    "route_choices",
    "route_preview",
    "sent_headers",
]
