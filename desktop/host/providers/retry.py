"""When and how long to wait before retrying a provider request.

Mirrors pi-ai's ``retryProviderRequest`` (itself the OpenAI/Anthropic SDK policy): retry
connection failures and HTTP 408, 409, 429 and 5xx unless the server says
``x-should-retry: false``; wait what ``retry-after-ms`` / ``retry-after`` (seconds or an
HTTP date) ask for, failing at once when that exceeds the cap; otherwise back off
exponentially (0.5 s doubling, at most 8 s) with up to 25 % jitter.
"""

from __future__ import annotations

import random
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
        try:
            return float(raw_ms) / 1000
        except ValueError:
            pass
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


def retry_delay(
    policy: RetryPolicy, retry_index: int, headers: Mapping[str, str], rng: random.Random | None = None
) -> float:
    """Seconds to wait before retry number ``retry_index`` (0-based); may raise RetryDelayTooLong."""
    requested = _server_delay(headers)
    if requested is not None:
        if policy.max_retry_after > 0 and requested > policy.max_retry_after:
            raise RetryDelayTooLong(
                f"Server requested {requested:.0f}s retry delay (max: {policy.max_retry_after:.0f}s)"
            )
        return max(0.0, requested)
    backoff = min(policy.base_delay * 2**retry_index, policy.max_backoff)
    draw: float = (rng or random.Random()).random()
    return float(backoff * (1 - draw * policy.jitter))
