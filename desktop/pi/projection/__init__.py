"""Per-API request projection: (model, transcript, options) -> the exact request.

A projection is a pure function (design P4). The preview in the window and the dispatch
use the same ``ProviderRequest``, whose body bytes are encoded once, so what the user
inspects is byte for byte what leaves the machine. Each API lives in its own module and
registers itself here by name.
"""

from __future__ import annotations

import gc
import importlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, NamedTuple

import orjson

from desktop.pi.projection._credential import (
    CREDENTIAL_PLACEHOLDER,
    CredentialKind,
    resolve_kind,
)
from desktop.pi.transcript import normalize_context
from desktop.pi.types import Context, JsonObject, Message, Model

#: api name -> module under desktop.pi.projection that defines ``project``.
PROJECTORS: dict[str, str] = {
    "anthropic-messages": "anthropic",
    "openai-completions": "openai_completions",
    "openai-responses": "openai_responses",
    "azure-openai-responses": "azure_responses",
    "openai-codex-responses": "codex_responses",
    "mistral-conversations": "mistral",
    "google-generative-ai": "google",
    "google-vertex": "google_vertex",
    "bedrock-converse-stream": "bedrock",
    "pi-messages": "pi_messages",
}

#: ``CREDENTIAL_PLACEHOLDER`` stands in for the account's key at projection time. Projections
#: place it wherever their API carries the credential; the Host swaps in the real key just
#: before sending, so a preview or a journal never holds a secret while its bytes stay those of
#: the dispatch. The *kind* of credential is passed apart (``RequestOptions.credential_kind``).
__all__ = [
    "CREDENTIAL_PLACEHOLDER",
    "CredentialKind",
    "ProjectionError",
    "ProviderRequest",
    "RequestOptions",
    "project",
    "redacted_headers",
    "resolve_kind",
]

SECRET_HEADERS = frozenset({"authorization", "x-api-key", "api-key", "x-goog-api-key", "proxy-authorization"})


class ProjectionError(ValueError):
    """The request cannot be built; the message names the field that is wrong."""


#: pi-ai's option names and the ``RequestOptions`` fields they set (the rest go to ``extra``).
_PI_OPTION_NAMES: dict[str, str] = {
    "sessionId": "session_id",
    "reasoning": "reasoning",
    "cacheRetention": "cache_retention",
    "maxTokens": "max_tokens",
    "temperature": "temperature",
    "toolChoice": "tool_choice",
    "thinkingBudgets": "thinking_budgets",
    "headers": "headers",
    "apiKey": "api_key",
    "metadata": "metadata",
}
#: The empty default of the mapping fields: shared by every ``RequestOptions`` that gives none,
#: so never changed in place (a projection only reads its options, design P4).
_NONE: Mapping[str, Any] = {}


class RequestOptions(NamedTuple):
    """pi-ai's ``SimpleStreamOptions`` subset that shapes the request (no callbacks, no I/O). ``_replace`` makes a
    changed copy.
    """

    session_id: str | None = None
    reasoning: str | None = None
    #: ``None`` = unset, as in pi-ai: the API's default applies ("short" for the cache-aware
    #: APIs, unless ``PI_CACHE_RETENTION=long``; see ``_cache``), and pi-messages omits it.
    cache_retention: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    #: A mode ("auto", "none", "any", "required") or an API-shaped object naming one tool.
    tool_choice: str | dict[str, Any] | None = None
    thinking_budgets: Mapping[str, int] | None = None
    headers: Mapping[str, str | None] = _NONE
    api_key: str | None = None
    metadata: Mapping[str, Any] | None = None
    #: API-specific options by pi-ai name (e.g. ``effort``, ``serviceTier``, ``toolChoice``).
    extra: Mapping[str, Any] = _NONE
    #: Environment values pi-ai would read (e.g. ``PI_CACHE_RETENTION``); passed in, never read here.
    env: Mapping[str, str] = _NONE
    #: The kind of credential the route uses, decided by the host (design P5); ``None``: a real
    #: ``api_key`` is read as pi-ai reads it, the placeholder stands for the API's usual kind.
    credential_kind: CredentialKind | None = None

    @classmethod
    def from_pi(cls, options: Mapping[str, Any], env: Mapping[str, str] | None = None) -> RequestOptions:
        """Build from pi-ai's option names; unknown names go to ``extra``."""
        known: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for key, value in options.items():
            if key in _PI_OPTION_NAMES:
                known[_PI_OPTION_NAMES[key]] = value
            else:
                extra[key] = value
        return cls(**known, extra=extra, env=dict(env or {}))

    def get(self, pi_name: str, default: Any = None) -> Any:
        """An API-specific option by its pi-ai name."""
        return self.extra.get(pi_name, default)

    def env_value(self, name: str) -> str | None:
        """pi-ai ``getProviderEnvValue``: the scoped ``options.env`` first, then the process
        environment passed in ``env``; an empty value counts as unset."""
        scoped = self.extra.get("env")
        value = (scoped.get(name) if isinstance(scoped, Mapping) else None) or self.env.get(name)
        return value or None


