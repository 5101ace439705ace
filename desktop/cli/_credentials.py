"""Say why a route cannot send (no stream reader for its API, or which API key it lacks and
where to put it) before anything is created, locked or sent (design D6).

The lookup is the dispatcher's own (``desktop.session.assembly``): an ``env:NAME`` account
reference, else the keyring entry ``<provider>/<account>`` under service ``pi-desktop``, else
the provider's environment variables. Providers whose requests are signed by a cloud
credential chain (Bedrock SigV4, Vertex ADC) and providers with no known key variable (a
local server may need none) are left to the dispatch, which reports its own errors.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from desktop.host.accounts import ENV_API_KEYS, SERVICE, keyring_username, resolve_api_key

if TYPE_CHECKING:
    from desktop.pi.routes import Route

#: Providers whose requests can be authenticated without an API key (SigV4, ADC).
CLOUD_SIGNED = frozenset({"amazon-bedrock", "google-vertex"})


def missing_credential(route: Route) -> str | None:
    """A one-line explanation when the route needs a key that is nowhere; None when it has one."""
    if route.offline:
        return None
    account = route.account
    ref = account.api_key_ref or ""
    if ref.startswith("env:"):
        name = ref[4:]
        if os.environ.get(name):
            return None
        return f"no API key for {route.provider}: the account reads it from ${name}, which is not set"
    if route.provider in CLOUD_SIGNED:
        return None

    names = ENV_API_KEYS.get(route.provider)
    if not names:
        return None
    entry = keyring_username(route.provider, account.name)
    key, _info = resolve_api_key(route.provider, entry)
    if key:
        return None
    variables = " or ".join(f"${name}" for name in names)
    return (
        f"no API key for {route.provider}: set {variables}, or store the key in the system keyring "
        f"(service {SERVICE!r}, entry {entry!r}; the window's Accounts dialog does this), "
        "or use an emulator/... route, which needs none"
    )


def unsendable_api(label: str, api: object) -> str | None:
    """A one-line refusal when no stream reader speaks the route's API; None when one does.

    ``pi-desktop payload`` can still preview such a route: only sending needs the reader.
    """
    # Lazy: the status budget.
    from desktop.pi.streaming import PARSERS

    if str(api) in PARSERS:
        return None
    return (
        f"route {label} speaks {api}, which Pi Desktop can preview (pi-desktop payload) but cannot "
        f"send yet; choose a route on one of: {', '.join(sorted(PARSERS))}"
    )
