"""Model order and the model's context, kept as rows are appended (design P7).

Rebuilding both from the whole journal on every request costs time proportional to the
session; a turn appends a handful of rows. ``ContextLog`` follows the journal: an appended row
joins the end of model order, an anchored system row is placed before its user row (T4), and
the context view grows by the messages those rows carry. Whatever the incremental rules do
not cover falls back to the full functions (``model_order``'s rules, ``context_view``):

- a compaction row (the context restarts from its checkpoint and summary);
- a row whose id was named by an earlier anchor, or an id seen before (the anchor rules then
  move or ignore rows written long ago);
- an anchor whose target is not among the last rows of model order;
- a journal that did not grow by appending (another list, fewer rows).

Consumers learn which leading messages kept their identity since they last looked (``mark``,
``stable_since``), which is what the incremental projection needs.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence
from typing import Any

from desktop.host.journal.order import anchor_of
from desktop.pi.types import Message
from desktop.session.history import ContextView, context_view, row_message

Row = dict[str, Any]
#: How far back from the end an anchor's target is looked for before rebuilding.
ANCHOR_REACH = 256


class ContextLog:
    def __init__(self, order: Callable[[Sequence[Row]], list[Row]]) -> None:
        self._order = order
        self._seen = 0
        self._last: Row | None = None
        self.ordered: list[Row] = []
        self.view = ContextView([], [], 0, None)
        #: The model-order position of each message's row (-1 for the compaction's own messages).
        self._positions: list[int] = []
        #: Indices of the system messages in ``view.messages``.
        self.system_indices: list[int] = []
        #: Changes whenever the context's system messages change (cheap cache key for consumers).
        self.systems_version = 0
        self._ids: set[Any] = set()
        #: Ids more than one row carries (only a damaged or hand-edited journal has them).
        self._repeated: set[Any] = set()
        self._targets: set[str] = set()
        self._anchored: set[Any] = set()
        self._compaction = -1
        #: Whether any row carries model-system metadata or a checkpoint (design S5).
        self.has_model_system = False
        self.rebuilds = 0
        #: Where each change began (a message index), in order; ``mark`` points into it.
        self._cuts: list[int] = []

    def mark(self) -> tuple[int, int]:
        """A point a consumer can later ask ``stable_since`` about."""
        return len(self._cuts), len(self.view.messages)

    def stable_since(self, mark: tuple[int, int] | None) -> int:
        """How many leading messages are the same objects as at ``mark``."""
        if mark is None:
            return 0
        version, length = mark
        return min(length, *self._cuts[version:]) if version < len(self._cuts) else length

    def sync(self, rows: Sequence[Row]) -> None:
        count = len(rows)
        seen = self._seen
        if count == seen and (count == 0 or rows[count - 1] is self._last):
            return
        if count < seen or (seen and rows[seen - 1] is not self._last):
            self._rebuild(rows)
            return
        first = len(self.ordered)
        for row in rows[seen:]:
            position = self._place(row)
            if position is None:
                self._rebuild(rows)
                return
            first = min(first, position)
        if first <= self._compaction:
            self._rebuild(rows)
            return
        self._seen = count
        self._last = rows[count - 1]
        self._extend_view(first)

    # --- order ----------------------------------------------------------------------------------

    def _place(self, row: Row) -> int | None:
        """Put an appended row into model order; its position, or None to rebuild."""
        row_id = row.get("id")
        if not isinstance(row_id, str) or row_id in self._ids or row_id in self._targets:
            return None
        if row.get("type") == "compaction":
            return None
        self._note(row)
        target = anchor_of(row)
        ordered = self.ordered
        if target is not None:
            self._anchored.add(row_id)
            self._targets.add(target)
            if target in self._repeated:
                return None  # model order places it before the first row of that id
            if target != row_id and target in self._ids and target not in self._anchored:
                for index in range(len(ordered) - 1, max(-1, len(ordered) - 1 - ANCHOR_REACH), -1):
                    if ordered[index].get("id") == target:
                        ordered.insert(index, row)
                        return index
                return None
        ordered.append(row)
        return len(ordered) - 1

    def _note(self, row: Row) -> None:
        row_id = row.get("id")
        if row_id in self._ids:
            self._repeated.add(row_id)
        self._ids.add(row_id)
        if not self.has_model_system:
            kind = row.get("type")
            self.has_model_system = (kind == "system" and isinstance(row.get("modelSystem"), dict)) or (
                kind == "compaction" and isinstance(row.get("checkpoint"), dict)
            )

    def _rebuild(self, rows: Sequence[Row]) -> None:
        self.rebuilds += 1
        self._cuts.append(0)
        self.ordered = self._order(list(rows))
        self._ids, self._targets, self._anchored, self._repeated = set(), set(), set(), set()
        self.has_model_system = False
        self._compaction = -1
        for index, row in enumerate(self.ordered):
            self._note(row)
            target = anchor_of(row)
            if target is not None:
                self._anchored.add(row.get("id"))
                self._targets.add(target)
            if row.get("type") == "compaction":
                self._compaction = index
        self._seen = len(rows)
        self._last = rows[-1] if rows else None
        view = context_view(self.ordered)
        where = {id(row): index for index, row in enumerate(self.ordered)}
        self._positions = [
            -1 if index < view.prefix else where[id(source)] for index, source in enumerate(view.sources)
        ]
        self.view = view
        self.system_indices = [i for i, m in enumerate(view.messages) if m["role"] == "system"]
        self.systems_version += 1

    # --- view -----------------------------------------------------------------------------------

    def _extend_view(self, first: int) -> None:
        """Re-derive the messages of the rows from model-order position ``first`` on."""
        view = self.view
        messages: list[Message] = view.messages
        sources: list[Any] = view.sources
        positions = self._positions
        cut = bisect_left(positions, first, lo=view.prefix)
        del messages[cut:], sources[cut:], positions[cut:]
        systems = self.system_indices
        drop = bisect_left(systems, cut)
        if drop < len(systems):
            del systems[drop:]
            self.systems_version += 1
        ordered = self.ordered
        for position in range(first, len(ordered)):
            row = ordered[position]
            message = row_message(row)
            if message is not None:
                if message["role"] == "system":
                    systems.append(len(messages))
                    self.systems_version += 1
                messages.append(message)
                sources.append(row)
                positions.append(position)
        self._cuts.append(cut)

    def system_messages(self) -> list[Message]:
        messages = self.view.messages
        return [messages[i] for i in self.system_indices]