@dataclass(frozen=True)
class ProviderRequest:
    """One request as it leaves the machine: what the preview shows and dispatch sends.

    Without slots: ``body_bytes`` is cached on the instance.
    """

    method: str
    url: str
    headers: dict[str, str]
    body: JsonObject
    #: Builds ``body_bytes`` from bytes kept by the incremental projection (design P7); the
    #: result equals ``orjson.dumps(body)``.
    encoder: Callable[[], bytes] | None = field(default=None, compare=False, repr=False)

    __hash__ = None  # type: ignore[assignment]  # its headers and body are dicts

    @cached_property
    def body_bytes(self) -> bytes:
        """The one encoding of the body, shared by preview and dispatch."""
        return self.encoder() if self.encoder is not None else orjson.dumps(self.body)

    def redacted_headers(self) -> dict[str, str]:
        """Headers safe to show: secrets replaced, never partially revealed."""
        return redacted_headers(self.headers)


def redacted_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """``headers`` safe to show: secrets replaced, never partially revealed."""
    return {k: ("<redacted>" if k.lower() in SECRET_HEADERS else v) for k, v in headers.items()}


Projector = Callable[[Model, list[Message], RequestOptions], ProviderRequest]


def projector_for(api: str) -> Projector:
    module_name = PROJECTORS.get(api)
    if module_name is None:
        known = ", ".join(sorted(PROJECTORS))
        raise ProjectionError(f"unknown API {api!r} in model field 'api'; known APIs: {known}")
    module = importlib.import_module(f"desktop.pi.projection.{module_name}")
    project: Projector = module.project
    return project


def _provider_options(model: Model, options: RequestOptions) -> RequestOptions:
    """pi-ai's provider-level wrappers around an API (today: OpenCode's session routing header)."""
    # Lazy: the status budget.
    from desktop.pi.projection._headers import with_opencode_session_header

    headers = with_opencode_session_header(
        model["provider"], model["api"], options.session_id, options.headers
    )
    return options if headers is options.headers else options._replace(headers=headers)


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many small acyclic objects.

    A projection of a long transcript, or the reading of a 100 MB transcript, allocates
    hundreds of thousands of small acyclic containers, and every few hundred allocations CPython
    would otherwise traverse the young objects (and now and then the whole long-lived heap)
    finding nothing to free; pausing cuts the time of a 50k-message projection by about 40%.
    Reference counting still frees everything.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def project(
    model: Model, messages: Sequence[Message] | Context, options: RequestOptions | None = None
) -> ProviderRequest:
    """Project a transcript (or a pi-ai ``Context``) for ``model``, the collector paused."""
    # Lazy: the status budget.
    from desktop.pi.projection._model_fields import check_model_fields

    check_model_fields(model)
    projector = projector_for(model["api"])
    if isinstance(messages, Mapping):
        transcript = normalize_context(messages)
    else:
        transcript = list(messages)
    options = _provider_options(model, options or RequestOptions())
    with paused_gc():
        return projector(model, transcript, options)
