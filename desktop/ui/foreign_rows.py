"""A pi or Claude Code branch as the timeline's rows, each built when it is painted (design X1, G9).

Opening a foreign session used to turn every row of the branch into the timeline's row dict on
the worker before the window showed anything: about ten times a bare parse of the file. The
foreign timeline is already lazy (``Timeline``: kinds up front, a row built when asked for), so
the window keeps it that way: the worker sends this reader with one kind byte per row (from the
timeline's kind strings, no row built), pi's section diffs (one pass) and the catalog prices;
the timeline model asks it for the rows on screen, as it asks ``RowReader`` for a Desktop
session's. Building a row reads only memory the opened session holds (no file, no network);
the session is never changed after it is opened, and its memo caches only ever gain equal
values, so the worker's own reads (context, previews) and these can run side by side.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from desktop.session.foreign.display import Prices, row_dict
from desktop.session.foreign.model import SystemDiff, Timeline
from desktop.ui import rowinfo
from desktop.ui.row_index import RecentRows

_DESKTOP_CODES = {
    "user": rowinfo.USER,
    "assistant": rowinfo.ASSISTANT,
    "error": rowinfo.ERROR,
    "tool": rowinfo.TOOL,
    "system": rowinfo.SYSTEM,
    "compaction": rowinfo.COMPACTION,
}


def kind_code(kind: str) -> int:
    """The timeline's kind byte of a foreign row kind (the same as ``row_kind`` of its row dict)."""
    return _DESKTOP_CODES.get(kind, rowinfo.FOREIGN_KINDS.get(kind, rowinfo.FOREIGN_KINDS["other"])[0])


class ForeignRows(RecentRows):
    """A foreign branch's rows for the timeline model."""

    def __init__(self, timeline: Timeline, diffs: Mapping[str, SystemDiff], prices: Prices) -> None:
        super().__init__()
        self.timeline = timeline
        self.diffs = diffs
        self.prices = prices
        self.kinds = bytes(kind_code(kind) for kind in timeline.kinds)

    def __len__(self) -> int:
        return len(self.kinds)

    def _build(self, entry: int) -> dict[str, Any]:
        return row_dict(self.timeline[entry], self.diffs, self.prices)
