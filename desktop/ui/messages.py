"""What the worker sends the window about the session it shows (design D10).

One frozen object per signal (``Signal(object)``: Qt copies nothing, design G9), built on the
worker thread and only read on the GUI thread. A session reaches the window as rows of one of
three kinds, each its own type: a Desktop journal's row index (and the rows the open itself
appended), a Desktop journal's decoded rows (the file changed while it was opened), or a pi,
Claude Code or Codex branch read lazily as it is painted.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations only: the foreign readers load when a foreign session opens
    from desktop.session.inspector.routes import RouteChoice
    from desktop.ui.foreign_rows import ForeignRows
    from desktop.ui.row_index import RowIndex
    from desktop.ui.usage_stats import UsageLine, UsageTotals

Row = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ForeignBranch:
    """The branch of a read-only pi, Claude Code or Codex session the window shows (X1)."""

    format: str
    #: The format as people call it ("Claude Code transcript").
    name: str
    #: None for a file with no entry yet.
    leaf: str | None
    #: Every branch of the file, the shown one first (``branch_dict``: leaf, title, forkPoint…).
    branches: Sequence[Row]


@dataclass(frozen=True, slots=True)
class ShownSession:
    """The session the window shows (``MainWindow.session``; None while none is open)."""

    path: str
    cwd: str
    #: Why nothing can be sent or written (a lock held elsewhere, a foreign file), else None.
    read_only: str | None = None
    foreign: ForeignBranch | None = None


@dataclass(frozen=True, slots=True)
class IndexedRows:
    """A Desktop journal shown from the row index painted before (``SessionIndexed``), and the
    rows the open itself journaled after those (a continuation's update, notes; design X26)."""

    index: RowIndex
    appended: Sequence[Row] = ()


@dataclass(frozen=True, slots=True)
class DecodedRows:
    """A Desktop journal's rows in model order, every one decoded: the file changed between its
    reading and its lock and was read again (or a test shows rows it built)."""

    rows: Sequence[Row]


@dataclass(frozen=True, slots=True)
class ForeignBranchRows:
    """A foreign branch: rows built as they are painted, its usage priced on the worker."""

    reader: ForeignRows
    usage: Sequence[UsageLine]
    usage_total: UsageTotals


SessionRows = IndexedRows | DecodedRows | ForeignBranchRows


@dataclass(frozen=True, slots=True)
class SessionIndexed:
    """A Desktop session's row index, sent before the session is open so the timeline paints
    first; the window sets ``painted`` once it has (the worker waits for it, design G9)."""

    path: str
    cwd: str
    index: RowIndex
    painted: threading.Event
    #: The session's last rows only, shown while the whole file is read (design X32).
    partial: bool = False


@dataclass(frozen=True, slots=True)
class SessionOpened:
    """A session opened (or another branch of a foreign one shown), with what the user must be
    told about it; ``painted``, when set, is the event the worker waits on (design G9)."""

    session: ShownSession
    rows: SessionRows
    #: Lines of the file set aside while reading it (design X1).
    diagnostics: Sequence[str] = ()
    #: Tools that did not start, a corrupt cached catalog (design M1).
    problems: Sequence[str] = ()
    #: Instruction files not read, each "path: why" (design S7).
    skipped_guidance: Sequence[str] = ()
    #: Why the session cannot send until the user chooses a route (design G12).
    route_needed: str | None = None
    #: What the next turn journals before its message (design G12).
    pending: str | None = None
    painted: threading.Event | None = None


@dataclass(frozen=True, slots=True)
class RouteStatus:
    """The shown session's route, mode and fallback, the routes offered, and what the route can
    deliver (``capability_info``, its flags and their catalogs); sent after every change (G12)."""

    routes: Sequence[RouteChoice] = ()
    route_key: str = ""
    mode: str = "ask"
    fallback: str = "folded"
    capability: Mapping[str, Any] = field(default_factory=dict)
    path: str = ""
    #: Why the session cannot send until the user chooses a route, else None.
    route_needed: str | None = None


@dataclass(frozen=True, slots=True)
class TurnFinished:
    """How a turn or a compaction ended: ``stopped`` is the stop reason ("stop", "length",
    "toolUse", "aborted", "compacted", "error", "nothing to do"), ``error`` what went wrong,
    ``note`` all there is to say when nothing was done."""

    stopped: str
    error: str | None = None
    note: str | None = None
    #: The message sent that was not written (refused, or its row could not be stored): the
    #: window puts it back in an empty composer, so a full disk or a refusal loses no text.
    unsent: str | None = None


@dataclass(frozen=True, slots=True)
class Started:
    """The first launch's route (design D3; why is in the log), and a keyring that could not be read."""

    initial_route: str
    keyring_note: str = ""


@dataclass(frozen=True, slots=True)
class OpenProblem:
    """A file that could not be opened, said in full (design X1)."""

    title: str
    text: str
