"""When compaction is due (design C1): the settings every session carries and the threshold test.

Kept apart from the compaction engine (``desktop.session.compaction``: planning, the summary
request, the row) so that opening a session, which needs the settings, does not load the
engine; ``status`` never compacts (the status budget).
"""

from __future__ import annotations

from typing import NamedTuple

RESERVE_TOKENS = 16_384
KEEP_RECENT_TOKENS = 20_000


class CompactionSettings(NamedTuple):
    enabled: bool = True
    reserve_tokens: int = RESERVE_TOKENS
    keep_recent_tokens: int = KEEP_RECENT_TOKENS

    def threshold(self, context_window: int) -> int:
        return context_window - self.reserve_tokens


def should_compact(tokens: int, context_window: int, settings: CompactionSettings) -> bool:
    return settings.enabled and tokens > settings.threshold(context_window)
