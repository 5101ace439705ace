"""The plain data a foreign session is shown as: timeline rows, branches, context, diffs (X1).

pi and Claude Code sessions come out in the same shapes so the window needs one set of views:
a timeline row says what kind of thing it is (``kind``), where it came from (``id``, ``line``,
the raw ``entry``) and, when it carries one, the neutral pi-ai message and its usage. Summaries
are computed on demand (``row_summary``), never for every row on open, so a 100 MB transcript
opens at close to the cost of parsing its JSON.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, Literal, cast, overload

from desktop.pi.text import content_preview, one_line
from desktop.pi.types import Message
from desktop.session.inspector.section_diff import SectionDiff

# --- row kinds ---------------------------------------------------------------------------------

USER: Final = "user"
ASSISTANT: Final = "assistant"
ERROR: Final = "error"  # an assistant message that failed or was aborted
TOOL: Final = "tool"  # a tool result
SYSTEM: Final = "system"  # pi system message: prompt sections and tool changes (hidden row)
COMPACTION: Final = "compaction"  # pi compaction entry / Claude Code compact boundary
COMPACTION_SUMMARY: Final = "compaction_summary"  # Claude Code isCompactSummary message
BRANCH_SUMMARY: Final = "branch_summary"
LABEL: Final = "label"
MODEL_CHANGE: Final = "model_change"
THINKING_LEVEL: Final = "thinking_level"
CUSTOM_MESSAGE: Final = "custom_message"  # extension message the model sees
CUSTOM: Final = "custom"  # extension state the model never sees
SESSION_INFO: Final = "session_info"
USAGE: Final = "usage"  # usage outside any assistant message (e.g. cache warming)
CONTEXT_EDIT: Final = "context_edit"
BASH: Final = "bash"  # pi bashExecution (a shell command the user ran)
REMINDER: Final = "reminder"  # Claude Code <system-reminder> text inside a user message
META: Final = "meta"  # Claude Code isMeta user message (command caveats, injected context)
ATTACHMENT: Final = "attachment"  # Claude Code harness attachment (hooks, deferred tool deltas)
NOTE: Final = "note"  # Claude Code system entry (informational, API error, hook summary)
OTHER: Final = "other"  # an entry type this app does not know (kept, shown as such)

#: Rows the chat view hides by default (the inspector shows them with "hidden rows" on):
#: what the model is told outside the conversation, and bookkeeping nobody typed.
HIDDEN_KINDS: Final = frozenset({SYSTEM, REMINDER, META, ATTACHMENT, CUSTOM, USAGE, OTHER})

SourceFormat = Literal["pi", "claude-code", "codex"]


def iso_ms(value: object) -> int | None:
    """An ISO 8601 timestamp as Unix milliseconds (JS ``new Date(s).getTime()``), None if invalid."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None
    return round(moment.timestamp() * 1000)


@dataclass(frozen=True, slots=True)
class TimelineRow:
    id: str
    kind: str
    #: 1-based line of the entry in the source file.
    line: int
    entry: Mapping[str, Any]
    #: The neutral pi-ai message the row carries (as stored, before any context edit).
    message: Mapping[str, Any] | None = None
    usage: Mapping[str, Any] | None = None
    #: pi ``label`` entries resolved onto the entry they name.
    label: str | None = None
    #: Whether the row contributes to the model's context at the branch's leaf.
    in_context: bool = False
    sidechain: bool = False
    #: Row-specific text: the reminder of a ``reminder`` row; a user message's own words when
    #: reminders were cut out of it.
    text: str | None = None

    @property
    def hidden(self) -> bool:
        return self.kind in HIDDEN_KINDS

    @property
    def ts(self) -> int | None:
        """The entry's time (Unix ms), parsed on demand: only visible rows need it."""
        return iso_ms(self.entry.get("timestamp"))

    @property
    def summary(self) -> str:
        return row_summary(self)


