"""Model order and the model's context, kept as rows are appended (design P7).

Rebuilding both from the whole journal on every request costs time proportional to the
session; a turn appends a handful of rows. ``ContextLog`` follows the journal: an appended row
joins the end of model order, an anchored system row is placed before its user row (T4), and
the context view grows by the messages those rows carry. Whatever the incremental rules do
not cover falls back to a full rebuild (``model_order``'s rules, ``context_view``'s):

- a compaction row (the context restarts from its checkpoint and summary);
- a row whose id was named by an earlier anchor, or an id seen before (the anchor rules then
  move or ignore rows written long ago);
- an anchor whose target is not among the last rows of model order;
- a journal that did not grow by appending (another list, fewer rows).

The log keeps row numbers, not rows (design G9): model order is an array of row numbers, and
the context's messages are read from their rows when asked for (``ContextMessages``). On the
journal's own rows (``JournalRows``) that means the lines are decoded on demand and a long
session's history is not held decoded; what the log reads of every row (id, type, anchor,
whether it carries a message) the journal noted when it read the row. Only the system
messages are kept decoded: the effective state is replayed from them on every turn.

Consumers learn which leading messages are unchanged since they last looked (``mark``,
``stable_since``), which is what the incremental projection needs.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from itertools import compress
from typing import Any, cast, overload

from desktop.host.journal.lines import MESSAGE, MODEL_SYSTEM, NEWER, SYSTEM_MESSAGE, JournalRows, row_facts
from desktop.host.journal.order import order_indices
from desktop.pi.types import Message
from desktop.session.history import ContextView, checkpoint_message, summary_message

Row = dict[str, Any]
#: How far back from the end an anchor's target is looked for before rebuilding.
ANCHOR_REACH = 256
_SYSTEM, _COMPACTION = 4, 5
#: ``bytes.translate`` tables over the rows' flags, for a rebuild that walks no row in Python:
#: 1 where the row's own message joins the context, 1 where a system message is held instead.
_MESSAGE_BITS = bytes(1 if flags & MESSAGE else 0 for flags in range(256))
_SYSTEM_BITS = bytes(1 if flags & SYSTEM_MESSAGE and not flags & MESSAGE else 0 for flags in range(256))


class _Facts:
    """What order and view read of each row: from the journal's notes without decoding the
    row, or from the row itself for any other sequence of rows."""

    def __init__(self, rows: Sequence[Row]) -> None:
        self.rows = rows
        self.journal = rows if isinstance(rows, JournalRows) else None

    def of(self, index: int) -> tuple[object, int, int, str | None]:
        """The row's id, type code, flags and anchor."""
        journal = self.journal
        if journal is not None:
            return (
                journal.row_id(index),
                journal.type_code(index),
                journal.flags(index),
                journal.anchors.get(index),
            )
        row = self.rows[index]
        code, flags, anchor = row_facts(row)
        return row.get("id"), code, flags, anchor

    def all(self) -> tuple[Sequence[object], dict[int, str], bytes, bytes]:
        """Every row's id, the anchors, the type codes and the flags."""
        journal = self.journal
        if journal is not None:
            return journal.ids(), journal.anchors, journal.type_codes(), journal.all_flags()
        ids: list[object] = []
        anchors: dict[int, str] = {}
        codes = bytearray()
        flags = bytearray()
        for index, row in enumerate(self.rows):
            code, flag, anchor = row_facts(row)
            ids.append(row.get("id"))
            codes.append(code)
            flags.append(flag)
            if anchor is not None:
                anchors[index] = anchor
        return ids, anchors, bytes(codes), bytes(flags)


class RowsInOrder(Sequence[Row]):
    """The journal's rows in model order, read when asked for (row numbers kept, not rows)."""

    __slots__ = ("_order", "_rows")

    def __init__(self, rows: Sequence[Row], order: array[int]) -> None:
        self._rows = rows
        self._order = order

    def __len__(self) -> int:
        return len(self._order)

    @overload
    def __getitem__(self, index: int) -> Row: ...
    @overload
    def __getitem__(self, index: slice) -> list[Row]: ...
    def __getitem__(self, index: int | slice) -> Row | list[Row]:
        if isinstance(index, slice):
            return [self._rows[n] for n in self._order[index]]
        return self._rows[self._order[index]]

    def __iter__(self) -> Iterator[Row]:
        rows = self._rows
        for n in self._order:
            yield rows[n]

    def ids(self) -> list[object]:
        """Every row's id in model order, reading no row of the journal's own."""
        if isinstance(self._rows, JournalRows):
            ids = self._rows.ids()
            return [ids[n] for n in self._order]
        return [row.get("id") for row in self]


