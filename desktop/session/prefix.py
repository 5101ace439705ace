"""A prefix of a list that only grows, shared instead of copied (design X8).

A session's request contexts are each the messages before one reply: every one a prefix of
the same growing list. Copying each (``list(current)``) holds the square of the session in
memory (a 20 MB session's replay once passed 12 GB); a ``Prefix`` holds the list and a length.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from typing import overload

from desktop.pi.types import Message


class Prefix(Sequence[Message]):
    """The first ``length`` messages of a list that only grows: every request of a session
    shares the one context list instead of holding a copy (which is quadratic in memory)."""

    __slots__ = ("_items", "_length")

    def __init__(self, items: list[Message], length: int) -> None:
        self._items = items
        self._length = length

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> Message: ...
    @overload
    def __getitem__(self, index: slice) -> list[Message]: ...
    def __getitem__(self, index: int | slice) -> Message | list[Message]:
        if isinstance(index, slice):
            start, stop, step = index.indices(self._length)
            return self._items[start:stop:step]
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError(index)
        return self._items[index]

    def __iter__(self) -> Iterator[Message]:
        return itertools.islice(self._items, self._length)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Prefix | list):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    def __hash__(self) -> int:
        raise TypeError("unhashable type: 'Prefix'")

    def __repr__(self) -> str:
        return f"Prefix({list(self)!r})"
