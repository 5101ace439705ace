"""Which kind of credential a route will use, decided where the key lives (design P5).

The projection never sees a key (it holds the placeholder), yet some request bodies depend on
the kind of credential: an Anthropic OAuth token, a ChatGPT sign-in token on OpenAI's own
endpoint, Vertex with an API key or Application Default Credentials, Bedrock with a bearer
token or SigV4. The host looks the credential up exactly where dispatch will (the account's
``env:NAME`` reference, else the keyring entry, else the provider's variables in the one table
``desktop.host.credentials``), reads its kind as pi-ai 1.0.3 reads a key, and hands only the
kind to the projection (``RequestOptions.credential_kind``). The value never leaves this
function.

With no credential at all the kind is the one the route would use (Vertex: ADC, Bedrock:
SigV4, otherwise a key of the API's usual kind), ``assumed`` is set and :meth:`note` says so;
the payload command and the Payload tab show that note.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, NamedTuple

from desktop.host.accounts import resolve_api_key
from desktop.host.credentials import API_KEY_ENV, env_api_key, keyring_username
from desktop.pi.projection import CredentialKind
from desktop.pi.projection._credential import DESCRIPTIONS, kind_of_key, usual_kind
from desktop.pi.routes import Route


class RouteCredential(NamedTuple):
    """The kind of credential a route's requests are built for, and where it comes from."""

    kind: CredentialKind
    #: Where the credential comes from, for people (never the value).
    source: str
    #: No credential was found: ``kind`` is what the route would use.
    assumed: bool = False

    def note(self) -> str | None:
        """One line for the preview when the kind is assumed (``None`` otherwise)."""
        if not self.assumed:
            return None
        return (
            f"no credential found ({self.source}); the preview assumes {DESCRIPTIONS[self.kind]}, "
            "the kind this route uses"
        )

    def describe(self) -> str:
        return f"{DESCRIPTIONS[self.kind]} from {self.source}" + (" (assumed)" if self.assumed else "")


def _keyless_kind(api: str) -> CredentialKind:
    """What dispatch does without a key: Vertex uses ADC, Bedrock signs with SigV4."""
    if api == "google-vertex":
        return "adc"
    if api == "bedrock-converse-stream":
        return "sigv4"
    return usual_kind(api)


def _lookup(route: Route, env: Mapping[str, str]) -> tuple[str | None, str]:
    """The key dispatch will send and where it comes from (the dispatcher's own order)."""
    ref = route.account.api_key_ref or ""
    if ref.startswith("env:"):
        name = ref[4:]
        return env.get(name) or None, f"environment variable {name}"
    user = keyring_username(route.provider, route.account.name)
    key, info = resolve_api_key(route.provider, user, env)
    if info.source == "keyring":
        return key, f"keyring entry {user}"
    if info.source == "env":
        return key, f"environment variable {info.detail}"
    names = " or ".join(API_KEY_ENV.get(route.provider, ()))
    return None, f"keyring entry {user}" + (f", {names}" if names else "")


def unread_credential(model: Mapping[str, Any]) -> RouteCredential:
    """For a command that builds no request (``status``): the kind the route would use, without
    reading the keyring (whose backend search costs more than the whole command, the status budget)."""
    return RouteCredential(
        _keyless_kind(str(model.get("api", ""))),
        "not looked up: this command builds no request",
        assumed=True,
    )


def route_credential(
    model: Mapping[str, Any], route: Route, *, env: Mapping[str, str] | None = None
) -> RouteCredential:
    """The kind of credential requests on ``route`` (projected for ``model``) are built for."""
    api = str(model.get("api", ""))
    if route.offline:
        return RouteCredential(_keyless_kind(api), "the offline emulator (no credential is sent)")
    key, source = _lookup(route, os.environ if env is None else env)
    if key:
        return RouteCredential(kind_of_key(model, key), source)
    kind = _keyless_kind(api)
    if kind == "adc":
        return RouteCredential(kind, "Application Default Credentials (no Vertex API key found)")
    if kind == "sigv4":
        return RouteCredential(kind, "the AWS credential chain (no Bedrock API key found)")
    return RouteCredential(kind, source, assumed=True)


def key_credential(
    model: Mapping[str, Any], key: str | None, env: Mapping[str, str] | None = None
) -> RouteCredential:
    """The kind for a pi-ai style call (``payload --context``): ``key`` when the caller gave one,
    else the provider's variable in ``env`` (the process environment), as pi-ai's
    ``streamSimple`` looks one up; without either, the kind the route would use, assumed."""
    source_env = os.environ if env is None else env
    provider = str(model.get("provider", ""))
    if key is not None and key.strip():
        return RouteCredential(kind_of_key(model, key), "the document's options.apiKey")
    found = env_api_key(provider, source_env)
    if found is not None:
        name, value = found
        return RouteCredential(kind_of_key(model, value), f"environment variable {name}")
    api = str(model.get("api", ""))
    kind = _keyless_kind(api)
    names = " or ".join(API_KEY_ENV.get(provider, ()))
    if kind in ("adc", "sigv4"):
        return RouteCredential(kind, f"no key in {names or 'the environment'}")
    return RouteCredential(kind, f"no options.apiKey{', ' + names if names else ''}", assumed=True)