class ContextMessages(Sequence[Message]):
    """The context's messages, each read from its row when asked for.

    Per message the row it comes from; a message the log had to make (the checkpoint and
    summary of a compaction) or one it keeps decoded (a system message) is held itself.
    """

    __slots__ = ("_held", "_held_at", "refs", "rows", "sources")

    def __init__(self, rows: Sequence[Row]) -> None:
        self.rows = rows
        #: Per message: its row number, or -1 when the message is held in ``_held``.
        self.refs: array[int] = array("q")
        #: Per message: the row it came from (the compaction row for the checkpoint and summary).
        self.sources: array[int] = array("q")
        self._held: dict[int, Message] = {}
        self._held_at: list[int] = []

    def __len__(self) -> int:
        return len(self.refs)

    @overload
    def __getitem__(self, index: int) -> Message: ...
    @overload
    def __getitem__(self, index: slice) -> list[Message]: ...
    def __getitem__(self, index: int | slice) -> Message | list[Message]:
        if isinstance(index, slice):
            rows = self.rows
            start, stop, step = index.indices(len(self.refs))
            if isinstance(rows, JournalRows) and step == 1:
                # The rows' messages decoded in one pass, the held ones put back in place.
                refs = self.refs[start:stop]
                decoded = iter(rows.messages([ref for ref in refs if ref >= 0]))
                held = self._held
                return [held[start + k] if ref < 0 else next(decoded) for k, ref in enumerate(refs)]
            return [self._message(i, walk=True) for i in range(*index.indices(len(self.refs)))]
        if index < 0:
            index += len(self.refs)
        if not 0 <= index < len(self.refs):
            raise IndexError("context message out of range")
        return self._message(index)

    def __iter__(self) -> Iterator[Message]:
        for index in range(len(self.refs)):
            yield self._message(index, walk=True)

    def __reversed__(self) -> Iterator[Message]:
        for index in range(len(self.refs) - 1, -1, -1):
            yield self._message(index, walk=True)

    def _message(self, index: int, *, walk: bool = False) -> Message:
        """The message at ``index``; a ``walk`` (iteration, slices) leaves the journal's recent
        rows as they were."""
        ref = self.refs[index]
        if ref < 0:
            return self._held[index]
        rows = self.rows
        if walk and isinstance(rows, JournalRows):
            return cast(Message, rows.peek(ref)["message"])
        return cast(Message, rows[ref]["message"])

    def held(self) -> list[tuple[int, Message]]:
        """The messages held decoded, with their positions: every system message of the
        context is among them (with a compaction's summary), so a scan for system state
        decodes no row."""
        return [(index, self._held[index]) for index in self._held_at]

    def could_mention(self, text: str) -> bool:
        """Whether a message read from a row could hold ``text`` in a string: some line of the
        journal holds it, or holds a ``\\u`` escape (the only JSON escape that can spell a
        letter). True when the rows are not the journal's lines: nothing is cheaper than
        reading them."""
        rows = self.rows
        if not isinstance(rows, JournalRows):
            return True
        return rows.lines_hold(text.encode()) or rows.lines_hold(b"\\u")

    def add(self, row: int) -> None:
        self.refs.append(row)
        self.sources.append(row)

    def hold(self, message: Message, source: int) -> None:
        self._held[len(self.refs)] = message
        self._held_at.append(len(self.refs))
        self.refs.append(-1)
        self.sources.append(source)

    def truncate(self, length: int) -> None:
        del self.refs[length:], self.sources[length:]
        held = self._held_at
        while held and held[-1] >= length:
            del self._held[held.pop()]


class ContextSources(Sequence[Row]):
    """The row each context message came from, read when asked for."""

    __slots__ = ("_messages",)

    def __init__(self, messages: ContextMessages) -> None:
        self._messages = messages

    def __len__(self) -> int:
        return len(self._messages.sources)

    @overload
    def __getitem__(self, index: int) -> Row: ...
    @overload
    def __getitem__(self, index: slice) -> list[Row]: ...
    def __getitem__(self, index: int | slice) -> Row | list[Row]:
        rows = self._messages.rows
        if isinstance(index, slice):
            return [rows[n] for n in self._messages.sources[index]]
        return rows[self._messages.sources[index]]

    def __iter__(self) -> Iterator[Row]:
        rows = self._messages.rows
        for n in self._messages.sources:
            yield rows[n]


