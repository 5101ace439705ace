"""The acknowledgement a request needs before it may be dispatched (design T3).

Only ``JournalWriter`` can issue an ``Ack`` (the constructor checks a private seal), and it issues
one only after the rows are flushed and fsynced. The runtime asks ``ack.require(turn_row_ids)``
right before dispatch, so a request whose rows were never made durable cannot go out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import InitVar, dataclass
from pathlib import Path

from desktop.host.journal.errors import NotAcknowledged

_SEAL = object()


@dataclass(frozen=True, slots=True)
class Ack:
    """Which rows one write made durable."""

    path: Path
    session_id: str
    ids: tuple[str, ...]
    """Every id this acknowledgement covers, in the order they were asked for."""
    written: tuple[str, ...]
    """The ids this call wrote; the others were already durable (an idempotent retry)."""
    syncs: int
    """fsync calls this acknowledgement cost: 1 for a batch with new rows, 0 for a pure retry."""
    seal: InitVar[object]

    def __post_init__(self, seal: object) -> None:
        if seal is not _SEAL:
            raise TypeError("an Ack is issued only by JournalWriter after the rows are durable")

    def require(self, ids: Iterable[str]) -> None:
        """Raise ``NotAcknowledged`` unless every id is covered; call it right before dispatch."""
        held = set(self.ids)
        missing = [row_id for row_id in ids if row_id not in held]
        if missing:
            raise NotAcknowledged(
                f"refusing to dispatch: {len(missing)} row(s) of this request are not durable in "
                f"{self.path} (first: {missing[0]})"
            )


def issue_ack(path: Path, session_id: str, ids: Iterable[str], written: Iterable[str], syncs: int) -> Ack:
    """For ``JournalWriter`` only."""
    return Ack(path, session_id, tuple(ids), tuple(written), syncs, _SEAL)
