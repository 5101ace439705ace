"""When and how long to wait before retrying a provider request.

Mirrors pi-ai's ``retryProviderRequest`` (itself the OpenAI/Anthropic SDK policy): retry
connection failures and HTTP 408, 409, 429 and 5xx unless the server says
``x-should-retry: false``; wait what ``retry-after-ms`` / ``retry-after`` (seconds or an
HTTP date) ask for, failing at once when that exceeds the cap; otherwise back off
exponentially (0.5 s doubling, at most 8 s) with up to 25 % jitter.

Beyond pi-ai (design W4): without ``retry-after``, the providers' rate-limit reset headers
say when an exhausted limit frees up (Anthropic's ``anthropic-ratelimit-*-reset``, an RFC
3339 time; OpenAI's ``x-ratelimit-reset-*``, a duration such as ``6m0s``): the wait is the
latest reset among the limits whose ``remaining`` is 0, under the same cap.
"""

from __future__ import annotations

import contextlib
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 2
    base_delay: float = 0.5
    max_backoff: float = 8.0
    #: Longest server-requested wait honoured; 0 disables the cap.
    max_retry_after: float = 60.0
    jitter: float = 0.25


DEFAULT_RETRY = RetryPolicy()


class RetryDelayTooLong(Exception):
    """The server asked to wait longer than the policy allows."""


#: pi-ai's account limits that a wait does not lift (quota, budget, billing, subscription
#: caps): a 429 saying so fails at once instead of being retried (``utils/retry.ts``).
EXHAUSTED_ACCOUNT = re.compile(
    "|".join(
        (
            "GoUsageLimitError",
            "FreeUsageLimitError",
            "Monthly usage limit reached",
            "available balance",
            "insufficient_quota",
            "out of budget",
            "quota exceeded",
            "billing",
            "subscription_sharing_usage_limit_exceeded",
        )
    ),
    re.IGNORECASE,
)


def is_retryable_status(status: int, headers: Mapping[str, str]) -> bool:
    should = headers.get("x-should-retry")
    if should == "true":
        return True
    if should == "false":
        return False
    return status in (408, 409, 429) or status >= 500


def _server_delay(headers: Mapping[str, str], now: datetime | None = None) -> float | None:
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        with contextlib.suppress(ValueError):
            return float(raw_ms) / 1000
    raw = headers.get("retry-after")
    if raw:
        try:
            return float(raw)
        except ValueError:
            try:
                when = parsedate_to_datetime(raw)
            except (TypeError, ValueError):
                return None
            current = now or datetime.now(UTC)
            return (when - current).total_seconds()
    return None


_DURATION = re.compile(
    r"(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m(?!s))?(?:(\d+(?:\.\d+)?)s)?(?:(\d+(?:\.\d+)?)ms)?"
)
#: The reset headers, each with the header of the same limit's remaining count.
_RESETS = (
    *(
        (f"anthropic-ratelimit-{limit}-reset", f"anthropic-ratelimit-{limit}-remaining")
        for limit in ("requests", "tokens", "input-tokens", "output-tokens")
    ),
    *((f"x-ratelimit-reset-{limit}", f"x-ratelimit-remaining-{limit}") for limit in ("requests", "tokens")),
)


def _reset_seconds(value: str, now: datetime) -> float | None:
    """Seconds until a reset given as an RFC 3339 time, a duration (``1m30s``, ``20ms``) or
    plain seconds; None when unreadable."""
    value = value.strip()
    with contextlib.suppress(ValueError):
        return float(value)
    match = _DURATION.fullmatch(value)
    if match and any(match.groups()):
        hours, minutes, seconds, millis = (float(part or 0) for part in match.groups())
        return hours * 3600 + minutes * 60 + seconds + millis / 1000
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return (when - now).total_seconds()


def _reset_delay(headers: Mapping[str, str], now: datetime | None = None) -> float | None:
    """The latest reset of an exhausted limit. A limit with requests or tokens left says
    when it is full again, not when the next request fits, so it is no reason to wait."""
    current = now or datetime.now(UTC)
    exhausted: list[float] = []
    for reset_name, remaining_name in _RESETS:
        raw = headers.get(reset_name)
        if raw and headers.get(remaining_name, "").strip() == "0":
            seconds = _reset_seconds(raw, current)
            if seconds is not None:
                exhausted.append(seconds)
    return max(exhausted) if exhausted else None


def retry_delay(
    policy: RetryPolicy, retry_index: int, headers: Mapping[str, str], rng: random.Random | None = None
) -> float:
    """Seconds to wait before retry number ``retry_index`` (0-based); may raise RetryDelayTooLong."""
    for asked, too_long in (
        (_server_delay, "Server requested {:.0f}s retry delay (max: {:.0f}s)"),
        (_reset_delay, "The rate limit resets in {:.0f}s (max wait: {:.0f}s)"),
    ):
        seconds = asked(headers)
        if seconds is not None:
            if 0 < policy.max_retry_after < seconds:
                raise RetryDelayTooLong(too_long.format(seconds, policy.max_retry_after))
            return max(0.0, seconds)
    backoff = min(policy.base_delay * 2**retry_index, policy.max_backoff)
    draw: float = (rng or random.Random()).random()
    return float(backoff * (1 - draw * policy.jitter))
