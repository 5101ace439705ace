"""Routes: which published model a session talks to, and through which account (design M2).

A route keeps the *published identity* (provider, model id, API, endpoint as Pi publishes them)
separate from the *account* (key reference, optional endpoint override, extra headers), because
transport flags belong to the published binding and may only be used when the request really goes
there. ``resolve_model`` turns a route into the pi-ai ``Model`` dict a projection uses, and says
whether the transport flags were verified and why.

The emulator route family points a published model at the loopback provider emulator. It is
always labelled offline. By default it gets the conservative fallback like any other endpoint that
is not the official one; ``emulated=True`` declares that the emulator stands in for the official
endpoint (tests, benchmarks, the offline demo), and then the published flags are kept so the
emulator sees exactly the requests the official endpoint would.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Literal, NamedTuple
from urllib.parse import urlsplit

from desktop.pi.catalog import Catalog, CatalogEntry, RouteError, active_catalog
from desktop.pi.catalog.transport import (
    SYSTEM_MESSAGES,
    TRANSPORT_FLAGS,
    Binding,
    normalize_base_url,
    transport_flags,
    without_transport_flags,
)

EMULATOR_FAMILY = "emulator"
"""Route strings ``emulator/<provider>/<model id>`` name the emulator stand-in of a published model."""

UNKNOWN_CONTEXT_WINDOW = 128_000
UNKNOWN_MAX_TOKENS = 16_384

FallbackCause = Literal[
    "unknown model",
    "models.dev-only record",
    "alias",
    "api mismatch",
    "relay",
    "offline emulator",
    "endpoint override",
]
ModelSource = Literal["pi", "models.dev", "unknown"]


class Account(NamedTuple):
    """How requests are authenticated and where they go. Never holds a secret.

    ``api_key_ref`` is a *reference* the host resolves (``"env:DEEPSEEK_API_KEY"``,
    ``"keyring:pi-desktop/deepseek/work"``). ``headers`` are extra, non-secret request headers.
    """

    name: str = "default"
    api_key_ref: str | None = None
    base_url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()

    @classmethod
    def make(
        cls,
        name: str = "default",
        *,
        api_key_ref: str | None = None,
        base_url: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Account:
        return cls(
            name=name, api_key_ref=api_key_ref, base_url=base_url, headers=tuple((headers or {}).items())
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        if self.api_key_ref is not None:
            out["apiKeyRef"] = self.api_key_ref
        if self.base_url is not None:
            out["baseUrl"] = self.base_url
        if self.headers:
            out["headers"] = dict(self.headers)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Account:
        return cls.make(
            str(data.get("name", "default")),
            api_key_ref=data.get("apiKeyRef"),
            base_url=data.get("baseUrl"),
            headers=data.get("headers"),
        )


class Route(NamedTuple):
    """Published identity + account. ``api``/``base_url`` default to the catalog's binding.

    ``emulator`` is the loopback origin of the provider emulator (``http://127.0.0.1:PORT``);
    when set the route is offline. ``emulated`` says the emulator stands in for the official
    endpoint, so the published transport flags are kept.
    """

    provider: str
    model: str
    api: str | None = None
    base_url: str | None = None
    account: Account = Account()
    emulator: str | None = None
    emulated: bool = False

    @property
    def offline(self) -> bool:
        return self.emulator is not None

    @property
    def key(self) -> str:
        return f"{self.provider}/{self.model}"

    def label(self) -> str:
        if self.emulator is None:
            return self.key if self.account.name == "default" else f"{self.key} ({self.account.name})"
        role = "stands in for the official endpoint" if self.emulated else "not the official endpoint"
        return f"{EMULATOR_FAMILY}/{self.key} (offline emulator at {self.emulator}; {role})"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"provider": self.provider, "model": self.model}
        if self.api is not None:
            out["api"] = self.api
        if self.base_url is not None:
            out["baseUrl"] = self.base_url
        out["account"] = self.account.to_json()
        if self.emulator is not None:
            out["emulator"] = self.emulator
            out["emulated"] = self.emulated
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Route:
        try:
            provider, model = str(data["provider"]), str(data["model"])
        except KeyError as exc:
            raise RouteError(f"a saved route needs {exc.args[0]!r}; got keys {sorted(data)}") from exc
        account = data.get("account")
        return cls(
            provider=provider,
            model=model,
            api=data.get("api"),
            base_url=data.get("baseUrl"),
            account=Account.from_json(account) if isinstance(account, Mapping) else Account(),
            emulator=data.get("emulator"),
            emulated=bool(data.get("emulated", False)),
        )


def route_from_string(
    text: str,
    *,
    account: Account | None = None,
    emulator: str | None = None,
) -> Route:
    """``"provider/model-id"`` (the model id may contain slashes, e.g. ``openrouter/openai/gpt-5.5``)
    or ``"emulator/provider/model-id"``, which needs the emulator origin."""
    provider, sep, model = text.strip().partition("/")
    if provider == EMULATOR_FAMILY:
        if emulator is None:
            raise RouteError(f"route {text!r} names the emulator; pass the emulator's loopback origin")
        return emulator_route(model, emulator, account=account)
    if not sep or not provider or not model:
        raise RouteError(
            f'route {text!r} must look like "provider/model-id", e.g. "anthropic/claude-opus-5-5"'
        )
    return Route(provider=provider, model=model, account=account or Account())


def emulator_route(
    published: str | Route, origin: str, *, emulated: bool = False, account: Account | None = None
) -> Route:
    """The emulator stand-in of a published route (``"provider/model-id"`` or a Route)."""
    base = published if isinstance(published, Route) else route_from_string(published)
    if not origin.startswith(("http://127.", "http://localhost", "http://[::1]")):
        raise RouteError(f"the emulator must listen on loopback (http://127.0.0.1:PORT), got {origin!r}")
    return base._replace(account=account or base.account, emulator=origin.rstrip("/"), emulated=emulated)


def emulator_base_url(origin: str, provider: str, published_base_url: str) -> str:
    """Where requests for a published binding go on the emulator: ``<origin>/<provider><path>``.

    The published path is kept (``/v1`` for OpenAI, nothing for Anthropic) so clients append their
    usual endpoints, and the first path segment tells the emulator which provider it imitates.
    """
    path = urlsplit(published_base_url).path.rstrip("/")
    return f"{origin.rstrip('/')}/{provider}{path}"


class ResolvedModel(NamedTuple):
    """A route resolved against the catalog: the model dict to project with, and the verdict.

    ``transport_verified`` is true when the request goes to exactly the binding Pi published; the
    model dict then carries Pi's (patched) flags for it, which may be none. Otherwise all five
    flags are removed and ``fallback_cause`` and ``reason`` say why.
    """

    route: Route
    model: dict[str, Any]
    transport_verified: bool
    reason: str
    published: Binding
    request_base_url: str
    source: ModelSource
    flags: Mapping[str, bool]
    published_flags: Mapping[str, bool]
    fallback_cause: FallbackCause | None = None
    patches: tuple[str, ...] = ()

    @property
    def offline(self) -> bool:
        return self.route.offline

    def journal_route(self) -> dict[str, Any]:
        """The ``route`` object of an assistant journal row (no secrets, no key reference)."""
        out: dict[str, Any] = {
            "provider": self.published.provider,
            "model": self.published.model_id,
            "api": self.published.api,
            "baseUrl": self.request_base_url,
            "account": self.route.account.name,
        }
        if normalize_base_url(self.request_base_url) != normalize_base_url(self.published.base_url):
            out["publishedBaseUrl"] = self.published.base_url
        if self.route.offline:
            out["emulator"] = True
            out["emulated"] = self.route.emulated
        return out


def _merge_headers(
    base: Mapping[str, str] | None, extra: tuple[tuple[str, str], ...]
) -> dict[str, str] | None:
    if not base and not extra:
        return None
    merged = dict(base or {})
    for name, value in extra:
        for existing in [k for k in merged if k.lower() == name.lower()]:
            del merged[existing]
        merged[name] = value
    return merged


def _unknown_model(route: Route, catalog: Catalog) -> tuple[dict[str, Any], Binding]:
    usual = catalog.usual_binding(route.provider)
    api = route.api or (usual[0] if usual else None)
    base_url = route.base_url if route.base_url is not None else (usual[1] if usual else None)
    if api is None or base_url is None:
        raise RouteError(
            f"unknown model {route.key}: neither Pi nor models.dev publishes it and provider "
            f"{route.provider!r} is unknown, so its API and endpoint cannot be guessed; "
            "give the route an api and base_url"
        )
    model: dict[str, Any] = {
        "id": route.model,
        "name": route.model,
        "api": api,
        "provider": route.provider,
        "baseUrl": base_url,
        "reasoning": False,
        "input": ["text"],
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
        "contextWindow": UNKNOWN_CONTEXT_WINDOW,
        "maxTokens": UNKNOWN_MAX_TOKENS,
        "type": "chat",
    }
    return model, Binding(route.provider, route.model, api, base_url)


def _describe_flags(flags: Mapping[str, bool]) -> str:
    on = [name for name in TRANSPORT_FLAGS if flags.get(name)]
    return ", ".join(on) if on else "no transport flags"


def _verdict(
    route: Route, entry: CatalogEntry | None, published: Binding, catalog: Catalog
) -> tuple[FallbackCause | None, str]:
    """Why a route does or does not get the published flags (first failing check wins)."""
    if entry is None or not entry.in_pi:
        aliases = catalog.aliases_of(route.provider, route.model)
        if aliases:
            return "alias", (
                f"{route.key} is not a Pi-published id; Pi publishes it as {route.provider}/{aliases[0]}. "
                "Aliases do not inherit transport flags"
            )
        if entry is None:
            return "unknown model", (
                f"{route.key} is published by neither Pi nor models.dev; nothing is known about its transport"
            )
        return "models.dev-only record", (
            f"{route.key} is known only from models.dev (limits and prices); transport flags come only from "
            "Pi's exact published model, never from a models.dev record"
        )
    pi_binding = entry.binding
    if published.api != pi_binding.api:
        return "api mismatch", (
            f"{route.key} is requested via {published.api}, but Pi publishes it for {pi_binding.api}"
        )
    if normalize_base_url(published.base_url) != normalize_base_url(pi_binding.base_url):
        return "relay", (
            f"{route.key} is sent to {published.base_url or '(no endpoint)'}, a relay or proxy of Pi's "
            f"binding at {pi_binding.base_url or '(no endpoint)'}; relays do not inherit transport flags"
        )
    if route.emulator is not None:
        if not route.emulated:
            return "offline emulator", (
                f"offline emulator route for {route.key}: the loopback emulator is not the official endpoint "
                "(emulated=True makes it stand in for the official endpoint)"
            )
        return None, (
            f"offline emulator that stands in for the official endpoint of {pi_binding.describe()}; "
            f"Pi's flags for that binding apply: {_describe_flags(entry.flags)}"
        )
    override = route.account.base_url
    if override is not None and normalize_base_url(override) != normalize_base_url(pi_binding.base_url):
        return "endpoint override", (
            f"account {route.account.name!r} overrides the endpoint of {route.key} with {override}; "
            f"Pi's flags belong to {pi_binding.base_url or '(no endpoint)'} only"
        )
    text = f"exact Pi binding {pi_binding.describe()}: {_describe_flags(entry.flags)}"
    if entry.patches:
        text += f" (corrected by patch {', '.join(entry.patches)})"
    if not entry.flags[SYSTEM_MESSAGES]:
        elsewhere = catalog.flagged_elsewhere(route.provider, route.model)
        if elsewhere:
            text += (
                f"; Pi flags the same model only at other bindings ({', '.join(e.key for e in elsewhere[:3])}), "
                "and aliases and relays do not inherit them"
            )
    return None, text


def resolve_model(route: Route, catalog: Catalog | None = None) -> ResolvedModel:
    """The pi-ai Model dict for ``route`` plus whether its transport flags are verified, and why."""
    catalog = catalog or active_catalog()
    entry = catalog.get(route.provider, route.model)
    if entry is None:
        model, catalog_binding = _unknown_model(route, catalog)
        source: ModelSource = "unknown"
        published_flags = transport_flags({})
    else:
        model = copy.deepcopy(dict(entry.model))
        catalog_binding = entry.binding
        source = entry.source
        published_flags = dict(entry.flags)
    published = Binding(
        provider=route.provider,
        model_id=route.model,
        api=route.api or catalog_binding.api,
        base_url=route.base_url if route.base_url is not None else catalog_binding.base_url,
    )
    if route.emulator is not None:
        request_base_url = emulator_base_url(route.emulator, route.provider, published.base_url)
    elif route.account.base_url is not None:
        request_base_url = route.account.base_url
    else:
        request_base_url = published.base_url

    cause, reason = _verdict(route, entry, published, catalog)
    verified = cause is None
    if not verified:
        model = without_transport_flags(model)
        reason = f"conservative fallback (all transport flags off): {reason}"
    model["api"] = published.api
    model["baseUrl"] = request_base_url
    headers = _merge_headers(model.get("headers"), route.account.headers)
    if headers is not None:
        model["headers"] = headers
    return ResolvedModel(
        route=route,
        model=model,
        transport_verified=verified,
        reason=reason,
        published=published,
        request_base_url=request_base_url,
        source=source,
        flags=transport_flags(model),
        published_flags=published_flags,
        fallback_cause=cause,
        patches=entry.patches if entry is not None else (),
    )