class Timeline(Sequence[TimelineRow]):
    """The rows of one branch, root first, built when asked for.

    The window's list model asks only for the rows on screen, and filters on ``kinds`` (one
    string per row, known up front), so a 100k-row branch costs little more than its kinds.
    """

    def __init__(self, kinds: list[str], build: Callable[[int], TimelineRow]) -> None:
        self.kinds = kinds
        self._build = build

    @classmethod
    def of(cls, rows: list[TimelineRow]) -> Timeline:
        return cls([row.kind for row in rows], rows.__getitem__)

    def __len__(self) -> int:
        return len(self.kinds)

    @overload
    def __getitem__(self, index: int) -> TimelineRow: ...

    @overload
    def __getitem__(self, index: slice) -> list[TimelineRow]: ...

    def __getitem__(self, index: int | slice) -> TimelineRow | list[TimelineRow]:
        if isinstance(index, slice):
            return [self._build(i) for i in range(*index.indices(len(self.kinds)))]
        if index < 0:
            index += len(self.kinds)
        if not 0 <= index < len(self.kinds):
            raise IndexError("timeline row index out of range")
        return self._build(index)

    def __iter__(self) -> Iterator[TimelineRow]:
        build = self._build
        for index in range(len(self.kinds)):
            yield build(index)


@dataclass(frozen=True, slots=True)
class Branch:
    """One leaf of the session tree, for the branch switcher."""

    leaf: str
    title: str
    #: Entries on the path from the root to the leaf.
    length: int
    ts: int | None
    current: bool
    #: The deepest entry this branch shares with the current one (None: no shared entry).
    fork_point: str | None
    sidechain: bool = False


@dataclass(frozen=True)
class ForeignContext:
    """What the model is given at a leaf, in pi-ai's neutral shape."""

    messages: list[Message]
    #: The entry each message came from.
    sources: list[str]
    #: pi: the session messages before ``convertToLlm`` (custom roles kept); else ``messages``.
    agent_messages: list[dict[str, Any]]
    #: (provider, model id) last selected or used on the branch.
    model: tuple[str, str] | None
    thinking_level: str | None
    #: False when the file does not record the system prompt and tools (Claude Code).
    system_known: bool = True
    notes: list[str] = field(default_factory=list)


def unrecorded_system(messages: list[Message], sources: list[str], notes: list[str]) -> ForeignContext:
    """The context of a file that records no system prompt or tools (Claude Code, Codex), with
    the model of its last reply."""
    model = next(
        (
            (str(m.get("provider")), str(m.get("model")))
            for m in reversed(messages)
            if m["role"] == "assistant"
        ),
        None,
    )
    return ForeignContext(messages, sources, cast(list[dict[str, Any]], messages), model, None, False, notes)


@dataclass(frozen=True, slots=True)
class UsageRecord:
    """Usage reported for one model call (an assistant message or a pi ``usage`` entry)."""

    row_id: str
    ts: int | None
    provider: str
    model: str
    #: pi-ai ``Usage`` shape (input, output, cacheRead, cacheWrite, totalTokens, cost).
    usage: Mapping[str, Any]
    kind: str = "message"
    #: The provider's own figures when the file keeps them (Claude Code).
    raw: Mapping[str, Any] | None = None


# --- section diffs (the same figures the Desktop inspector shows for its system rows) ------------

#: A foreign system row's diff is the Desktop inspector's own type, so the window draws both alike.
SystemDiff = SectionDiff


# --- summaries ----------------------------------------------------------------------------------


def _names(tools: object) -> list[str]:
    if not isinstance(tools, Sequence):
        return []
    return [str(t.get("name", "?")) for t in tools if isinstance(t, Mapping)]


def _system_summary(message: Mapping[str, Any]) -> str:
    parts = []
    sections = message.get("sections")
    if isinstance(sections, Mapping) and sections:
        names = [f"{n} (removed)" if v is None else str(n) for n, v in sections.items()]
        parts.append("sections: " + ", ".join(names[:6]) + (" …" if len(names) > 6 else ""))
    added, removed = _names(message.get("toolsAdded")), _names(message.get("toolsRemoved"))
    if added:
        parts.append("tools added: " + ", ".join(added))
    if removed:
        parts.append("tools removed: " + ", ".join(removed))
    text = content_preview(message.get("content"))
    if text:
        parts.append(text)
    return "; ".join(parts) or "no changes"