class ContextLog:
    def __init__(self) -> None:
        self._source: Sequence[Row] | None = None
        self._facts = _Facts([])
        self._seen = 0
        self._last: Row | None = None
        #: Model order as row numbers.
        self._order: array[int] = array("q")
        self._messages = ContextMessages([])
        self.view = ContextView(self._messages, ContextSources(self._messages), 0, None)
        #: The model-order position of each message's row (-1 for the compaction's own messages).
        self._positions: array[int] = array("q")
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

    @property
    def ordered(self) -> RowsInOrder:
        """The rows in model order (read on demand; do not keep it across appends)."""
        return RowsInOrder(self._facts.rows, self._order)

    def mark(self) -> tuple[int, int]:
        """A point a consumer can later ask ``stable_since`` about."""
        return len(self._cuts), len(self.view.messages)

    def stable_since(self, mark: tuple[int, int] | None) -> int:
        """How many leading messages are unchanged since ``mark``."""
        if mark is None:
            return 0
        version, length = mark
        return min(length, *self._cuts[version:]) if version < len(self._cuts) else length

    def sync(self, rows: Sequence[Row]) -> None:
        count = len(rows)
        seen = self._seen
        if isinstance(rows, JournalRows):
            # The journal's rows only ever grow: the same object with more rows was appended to.
            if rows is self._source and count == seen:
                return
            if rows is not self._source:
                self._rebuild(rows)  # the whole journal at once, from the journal's notes
                return
        else:
            if count == seen and (count == 0 or rows[count - 1] is self._last):
                return
            if count < seen or (seen and rows[seen - 1] is not self._last):
                self._rebuild(rows)
                return
            if rows is not self._source:
                self._source = rows
                self._facts = _Facts(rows)
                self._messages.rows = rows
        first = len(self._order)
        for index in range(seen, count):
            position = self._place(index)
            if position is None:
                self._rebuild(rows)
                return
            first = min(first, position)
        if first <= self._compaction:
            self._rebuild(rows)
            return
        self._seen = count
        self._last = None if isinstance(rows, JournalRows) else rows[count - 1]
        self._extend_view(first)

    # --- order ----------------------------------------------------------------------------------

    def _place(self, index: int) -> int | None:
        """Put an appended row into model order; its position, or None to rebuild."""
        row_id, code, flags, target = self._facts.of(index)
        if not isinstance(row_id, str) or row_id in self._ids or row_id in self._targets:
            return None
        if code == _COMPACTION:
            return None
        self._note(row_id, code, flags)
        order = self._order
        if target is not None:
            self._anchored.add(row_id)
            self._targets.add(target)
            if target in self._repeated:
                return None  # model order places it before the first row of that id
            if target != row_id and target in self._ids and target not in self._anchored:
                facts = self._facts
                for position in range(len(order) - 1, max(-1, len(order) - 1 - ANCHOR_REACH), -1):
                    if facts.of(order[position])[0] == target:
                        order.insert(position, index)
                        return position
                return None
        order.append(index)
        return len(order) - 1

    def _note(self, row_id: object, code: int, flags: int) -> None:
        if row_id in self._ids:
            self._repeated.add(row_id)
        self._ids.add(row_id)
        if flags & MODEL_SYSTEM:
            self.has_model_system = True

    def _rebuild(self, rows: Sequence[Row]) -> None:
        self.rebuilds += 1
        self._cuts.append(0)
        self._source = rows
        facts = self._facts = _Facts(rows)
        ids, anchors, codes, flags = facts.all()
        order = order_indices(ids, anchors)
        self._order = array("q", range(len(ids)) if order is None else order)
        if order is not None:  # the rows' codes and flags in model order, as the view reads them
            codes, flags = bytes(map(codes.__getitem__, order)), bytes(map(flags.__getitem__, order))
        # What ``_note`` would gather row by row, taken over all rows at once (a long session
        # is opened whole; the status budget).
        self._ids = set(ids)
        self._repeated = set()
        if len(self._ids) != len(ids):
            self._repeated = {row_id for row_id, count in Counter(ids).items() if count > 1}
        self._anchored = {ids[index] for index in anchors}
        self._targets = set(anchors.values())
        self.has_model_system = any(flag & MODEL_SYSTEM for flag in set(flags))
        self._compaction = codes.rfind(_COMPACTION)
        self._seen = len(rows)
        self._last = rows[-1] if rows and facts.journal is None else None
        self._build_view(codes, flags)

    # --- view -----------------------------------------------------------------------------------

    def _build_view(self, codes: bytes, flags: bytes) -> None:
        """The whole context view, as ``history.context_view`` builds it, as row numbers.
        ``codes`` and ``flags`` are the rows' in model order (one byte per position)."""
        rows = self._facts.rows
        order = self._order
        messages = self._messages = ContextMessages(rows)
        self._positions = array("q")
        self.system_indices = []
        previous_summary: str | None = None
        last = codes.rfind(_COMPACTION)  # the last compaction this app can read
        while last >= 0 and flags[last] & NEWER:
            last = codes.rfind(_COMPACTION, 0, last)
        compaction = last if last >= 0 else None
        start = 0
        if compaction is not None:
            row_number = order[compaction]
            comp = rows[row_number]
            checkpoint = checkpoint_message(comp)
            if checkpoint is not None:
                self._hold(checkpoint, row_number, -1)
            previous_summary = str(comp.get("summary", ""))
            self._hold(summary_message(previous_summary, int(comp.get("ts", 0))), row_number, -1)
        prefix = len(messages)
        if compaction is not None:
            first_kept = rows[order[compaction]].get("firstKeptId")
            facts = self._facts
            # The kept tail ends at the compaction: its first row is looked for from there back,
            # not from the session's first row on (100,000 rows walked on a long session's open).
            # An id several rows share is looked for from the start: the first of them is meant.
            positions = range(compaction) if first_kept in self._repeated else range(compaction - 1, -1, -1)
            start = next((p for p in positions if facts.of(order[p])[0] == first_kept), compaction)
            self._add_range(start, compaction, flags)
            start = compaction + 1
        fresh = len(messages)
        self._add_range(start, len(order), flags)
        self.view = ContextView(messages, ContextSources(messages), prefix, previous_summary, fresh)
        self.systems_version += 1

    def _hold(self, message: Message, row_number: int, position: int) -> None:
        if message["role"] == "system":
            self.system_indices.append(len(self._messages))
            self.systems_version += 1
        self._messages.hold(message, row_number)
        self._positions.append(position)

    def _add_range(self, start: int, stop: int, flags: bytes) -> None:
        """``_add`` of the positions from ``start`` to ``stop``, from the ``flags`` of the rows
        in model order. A long session is opened whole, so the runs of rows whose own message
        joins the context are taken with ``compress``, not row by row; each system message
        between them is held by ``_add``."""
        order = self._order
        refs, sources = self._messages.refs, self._messages.sources
        positions = self._positions
        messages = flags.translate(_MESSAGE_BITS)
        systems = flags.translate(_SYSTEM_BITS)
        low = start
        while low < stop:
            system = systems.find(1, low, stop)
            high = stop if system < 0 else system
            taken = array("q", compress(range(low, high), messages[low:high]))
            row_numbers = array("q", map(order.__getitem__, taken))
            refs.extend(row_numbers)
            sources.extend(row_numbers)
            positions.extend(taken)
            if system < 0:
                break
            self._add(system)
            low = system + 1

    def _add(self, position: int) -> None:
        """The message of the row at model-order ``position``, if it carries one."""
        row_number = self._order[position]
        flags = self._facts.of(row_number)[2]
        if flags & MESSAGE:
            self._messages.add(row_number)
            self._positions.append(position)
        elif flags & SYSTEM_MESSAGE:
            row = self._facts.rows[row_number]
            self._hold(cast(Message, row["modelSystem"]["message"]), row_number, position)

    def _extend_view(self, first: int) -> None:
        """Re-derive the messages of the rows from model-order position ``first`` on."""
        view = self.view
        positions = self._positions
        cut = bisect_left(positions, first, lo=view.prefix)
        self._messages.truncate(cut)
        del positions[cut:]
        systems = self.system_indices
        drop = bisect_left(systems, cut)
        if drop < len(systems):
            del systems[drop:]
            self.systems_version += 1
        for position in range(first, len(self._order)):
            self._add(position)
        self._cuts.append(cut)

    def system_messages(self) -> list[Message]:
        """The context's system messages (held decoded: no row is read)."""
        messages = self._messages
        return [messages[i] for i in self.system_indices]


def could_mention(messages: Sequence[Mapping[str, Any]], text: str) -> bool:
    """Whether a message of the context read from a row could hold ``text`` (a scan that looks
    only at such messages can skip the context when not); held messages are not looked at."""
    return messages.could_mention(text) if isinstance(messages, ContextMessages) else True


def system_messages_at(messages: Sequence[Mapping[str, Any]]) -> list[tuple[int, Mapping[str, Any]]]:
    """The system messages of a context with their positions. From the log's context they are
    the messages it holds decoded, so restoring activation or declarations from a long session
    reads no other row (design G9); any other sequence is scanned."""
    if isinstance(messages, ContextMessages):
        found: list[tuple[int, Mapping[str, Any]]] = list(messages.held())
    else:
        found = list(enumerate(messages))
    return [(index, message) for index, message in found if message.get("role") == "system"]
