"""Which route a session starts on when the user has not chosen one.

With a key, the provider's flagship coding model on its official endpoint; with none, the
same published model on the loopback emulator, standing in for the official endpoint so the
offline demo behaves (and caches) as the real route would. Always labelled offline.
"""

from __future__ import annotations

from desktop.host.first_run import InitialRoute
from desktop.pi.routes import Route, emulator_route, route_from_string

DEFAULT_MODELS = {
    "anthropic": "anthropic/claude-opus-5-5",
    "openai": "openai/gpt-5.6-luna",
    "deepseek": "deepseek/deepseek-flash",
    "mistral": "mistral/mistral-medium-latest",
    "google": "google/gemini-3.5-flash",
}
OFFLINE_MODEL = "anthropic/claude-opus-5-5"


def default_route(initial: InitialRoute, emulator_origin: str | None) -> Route:
    if initial.offline or initial.provider not in DEFAULT_MODELS:
        if emulator_origin is None:
            raise ValueError("the offline route needs the emulator's loopback origin")
        return emulator_route(OFFLINE_MODEL, emulator_origin, emulated=True)
    return route_from_string(DEFAULT_MODELS[initial.provider])
