"""pi-coding-agent sessions, read-only (design X1).

The header names the format version; v1 and v2 files are migrated in memory exactly as pi does
on load (``pi_context.migrate``), never by rewriting the file. Entries form a tree by
``id``/``parentId``; the leaf pi continues from is the file's last entry. The context of any
leaf is rebuilt with ``pi_context`` (pi's own algorithm, checked against pi itself), and a
system message's row shows the same kind of section diff as a Desktop hidden system row.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from desktop.host.foreign.lines import JsonLines
from desktop.host.journal.reader import Diagnostic, Severity
from desktop.pi.projection import paused_gc
from desktop.pi.text import content_preview, content_text
from desktop.pi.types import Message
from desktop.session.foreign import model as k
from desktop.session.foreign.base import Entry, ForeignSession
from desktop.session.foreign.model import ForeignContext, SystemDiff, Timeline, TimelineRow, UsageRecord
from desktop.session.foreign.pi_context import (
    CURRENT_VERSION,
    PLAIN_ROLES,
    Projection,
    convert_to_llm,
    entry_messages,
    migrate,
    project_path,
)
from desktop.session.foreign.pi_context import contributing as pi_contributing
from desktop.session.foreign.shapes import pi_entry_problem, set_aside
from desktop.session.inspector.section_diff import section_changes, tool_changes
from desktop.session.prefix import Prefix

_ROLE_KINDS = {
    "user": k.USER,
    "assistant": k.ASSISTANT,
    "toolResult": k.TOOL,
    "system": k.SYSTEM,
    "bashExecution": k.BASH,
    "custom": k.CUSTOM_MESSAGE,
    "branchSummary": k.BRANCH_SUMMARY,
    "compactionSummary": k.COMPACTION_SUMMARY,
}
_TYPE_KINDS = {
    "compaction": k.COMPACTION,
    "branch_summary": k.BRANCH_SUMMARY,
    "model_change": k.MODEL_CHANGE,
    "thinking_level_change": k.THINKING_LEVEL,
    "custom": k.CUSTOM,
    "custom_message": k.CUSTOM_MESSAGE,
    "label": k.LABEL,
    "session_info": k.SESSION_INFO,
    "usage": k.USAGE,
    "context_edit": k.CONTEXT_EDIT,
}
KNOWN_TYPES = frozenset({"message", *_TYPE_KINDS})


def entry_kind(entry: Mapping[str, Any]) -> str:
    kind = entry.get("type")
    if kind == "message":
        message = entry.get("message")
        role = message.get("role") if isinstance(message, Mapping) else None
        if role == "assistant" and message.get("stopReason") in ("error", "aborted"):  # type: ignore[union-attr]
            return k.ERROR
        return _ROLE_KINDS.get(str(role), k.OTHER)
    return _TYPE_KINDS.get(str(kind), k.OTHER)


def _entry_message(entry: Mapping[str, Any]) -> Mapping[str, Any] | None:
    if entry.get("type") == "message":
        message = entry.get("message")
        return message if isinstance(message, Mapping) else None
    if entry.get("type") == "custom_message":
        return {"role": "custom", "customType": entry.get("customType"), "content": entry.get("content")}
    return None


@dataclass(frozen=True)
class _Built:
    positions: list[int]
    projection: Projection
    #: Each selected entry with the messages ``convertToLlm`` makes of its (edited) messages.
    llm: list[tuple[Entry, list[Message]]]


@dataclass(eq=False)
class PiSession(ForeignSession):
    ID_KEY = "id"
    PARENT_KEYS = ("parentId",)
    header: dict[str, Any] | None = None
    labels: dict[str, str] | None = None
    name: str | None = None
    _cache: dict[str | None, _Built] = field(default_factory=dict, repr=False)

    @classmethod
    def from_lines(cls, read: JsonLines) -> PiSession:
        objects, lines = read.objects, read.lines
        diagnostics = list(read.diagnostics)
        path = read.path

        def note(line: int, severity: Severity, code: str, message: str, field: str | None = None) -> None:
            diagnostics.append(Diagnostic(path, line, severity, code, message, field))

        header = objects[0] if objects and objects[0].get("type") == "session" else None
        version = header.get("version", 1) if header is not None else 1
        if not isinstance(version, int) or isinstance(version, bool):
            version = 1
        if version > CURRENT_VERSION:
            note(
                lines[0] if lines else 1,
                "warning",
                "newer-format",
                f"pi session format v{version} is newer than this app reads (v1 to v{CURRENT_VERSION}); "
                "entries it does not know are shown as such and never sent to the model",
            )
        migrated = migrate(objects, lines, version) if header is not None else list(objects)
        entries: list[Entry] = []
        entry_lines: list[int] = []
        seen: dict[str, int] = {}
        for index, entry in enumerate(migrated):
            if entry.get("type") == "session":
                continue
            line = lines[index]
            entry_id = entry.get("id")
            if not isinstance(entry_id, str) or not entry_id:
                note(line, "error", "bad-entry", f"entry of type {entry.get('type')!r} has no 'id'; skipped")
                continue
            if entry_id in seen:
                note(
                    line,
                    "warning",
                    "duplicate-id",
                    f"entry id {entry_id} appears again (first on line {seen[entry_id]}); pi uses this later one",
                )
            seen.setdefault(entry_id, line)
            entry = _tool_lists(entry, path, line, diagnostics)  # bare names read as {name}
            shape = pi_entry_problem(entry)
            if shape is not None:  # set aside where it is read (design T9); its children keep their place
                note(
                    line,
                    "error",
                    "bad-entry",
                    f"entry {entry_id} cannot be used: {shape.message}; set aside",
                    shape.field,
                )
                entries.append(set_aside(entry, ("id", "parentId", "timestamp")))
                entry_lines.append(line)
                continue
            if entry.get("type") not in KNOWN_TYPES:
                note(
                    line,
                    "warning",
                    "unknown-entry",
                    f"entry {entry_id} has a type this app does not know ({entry.get('type')!r}); shown as such",
                )
            entries.append(entry)
            entry_lines.append(line)
        session = cls(
            format="pi",
            path=path,
            entries=entries,
            lines=entry_lines,
            diagnostics=diagnostics,
            session_id=header.get("id") if header else None,
            cwd=header.get("cwd") if header and isinstance(header.get("cwd"), str) else None,
            version=version,
            header=header,
        )
        session._link()
        session._scan_labels()
        return session

    def _scan_labels(self) -> None:
        labels: dict[str, str] = {}
        name: str | None = None
        for entry in self.entries:
            kind = entry.get("type")
            if kind == "label":
                target, label = entry.get("targetId"), entry.get("label")
                if isinstance(target, str):
                    if isinstance(label, str) and label:
                        labels[target] = label
                    else:
                        labels.pop(target, None)
            elif kind == "session_info":
                value = entry.get("name")
                name = value.strip() or None if isinstance(value, str) else None
        self.labels, self.name = labels, name

    # --- tree ----------------------------------------------------------------------------------

    def entry_id(self, entry: Entry) -> str | None:
        value = entry.get("id")
        return value if isinstance(value, str) else None

    @property
    def title(self) -> str:
        return self.name or self._user_text(range(len(self.entries))) or "(no messages)"

    def branch_title(self, leaf_first: Iterable[int]) -> str:
        return self._user_text(leaf_first) or "(no user message)"

    def _user_text(self, positions: Iterable[int]) -> str:
        """The first user message's text among ``positions``, on one line, or ''."""
        for position in positions:
            entry = self.entries[position]
            message = entry.get("message") if entry.get("type") == "message" else None
            if isinstance(message, Mapping) and message.get("role") == "user":
                text = " ".join(content_preview(message.get("content")).split())
                if text:
                    return text[:120]
        return ""

    def _path(self, leaf: str | None) -> list[Entry]:
        return [self.entries[p] for p in self.path_positions(leaf)]

    def _built(self, leaf: str | None) -> _Built:
        """The branch and pi's projection of it, once per leaf (the file is only read)."""
        built = self._cache.get(leaf)
        if built is None:
            with paused_gc():
                positions = self.path_positions(leaf)
                projection = project_path([self.entries[p] for p in positions])
                llm: list[tuple[Entry, list[Message]]] = [
                    # One message of a model role converts to itself (the common case, inlined).
                    (entry, cast(list[Message], messages))
                    if len(messages) == 1 and messages[0].get("role") in PLAIN_ROLES
                    else (entry, convert_to_llm(messages))
                    for entry, messages in projection.entries
                ]
                built = _Built(positions, projection, llm)
            self._cache[leaf] = built
        return built

    # --- views ---------------------------------------------------------------------------------

    def timeline(self, leaf: str | None = None) -> Timeline:
        """The branch's rows; kinds and in-context marks up front, each row built when asked for.

        No message is built here: what reaches the model is decided from the entries alone
        (``pi_context.contributing``), so opening a long session costs little more than
        reading it; the context itself is built when the Payload tab asks (``context``).
        """
        with paused_gc():
            positions = self.path_positions(leaf)
            entries, lines = self.entries, self.lines
            contributing = pi_contributing([entries[p] for p in positions])
            kinds = [entry_kind(entries[p]) for p in positions]
        labels = self.labels or {}

        def build(index: int) -> TimelineRow:
            position = positions[index]
            entry = entries[position]
            entry_id = str(entry.get("id"))
            kind = kinds[index]
            message = _entry_message(entry)
            if kind in (k.ASSISTANT, k.ERROR) and message is not None:
                usage = message.get("usage")
            elif kind in (k.USAGE, k.COMPACTION, k.BRANCH_SUMMARY):
                usage = entry.get("usage")
            else:
                usage = None
            return TimelineRow(
                entry_id,
                kind,
                lines[position],
                entry,
                message,
                usage if isinstance(usage, Mapping) else None,
                labels.get(entry_id),
                id(entry) in contributing,
            )

        return Timeline(kinds, build)

    def context(self, leaf: str | None = None) -> ForeignContext:
        built = self._built(leaf)
        llm: list[Message] = []
        sources: list[str] = []
        for entry, converted in built.llm:
            llm.extend(converted)
            sources.extend([str(entry.get("id"))] * len(converted))
        return ForeignContext(
            messages=llm,
            sources=sources,
            agent_messages=built.projection.messages,
            model=built.projection.model,
            thinking_level=built.projection.thinking_level,
        )

    def usage(self, leaf: str | None = None) -> list[UsageRecord]:
        records: list[UsageRecord] = []
        for row in self.timeline(leaf):
            if row.usage is None:
                continue
            entry, message = row.entry, row.message or {}
            if entry.get("type") == "message":
                provider, model, kind = str(message.get("provider")), str(message.get("model")), "message"
            else:
                provider, model = str(entry.get("provider", "?")), str(entry.get("model", "?"))
                kind = str(entry.get("kind") or entry.get("type"))
            records.append(UsageRecord(row.id, row.ts, provider, model, row.usage, kind))
        return records

    def request_contexts(self, leaf: str | None = None) -> list[tuple[str, Sequence[Message]]]:
        """Each assistant message's request: the context pi built at its parent.

        Between compactions and context edits the context only grows, so it is extended entry
        by entry; a compaction or an edit (which changes earlier messages) rebuilds it.
        """
        path = self._path(leaf)
        out: list[tuple[str, Sequence[Message]]] = []
        current: list[Message] = []
        for index, entry in enumerate(path):
            kind = entry.get("type")
            message = entry.get("message") if kind == "message" else None
            if isinstance(message, Mapping) and message.get("role") == "assistant":
                out.append((str(entry.get("id")), Prefix(current, len(current))))  # shared (design X8)
            if kind in ("compaction", "context_edit"):
                current = convert_to_llm(project_path(path[: index + 1]).messages)
            else:
                current.extend(convert_to_llm(entry_messages(entry)))
        return out

    def system_diffs(self, leaf: str | None = None) -> dict[str, SystemDiff]:
        """Every system and compaction row's section diff on the branch, in one pass.

        The state before a row is replayed the way pi builds context: a compaction restarts
        from its ``systemMessage`` checkpoint (system messages in its kept range are dropped
        in its favour), later system messages patch sections by name (``null`` removes one)
        and add or remove tools.
        """
        sections: dict[str, str] = {}
        tools: dict[str, Mapping[str, Any]] = {}
        out: dict[str, SystemDiff] = {}
        for entry in self._path(leaf):
            kind = entry.get("type")
            if kind not in ("message", "compaction"):
                continue
            is_system = kind == "message" and entry_kind(entry) == k.SYSTEM
            row_id = str(entry.get("id"))
            if kind == "compaction":
                out[row_id] = _compaction_diff(row_id, entry, sections, tools)
                sections, tools = {}, {}
                checkpoint = entry.get("systemMessage")
                if isinstance(checkpoint, Mapping):
                    _apply(checkpoint, sections, tools)
            elif is_system:
                message = cast(Mapping[str, Any], entry["message"])
                out[row_id] = _system_diff(row_id, message, sections, tools)
                _apply(message, sections, tools)
        return out


