"""Keeping secrets out of anything shown or written: URLs, messages, logs.

The one place that knows what a secret looks like. In free text, known key values, URL
``key=`` parameters (Gemini accepts the key there), values of credential fields
(``Authorization: Bearer …``, ``"x-api-key": "…"``) and key-shaped strings are scrubbed. Redaction is idempotent, so a log
formatter may re-scan text a filter already cleaned.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import cache

REDACTED = "[redacted]"

_SECRET_NAMES = r"(?:proxy-authorization|authorization|x-goog-api-key|x-api-key|api[-_]?key|apikey)"


@cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """The URL key parameter, the credential field and the key shapes, compiled at the first
    redaction rather than at import: opening a session (``status``) redacts nothing (the status budget)."""
    url_key = re.compile(r"([?&](?:key|api_key|api-key|access_token)=)[^&#\s]+", re.IGNORECASE)
    # Values of headers and fields that carry credentials: "k: v", "k=v", dict/JSON and tuple
    # forms. The lookahead keeps redaction idempotent.
    secret_field = re.compile(
        rf"""(?P<key>(?:(?P<q>["']){_SECRET_NAMES}(?P=q)\s*[:=,]|{_SECRET_NAMES}\s*[:=])\s*["']?)"""
        rf"""(?!(?:(?:bearer|basic|token)\s+)?{re.escape(REDACTED)})"""
        r"""(?P<scheme>(?:bearer|basic|token)\s+)?"""
        r"""(?P<value>[^\s"',;}\]&]+)""",
        re.IGNORECASE,
    )
    # Shapes of provider keys (Anthropic, OpenAI/DeepSeek, Google), scrubbed even when unknown.
    key_shapes = re.compile(
        r"sk-ant-[A-Za-z0-9_\-]{6,}|sk-(?:proj-|svcacct-|or-v1-)?[A-Za-z0-9_\-]{16,}|AIza[0-9A-Za-z_\-]{20,}"
    )
    return url_key, secret_field, key_shapes


def redact_text(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every known secret value, URL key parameter and key-shaped string removed."""
    for secret in sorted((s for s in secrets if s and len(s) >= 4), key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    url_key, secret_field, key_shapes = _patterns()
    text = url_key.sub(lambda m: m.group(1) + REDACTED, text)
    text = secret_field.sub(lambda m: f"{m['key']}{m['scheme'] or ''}{REDACTED}", text)
    return key_shapes.sub(REDACTED, text)


#: Known values shorter than this are not redacted: they would match ordinary text.
MIN_SECRET_LENGTH = 8


def redact_named(text: str, secrets: Mapping[str, str]) -> str:
    """``text`` with every known credential value replaced by ``<redacted:NAME>`` (design A9).

    ``secrets`` maps a name the user recognizes (``ANTHROPIC_API_KEY``,
    ``keyring:anthropic/default``) to the value. Longer values are replaced first so one key
    that contains another is named correctly.
    """
    for name, value in sorted(secrets.items(), key=lambda item: len(item[1]), reverse=True):
        if len(value) >= MIN_SECRET_LENGTH and value in text:
            text = text.replace(value, f"<redacted:{name}>")
    return text


def redact_value(value: object, secrets: Mapping[str, str]) -> object:
    """``redact_named`` applied to every string inside JSON-like data (dicts, lists, strings)."""
    if isinstance(value, str):
        return redact_named(value, secrets)
    if isinstance(value, Mapping):
        return {key: redact_value(item, secrets) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [redact_value(item, secrets) for item in value]
    return value
