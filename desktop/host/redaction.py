"""Keeping secrets out of anything shown or written: headers, URLs, messages.

Credential headers are replaced wholesale (never partially shown); known key values are
scrubbed from free text, as are URL ``key=`` query parameters (Gemini accepts the key
there).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

REDACTED = "[redacted]"

#: Header names whose values are credentials (compared case-insensitively).
SECRET_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api-key",
        "x-goog-api-key",
        "cf-aig-authorization",
        "cookie",
        "set-cookie",
    }
)
_URL_KEY = re.compile(r"([?&](?:key|api_key|api-key|access_token)=)[^&#\s]+", re.IGNORECASE)
#: Shapes of provider keys, scrubbed even when the exact value is not known.
_KEY_SHAPES = re.compile(r"\b(?:sk-ant-[A-Za-z0-9_\-]{8,}|sk-[A-Za-z0-9_\-]{16,}|AIza[0-9A-Za-z_\-]{20,})")


def redact_headers(headers: Mapping[str, str], secrets: Iterable[str] = ()) -> dict[str, str]:
    """A copy safe to display or log: credential headers replaced, known secrets scrubbed."""
    known = [s for s in secrets if s]
    safe: dict[str, str] = {}
    for name, value in headers.items():
        if name.lower() in SECRET_HEADERS or "token" in name.lower() or "secret" in name.lower():
            safe[name] = REDACTED
        else:
            safe[name] = redact_text(value, known)
    return safe


def redact_text(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every known secret value, URL key parameter and key-shaped string removed."""
    for secret in sorted((s for s in secrets if s and len(s) >= 4), key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    text = _URL_KEY.sub(lambda m: m.group(1) + REDACTED, text)
    return _KEY_SHAPES.sub(REDACTED, text)