def row_summary(row: TimelineRow) -> str:
    """One line that says what the row is about."""
    entry, message, kind = row.entry, row.message or {}, row.kind
    if row.text is not None:
        return one_line(row.text) or "(empty)"
    if kind in (USER, ASSISTANT, META, COMPACTION_SUMMARY, CUSTOM_MESSAGE) and message:
        text = content_preview(message.get("content"))
        if kind == CUSTOM_MESSAGE:
            text = f"[{message.get('customType', entry.get('customType', '?'))}] {text}"
        return one_line(text) or "(empty)"
    if kind == ERROR:
        why = message.get("errorMessage") or message.get("stopReason") or "error"
        text = content_preview(message.get("content"))
        return one_line(f"[{message.get('stopReason', 'error')}] {why}" + (f" — {text}" if text else ""))
    if kind == TOOL:
        prefix = f"{message.get('toolName', '?')}{' ✗ ' if message.get('isError') else ': '}"
        return one_line(prefix + content_preview(message.get("content")))
    if kind == SYSTEM:
        return one_line(_system_summary(message))
    if kind == BASH:
        code = message.get("exitCode")
        tail = f" (exit {code})" if code not in (None, 0) else ""
        excluded = " [not sent to the model]" if message.get("excludeFromContext") else ""
        return one_line(f"$ {message.get('command', '')}{tail}{excluded}: {message.get('output', '')}")
    return one_line(_entry_summary(row))


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _entry_summary(row: TimelineRow) -> str:
    entry, kind = row.entry, row.kind
    if kind == COMPACTION:
        tokens = entry.get("tokensBefore")
        meta = entry.get("compactMetadata")
        if isinstance(meta, Mapping):
            tokens = meta.get("preTokens", tokens)
            trigger = meta.get("trigger")
            head = f"compacted {tokens:,} tokens" if isinstance(tokens, int) else "compacted"
            return head + (f" ({trigger})" if trigger else "")
        head = f"compacted {tokens:,} tokens" if isinstance(tokens, int) else "compacted"
        return f"{head}: {entry.get('summary', '')}"
    if kind == BRANCH_SUMMARY:
        return f"branch summary (from {entry.get('fromId')}): {entry.get('summary', '')}"
    if kind == LABEL:
        label = entry.get("label")
        return (
            f"label {label!r} on {entry.get('targetId')}"
            if label
            else f"label cleared on {entry.get('targetId')}"
        )
    if kind == MODEL_CHANGE:
        return f"model: {entry.get('provider')}/{entry.get('modelId')}"
    if kind == THINKING_LEVEL:
        return f"thinking level: {entry.get('thinkingLevel')}"
    if kind == CUSTOM:
        return f"extension state [{entry.get('customType')}] (never sent to the model)"
    if kind == SESSION_INFO:
        return f"session name: {entry.get('name', '')}"
    if kind == USAGE:
        usage = _mapping(entry.get("usage"))
        return (
            f"usage ({entry.get('kind', '?')}) {entry.get('provider')}/{entry.get('model')}: "
            f"{usage.get('totalTokens') or 0:,} tokens"
        )
    if kind == CONTEXT_EDIT:
        replacement = entry.get("replacement")
        if replacement is None:
            return f"context edit: {entry.get('targetId')} omitted from the model's context"
        text = content_preview(replacement.get("content")) if isinstance(replacement, Mapping) else ""
        return f"context edit of {entry.get('targetId')}: {text}"
    if kind == ATTACHMENT:
        attachment = _mapping(entry.get("attachment"))
        return f"attachment: {attachment.get('type', '?')}"
    if kind == NOTE:
        content = entry.get("content")
        subtype = entry.get("subtype")
        head = f"{subtype}: " if isinstance(subtype, str) and subtype else ""
        return f"{head}{content if isinstance(content, str) else ''}"
    return f"unknown entry type {entry.get('type')!r} (kept as it is)"
