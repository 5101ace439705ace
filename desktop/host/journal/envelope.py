"""The row envelope: versions, the app name and time-ordered row ids.

The parts of a row every module agrees on without the row schema (``rows``) itself: the schema
imports them, and so do modules that only stamp or compare rows.
"""

from __future__ import annotations

import os
import threading
import time

SCHEMA_VERSION = 1
"""Version of the row envelope (``v`` on the header and on every row)."""

MODEL_SYSTEM_VERSION = 1
"""Version of the ``modelSystem`` and compaction ``checkpoint`` metadata."""

APP_NAME = "pi-desktop"


def now_ms() -> int:
    return time.time_ns() // 1_000_000


# --- row ids ---------------------------------------------------------------------------------

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_RANDOM_BITS = 80


def _random_bits(count: int) -> int:
    """``secrets.randbits``: ``secrets`` loads ``random``, ``base64`` and ``hmac``, which reading a
    session never needs (design D6)."""
    size = (count + 7) // 8
    return int.from_bytes(os.urandom(size), "big") >> (size * 8 - count)


class _IdClock:
    """ULID-style ids: 48 bits of milliseconds, then 80 bits that only grow within a millisecond.

    Ids sort in creation order within a process and stay unique across processes (random part).
    After ``fork`` the child draws fresh randomness, so parent and child never continue the same run.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        self.last_ms = -1
        self.last_rand = 0

    def next(self) -> str:
        with self.lock:
            ms = now_ms()
            if ms <= self.last_ms:
                ms, rand = self.last_ms, self.last_rand + 1
                if rand >= 1 << _RANDOM_BITS:
                    ms, rand = ms + 1, _random_bits(_RANDOM_BITS - 1)
            else:
                rand = _random_bits(_RANDOM_BITS - 1)  # headroom to count up within one ms
            self.last_ms, self.last_rand = ms, rand
        value = (ms << _RANDOM_BITS) | rand
        return "".join(_CROCKFORD[(value >> shift) & 31] for shift in range(125, -1, -5))


_CLOCK = _IdClock()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_CLOCK.reset)


def new_row_id() -> str:
    """A new time-ordered unique row id (26 characters, Crockford base32)."""
    return _CLOCK.next()
