"""Where each API expects its credential (the header names pi-ai's SDK clients use)."""

from __future__ import annotations

from collections.abc import Mapping

#: Headers that already carry a credential; when one is present no key is added.
AUTH_HEADERS = frozenset({"authorization", "x-api-key", "api-key", "x-goog-api-key", "cf-aig-authorization"})


def auth_headers(api: str, api_key: str) -> dict[str, str]:
    """The header(s) that carry ``api_key`` for ``api``."""
    if api == "anthropic-messages":
        # Claude OAuth tokens go as a bearer token; API keys as x-api-key.
        if api_key.startswith("sk-ant-oat"):
            return {"authorization": f"Bearer {api_key}"}
        return {"x-api-key": api_key}
    if api == "azure-openai-responses":
        return {"api-key": api_key}
    if api in ("google-generative-ai", "google-vertex"):
        return {"x-goog-api-key": api_key}
    return {"authorization": f"Bearer {api_key}"}


def with_auth(headers: Mapping[str, str], api: str, api_key: str | None) -> dict[str, str]:
    """``headers`` plus the key's auth header, unless a credential header is already set."""
    merged = dict(headers)
    if api_key and not any(name.lower() in AUTH_HEADERS for name in merged):
        merged.update(auth_headers(api, api_key))
    return merged
