"""What every foreign session offers the window, whatever wrote it (design X1).

A session is its entries (in file order, as read, never written back), an id index and a parent
link per entry. Branches are the entries nothing continues from; a path is walked from a leaf
to the root with a cycle guard (a hand-edited file can point an entry at its own descendant).
The format modules (``pi``, ``claude``) say what a row is and what the model was given.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from desktop.host.journal.reader import Diagnostic
from desktop.pi.types import Message
from desktop.session.foreign.model import (
    Branch,
    ForeignContext,
    SourceFormat,
    SystemDiff,
    Timeline,
    UsageRecord,
    iso_ms,
)

Entry = dict[str, Any]


class BranchNotFound(KeyError):
    """The leaf named is not an entry of the session (the message names it)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown branch"


@dataclass(eq=False)
class ForeignSession(ABC):
    format: SourceFormat
    path: Path
    #: Entries in file order (header excluded), migrated in memory when the format asks for it.
    entries: list[Entry]
    #: The 1-based line each entry came from.
    lines: list[int]
    diagnostics: list[Diagnostic] = field(default_factory=list)
    session_id: str | None = None
    cwd: str | None = None
    #: The format version (pi: 1 to 3 as written; Claude Code: the version of the app that wrote it).
    version: int | str | None = None
    index: dict[str, int] = field(default_factory=dict)
    parents: list[int] = field(default_factory=list)

    # --- the tree -------------------------------------------------------------------------------

    #: The entry key holding its id, and the keys holding its timeline parent (first set wins).
    ID_KEY: ClassVar[str]
    PARENT_KEYS: ClassVar[tuple[str, ...]]

    def _link(self) -> None:
        """Index ids (the last entry with an id wins, as pi's ``Map`` does) and parent links.

        Every entry passes through here on open, so the loops are written out flat (a method
        call per entry would cost as much as the rest of the work).
        """
        key = self.ID_KEY
        index = {entry[key]: position for position, entry in enumerate(self.entries)}
        get = index.get
        first, *more = self.PARENT_KEYS
        parents: list[int] = []
        append = parents.append
        for entry in self.entries:
            parent = entry.get(first)
            if not parent and more:
                parent = next((entry.get(k) for k in more if entry.get(k)), None)
            append(get(parent, -1) if type(parent) is str else -1)
        self.parents = parents
        self.index = index

    @abstractmethod
    def entry_id(self, entry: Entry) -> str | None: ...

    @property
    def default_leaf(self) -> str | None:
        """The leaf the writing app would continue from (its last entry, unless a format says
        otherwise)."""
        return self.entry_id(self.entries[-1]) if self.entries else None

    @property
    @abstractmethod
    def title(self) -> str:
        """The session's name, or its first user text."""

    def leaf_position(self, leaf: str | None) -> int:
        if leaf is None:
            leaf = self.default_leaf
            if leaf is None:
                return -1
        position = self.index.get(leaf)
        if position is None:
            raise BranchNotFound(f"{self.path}: no entry {leaf!r} in this session")
        return position

    def path_positions(self, leaf: str | None = None) -> list[int]:
        """Positions root-first from the root to ``leaf`` (default: the current leaf)."""
        position = self.leaf_position(leaf)
        out: list[int] = []
        seen: set[int] = set()
        parents = self.parents
        while position >= 0 and position not in seen:
            seen.add(position)
            out.append(position)
            position = parents[position]
        out.reverse()
        return out

    def ancestors(self, position: int) -> Iterator[int]:
        """``position`` and its ancestors, leaf first (stops at a repeated entry)."""
        seen: set[int] = set()
        parents = self.parents
        while position >= 0 and position not in seen:
            seen.add(position)
            yield position
            position = parents[position]

    def counts(self, position: int) -> bool:
        """Whether an entry can end a branch (a format may skip bookkeeping entries)."""
        return True

    def leaf_positions(self) -> list[int]:
        """Entries nothing that counts continues from (through bookkeeping entries too)."""
        counting = [self.counts(p) for p in range(len(self.entries))]
        continued = self.continued(counting)
        return [p for p, counts in enumerate(counting) if counts and not continued[p]]

    def continued(self, counting: list[bool]) -> bytearray:
        """Whether something that counts descends from each entry."""
        continued = bytearray(len(self.entries))
        parents = self.parents
        for position, counts in enumerate(counting):
            if not counts:
                continue
            parent = parents[position]
            while parent >= 0 and not continued[parent]:
                continued[parent] = 1
                parent = parents[parent]
        return continued

    def is_sidechain(self, position: int) -> bool:
        return False

    @abstractmethod
    def branch_title(self, leaf_first: Iterable[int]) -> str:
        """A line naming the branch, from its entries leaf first (read only as far as needed)."""

    def branches(self) -> list[Branch]:
        """Every leaf, current first, then sub-agents last, newest first.

        Each branch is walked from its leaf only as far as it needs: to its first user text for
        the title and to the current branch for the fork point; its length comes from depths
        computed once.
        """
        current = self.default_leaf
        current_path = set(self.path_positions(current)) if current is not None else set()
        depth = self._depths()
        out: list[Branch] = []
        for position in self.leaf_positions():
            leaf_id = self.entry_id(self.entries[position])
            if leaf_id is None:
                continue
            fork = next((p for p in self.ancestors(position) if p in current_path), None)
            out.append(
                Branch(
                    leaf=leaf_id,
                    title=self.branch_title(self.ancestors(position)),
                    length=depth[position],
                    ts=self.entry_ts(self.entries[position]),
                    current=leaf_id == current,
                    fork_point=self.entry_id(self.entries[fork]) if fork is not None else None,
                    sidechain=self.is_sidechain(position),
                )
            )
        out.sort(key=lambda b: (not b.current, b.sidechain, -(b.ts or 0)))
        return out

    def _depths(self) -> list[int]:
        """Entries on the path from the root to each entry (a cycle counts each entry once)."""
        depth = [0] * len(self.entries)
        parents = self.parents
        for position in range(len(self.entries)):
            if depth[position]:
                continue
            chain: list[int] = []
            seen: set[int] = set()
            p = position
            while p >= 0 and not depth[p] and p not in seen:
                seen.add(p)
                chain.append(p)
                p = parents[p]
            base = depth[p] if p >= 0 and depth[p] else 0
            for offset, q in enumerate(reversed(chain), 1):
                depth[q] = base + offset
        return depth

    @staticmethod
    def entry_ts(entry: Entry) -> int | None:
        return iso_ms(entry.get("timestamp"))

    # --- views ----------------------------------------------------------------------------------

    @abstractmethod
    def timeline(self, leaf: str | None = None) -> Timeline:
        """The rows of one branch, root first (the window shows the current branch)."""

    @abstractmethod
    def context(self, leaf: str | None = None) -> ForeignContext:
        """The messages the model is given at ``leaf``, rebuilt as the writing app builds them."""

    @abstractmethod
    def usage(self, leaf: str | None = None) -> list[UsageRecord]:
        """Usage reported on the branch, in order."""

    @abstractmethod
    def request_contexts(self, leaf: str | None = None) -> list[tuple[str, Sequence[Message]]]:
        """(assistant row id, the context that request was given) for every model call on the branch."""

    def lanes(self, leaf: str | None = None) -> list[str]:
        """Leaves of the sub-agent chains this branch ran (their calls count with it)."""
        return []

    def system_diffs(self, leaf: str | None = None) -> dict[str, SystemDiff]:
        """Every system and compaction row's diff on the branch, by row id, in one pass."""
        return {}
