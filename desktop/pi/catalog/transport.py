"""The five transcript transport flags and the binding they belong to.

Pi publishes these flags per *binding* — one provider, one model id, one API, one endpoint — and
they describe what that exact endpoint accepts mid-conversation. Copying them to any other
binding (an alias, a relay, an overridden endpoint, a look-alike record) would tell the projection
to send messages the receiving endpoint may reject or silently mis-cache, so the flags always
travel together with the binding they came from.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, NamedTuple

SYSTEM_MESSAGES: Final = "supportsMidConvoSystemMessages"
TOOL_CHANGES: Final = "supportsMidConvoToolChanges"
ADDITIONAL_TOOLS: Final = "supportsAdditionalTools"
TOOL_SEARCH: Final = "supportsToolSearch"
TOOL_ADDITIONS: Final = "supportsMidConvoToolAdditions"

TRANSPORT_FLAGS: Final[tuple[str, ...]] = (
    SYSTEM_MESSAGES,
    TOOL_CHANGES,
    ADDITIONAL_TOOLS,
    TOOL_SEARCH,
    TOOL_ADDITIONS,
)


def normalize_base_url(url: str) -> str:
    """Compare endpoints the way a server sees them: scheme and host are case-insensitive and a
    trailing slash names the same endpoint. Everything else (path, port, placeholders) must match."""
    url = url.strip().rstrip("/")
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    host, slash, path = rest.partition("/")
    return f"{scheme.lower()}://{host.lower()}{slash}{path}"


class Binding(NamedTuple):
    """A published identity: where Pi says a model lives and how it is spoken to."""

    provider: str
    model_id: str
    api: str
    base_url: str

    @classmethod
    def of(cls, model: Mapping[str, Any]) -> Binding:
        return cls(
            provider=str(model["provider"]),
            model_id=str(model["id"]),
            api=str(model["api"]),
            base_url=str(model.get("baseUrl", "")),
        )

    def same_as(self, other: Binding) -> bool:
        return (
            self.provider == other.provider
            and self.model_id == other.model_id
            and self.api == other.api
            and normalize_base_url(self.base_url) == normalize_base_url(other.base_url)
        )

    def describe(self) -> str:
        return f"{self.provider}/{self.model_id} via {self.api} at {self.base_url or '(no endpoint)'}"

    def to_json(self) -> dict[str, str]:
        return {"provider": self.provider, "model": self.model_id, "api": self.api, "baseUrl": self.base_url}


def transport_flags(model: Mapping[str, Any]) -> dict[str, bool]:
    """The five flags of a model dict, absent ones reported as ``False`` (pi-ai's default)."""
    compat = model.get("compat") or {}
    return {flag: compat.get(flag) is True for flag in TRANSPORT_FLAGS}


def without_transport_flags(model: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``model`` with the five flags removed, so pi-ai falls back to its defaults (off).

    Absent rather than ``false``: that is exactly how Pi publishes an unflagged model, so a
    fallback payload is byte-identical to one for a model Pi never flagged.
    """
    out = dict(model)
    compat = out.get("compat")
    if isinstance(compat, Mapping):
        out["compat"] = {k: v for k, v in compat.items() if k not in TRANSPORT_FLAGS}
    return out