def _tool_lists(entry: Entry, path: Path, line: int, diagnostics: list[Diagnostic]) -> Entry:
    """A system message's tool lists in the shape pi's projection reads (``{name}`` objects).

    Some files hold the removed tools as bare names; they mean the same and are read as
    ``{"name": ...}`` (in memory: the file is never changed). Anything else in either list
    is reported with its line and field and left out, so the rest of the message still counts.
    """
    message = entry.get("message")
    if entry.get("type") != "message" or not isinstance(message, dict) or message.get("role") != "system":
        return entry
    fixed: dict[str, Any] = {}
    for key in ("toolsAdded", "toolsRemoved"):
        value = message.get(key)
        if value is None:
            continue
        items = value if isinstance(value, list) else None
        if items is None:
            diagnostics.append(
                _field_problem(path, line, entry, key, f"is {type(value).__name__}, not a list")
            )
            fixed[key] = []
            continue
        kept: list[Any] = []
        for index, item in enumerate(items):
            if key == "toolsRemoved" and isinstance(item, str):
                kept.append({"name": item})
            elif isinstance(item, dict) and isinstance(item.get("name"), str):
                kept.append(item)
            else:
                diagnostics.append(
                    _field_problem(path, line, entry, f"{key}[{index}]", "has no tool name; left out")
                )
        if kept != items:
            fixed[key] = kept
    return {**entry, "message": {**message, **fixed}} if fixed else entry


