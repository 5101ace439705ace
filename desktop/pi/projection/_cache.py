"""Prompt-cache retention as pi-ai resolves it for the cache-aware APIs.

An explicit ``cacheRetention`` wins; unset, the legacy ``PI_CACHE_RETENTION=long`` switch
(scoped env first, then the process env) upgrades the API's default. Anthropic, Bedrock and
the OpenAI APIs default to "short"; pi-messages leaves it unset so the backend decides.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, overload

if TYPE_CHECKING:
    from desktop.pi.projection import RequestOptions


@overload
def resolve_cache_retention(options: RequestOptions) -> str: ...
@overload
def resolve_cache_retention(options: RequestOptions, default: None) -> str | None: ...


def resolve_cache_retention(options: RequestOptions, default: str | None = "short") -> str | None:
    if options.cache_retention:
        return options.cache_retention
    if options.env_value("PI_CACHE_RETENTION") == "long":
        return "long"
    return default
