"""Header merging as the JS SDKs do it: case-insensitive, later sources win, None removes."""

from __future__ import annotations

from collections.abc import Iterable, Mapping


def merge_headers(*sources: Mapping[str, str | None] | None) -> dict[str, str]:
    """Merge header layers into lower-case names; a ``None`` value deletes the header."""
    merged: dict[str, str] = {}
    for source in sources:
        for name, value in (source or {}).items():
            key = name.lower()
            merged.pop(key, None)
            if value is not None:
                merged[key] = str(value)
    return merged


def last_header_value(
    sources: Iterable[Mapping[str, str | None] | None], name: str
) -> tuple[bool, str | None]:
    """(found, value) of the last occurrence of ``name`` across ``sources``; value may be None."""
    found, value = False, None
    wanted = name.lower()
    for source in sources:
        for key, candidate in (source or {}).items():
            if key.lower() == wanted:
                found, value = True, candidate
    return found, value


OPENCODE_PROVIDERS = frozenset({"opencode", "opencode-go"})
OPENCODE_SESSION_HEADER = "x-opencode-session"


def with_provider_session_header(
    provider: str, session_id: str | None, headers: Mapping[str, str | None]
) -> Mapping[str, str | None]:
    """OpenCode routes a conversation by ``x-opencode-session`` (pi-ai ``opencode-headers.ts``).

    pi-ai adds it at the provider level, for every API OpenCode serves, unless the caller
    already set the header (in any letter case).
    """
    if provider not in OPENCODE_PROVIDERS or not session_id:
        return headers
    if any(name.lower() == OPENCODE_SESSION_HEADER for name in headers):
        return headers
    return {**headers, OPENCODE_SESSION_HEADER: session_id}
