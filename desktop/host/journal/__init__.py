"""The crash-safe transcript journal (design T1–T7).

A session is one append-only JSONL file: a header line, then one row per line. The writer
acknowledges rows only once they are fsynced (``Ack``); a failed write is a
``LocalPreparationFailure``; reading never raises on content and reports problems by file and line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from desktop.host.journal.ack import Ack
from desktop.host.journal.envelope import SCHEMA_VERSION, new_row_id
from desktop.host.journal.errors import JournalFormatError, LocalPreparationFailure, NotAcknowledged
from desktop.host.journal.order import model_order
from desktop.host.journal.reader import (
    Diagnostic,
    SessionLog,
    format_diagnostic,
    read_session,
)
from desktop.host.journal.rows import (
    AssistantRow,
    CompactionRow,
    ModelSystem,
    NoteRow,
    OpaqueRow,
    RowBase,
    SystemRow,
    ToolResultRow,
    UserRow,
    parse_row,
)
from desktop.host.journal.writer import JournalWriter

if TYPE_CHECKING:
    from desktop.host.journal.store import SessionStore

#: Names served by ``store`` (the sessions folder): only the window and forks list or make
#: sessions there, so opening one named file does not load it (design D6).
_STORE_NAMES = frozenset({"SessionStore"})


def __getattr__(name: str) -> Any:
    if name in _STORE_NAMES:
        from desktop.host.journal import store  # Lazy: the status budget.

        return getattr(store, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "SCHEMA_VERSION",
    "Ack",
    "AssistantRow",
    "CompactionRow",
    "Diagnostic",
    "JournalFormatError",
    "JournalWriter",
    "LocalPreparationFailure",
    "ModelSystem",
    "NotAcknowledged",
    "NoteRow",
    "OpaqueRow",
    "RowBase",
    "SessionLog",
    "SessionStore",
    "SystemRow",
    "ToolResultRow",
    "UserRow",
    "format_diagnostic",
    "model_order",
    "new_row_id",
    "parse_row",
    "read_session",
]
