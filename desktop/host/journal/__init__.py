"""The crash-safe transcript journal (SPEC §2, T1–T7).

A session is one append-only JSONL file: a header line, then one row per line. The writer
acknowledges rows only once they are fsynced (``Ack``); a failed write is a
``LocalPreparationFailure``; reading never raises on content and reports problems by file and line.
"""

from __future__ import annotations

from desktop.host.journal.ack import Ack
from desktop.host.journal.errors import JournalFormatError, LocalPreparationFailure, NotAcknowledged
from desktop.host.journal.order import model_order
from desktop.host.journal.reader import (
    Diagnostic,
    SessionLog,
    SetAside,
    TornTail,
    format_diagnostic,
    read_session,
)
from desktop.host.journal.rows import (
    SCHEMA_VERSION,
    AssistantRow,
    CompactionRow,
    ModelSystem,
    NoteRow,
    OpaqueRow,
    RowBase,
    SessionHeader,
    SystemRow,
    ToolResultRow,
    UserRow,
    new_row_id,
    parse_row,
)
from desktop.host.journal.store import SessionInfo, SessionStore
from desktop.host.journal.writer import JournalWriter

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
    "SessionHeader",
    "SessionInfo",
    "SessionLog",
    "SessionStore",
    "SetAside",
    "SystemRow",
    "ToolResultRow",
    "TornTail",
    "UserRow",
    "format_diagnostic",
    "model_order",
    "new_row_id",
    "parse_row",
    "read_session",
]