def _field_problem(path: Path, line: int, entry: Entry, field_name: str, what: str) -> Diagnostic:
    return Diagnostic(
        path, line, "warning", "bad-field", f"entry {entry.get('id')}: field 'message.{field_name}' {what}"
    )


def _apply(message: Mapping[str, Any], sections: dict[str, str], tools: dict[str, Mapping[str, Any]]) -> None:
    for name, value in (message.get("sections") or {}).items():
        if value is None:
            sections.pop(name, None)
        else:
            sections[name] = value
    for ref in message.get("toolsRemoved") or ():
        if isinstance(ref, Mapping):
            tools.pop(str(ref.get("name")), None)
    for tool in message.get("toolsAdded") or ():
        if isinstance(tool, Mapping):
            tools[str(tool.get("name"))] = tool


def _system_diff(
    row_id: str, message: Mapping[str, Any], sections: dict[str, str], tools: dict[str, Mapping[str, Any]]
) -> SystemDiff:
    changes, after = section_changes(sections, message)
    added, redefined = tool_changes(message, tools)
    removed = [str(t.get("name", "?")) for t in message.get("toolsRemoved") or () if isinstance(t, Mapping)]
    parts = []
    if message.get("sections"):
        parts.append("sections: " + ", ".join(sorted(message["sections"])))
    if added or redefined:
        parts.append("tools added: " + ", ".join(added + redefined))
    if removed:
        parts.append("tools removed: " + ", ".join(removed))
    return SystemDiff(
        row_id,
        "; ".join(parts) or "system message",
        None,
        changes,
        added,
        redefined,
        removed,
        content_text(message.get("content") or ""),
        sections_before=len(sections),
        sections_after=len(after),
    )


def _compaction_diff(
    row_id: str, entry: Mapping[str, Any], sections: dict[str, str], tools: dict[str, Mapping[str, Any]]
) -> SystemDiff:
    label = "compaction checkpoint: full state restored after it"
    checkpoint = entry.get("systemMessage")
    if not isinstance(checkpoint, Mapping):
        return SystemDiff(
            row_id,
            label,
            problem="this compaction has no systemMessage checkpoint (written before pi kept one): "
            "the model sees no system state after it until a later system message",
            sections_before=len(sections),
        )
    changes, _after = section_changes(sections, checkpoint, restart=True)
    added, redefined = tool_changes(checkpoint, tools)
    kept = {str(t.get("name")) for t in checkpoint.get("toolsAdded") or () if isinstance(t, Mapping)}
    return SystemDiff(
        row_id,
        label,
        None,
        changes,
        added,
        redefined,
        sorted(set(tools) - kept),
        content_text(checkpoint.get("content") or ""),
        sections_before=len(sections),
        sections_after=len(checkpoint.get("sections") or {}),
    )
