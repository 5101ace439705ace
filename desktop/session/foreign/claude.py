"""Claude Code transcripts, read-only (design X1).

``~/.claude/projects/<project>/<session>.jsonl`` holds one entry per line: ``user``,
``assistant``, ``system`` and ``attachment``/``progress`` entries linked by ``uuid`` →
``parentUuid``, and metadata lines without a ``uuid`` (``summary`` with the ``leafUuid`` it
names, ``file-history-snapshot``, ``queue-operation``, titles). Observed behaviour this reader
relies on (documented by the format's public readers and their fixtures):

* An assistant reply is streamed as several entries, one content block each, sharing
  ``message.id``; each carries the message's usage so far. They form ONE model call: their
  blocks are merged and the last entry's usage counts, once.
* A tool result is a ``user`` entry whose content holds ``tool_result`` blocks.
* Compaction writes a ``system`` entry with ``subtype: "compact_boundary"`` whose
  ``parentUuid`` is null (the model's context restarts there) and whose ``logicalParentUuid``
  names the entry before it; the next ``user`` entry carries ``isCompactSummary`` and the
  summary. The timeline follows the logical link so the whole history stays visible; the
  context stops at the boundary, as the model's did.
* ``<system-reminder>`` blocks inside user text are what the harness told the model on the
  side; ``isMeta`` user entries are injected context; both are rows of their own kind.
* ``isSidechain`` entries belong to sub-agents and form branches of their own (lanes); a
  branch's usage and what-if replay count the sub-agent chains it ran (``lanes``).
* The links are not always the chain Claude Code sent, and ``_repair`` rebuilds it on open:
  parallel tool results each name their own tool_use entry as parent while the next reply
  continues from the last one written, so a reply's entries and results off the chain are
  gathered to it (no spurious branch, no call left without its result); a root after the first
  (a compaction whose ``logicalParentUuid`` is not in the file, or a writer that leaves every
  ``parentUuid`` null) continues the chain in file order; an attachment or note left as a leaf
  beside a chain that goes on is shown on it.
* ``summary`` lines are rows of their own (``session_info``): after the leaf they name, or
  where the file has them when that leaf is in another file (older files start with them).
* Synthetic assistant entries for API errors (``isApiErrorMessage``) were never model output
  and are not part of the model's context.

The system prompt and tool declarations are not recorded in the file, so a context rebuilt
from it has no system message and says so (``ForeignContext.system_known``).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import orjson

from desktop.host.foreign.lines import JsonLines
from desktop.host.journal.reader import Diagnostic
from desktop.pi.projection import paused_gc
from desktop.pi.text import content_preview
from desktop.pi.types import Message
from desktop.session.foreign import model as k
from desktop.session.foreign.base import Entry, ForeignSession
from desktop.session.foreign.model import (
    ForeignContext,
    Timeline,
    TimelineRow,
    UsageRecord,
    iso_ms,
    unrecorded_system,
)
from desktop.session.foreign.shapes import claude_entry_problem, set_aside
from desktop.session.prefix import Prefix

#: What an entry set aside keeps: its place in the tree (``shapes.set_aside``).
_LINK_KEYS = ("uuid", "parentUuid", "logicalParentUuid", "timestamp", "sessionId")
_REMINDER = re.compile(r"<system-reminder>\s*(.*?)\s*</system-reminder>", re.DOTALL)
CONVERSATION_TYPES = frozenset({"user", "assistant", "system", "attachment"})
_STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "tool_use": "toolUse",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "error",
}
_USAGE_FIELDS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
SYSTEM_UNKNOWN = (
    "Claude Code does not record its system prompt or tool declarations in the transcript; "
    "the context has no system message and the next request declares no tools"
)


def reminders(text: str) -> tuple[list[str], str]:
    """The ``<system-reminder>`` texts inside ``text`` and what is left without them."""
    if "<system-reminder>" not in text:
        return [], text
    found = [m.group(1) for m in _REMINDER.finditer(text)]
    return found, _REMINDER.sub("", text) if found else text


def claude_usage(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Anthropic usage figures in pi-ai's ``Usage`` shape (cost left at 0: prices are the catalog's)."""

    input_, output, cache_read, cache_write = (
        v if type(v := raw.get(name)) is int else 0 for name in _USAGE_FIELDS
    )
    usage: dict[str, Any] = {
        "input": input_,
        "output": output,
        "cacheRead": cache_read,
        "cacheWrite": cache_write,
    }
    detail = raw.get("cache_creation")
    if isinstance(detail, dict) and type(hour := detail.get("ephemeral_1h_input_tokens")) is int:
        usage["cacheWrite1h"] = hour
    usage["totalTokens"] = input_ + output + cache_read + cache_write
    usage["cost"] = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
    return usage


def _text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _image_block(block: Mapping[str, Any]) -> dict[str, Any]:
    source = block.get("source")
    if isinstance(source, dict) and source.get("type") == "base64":
        return {
            "type": "image",
            "data": str(source.get("data", "")),
            "mimeType": str(source.get("media_type", "")),
        }
    return _text_block("[image not embedded in the transcript]")


def _result_content(content: object) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [_text_block(content)]
    if not isinstance(content, list):
        return []
    out: list[dict[str, Any]] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            out.append(_text_block(str(block.get("text", ""))))
        elif kind == "image":
            out.append(_image_block(block))
        elif kind == "tool_reference":
            out.append(_text_block(f"[tool loaded: {block.get('tool_name', '?')}]"))
        else:
            out.append(_text_block(orjson.dumps(block).decode()))
    return out


def assistant_blocks(content: object) -> list[dict[str, Any]]:
    """Anthropic content blocks as pi-ai blocks (text, thinking, toolCall)."""
    if isinstance(content, str):
        return [_text_block(content)] if content else []
    out: list[dict[str, Any]] = []
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            out.append(_text_block(str(block.get("text", ""))))
        elif kind == "thinking":
            thinking: dict[str, Any] = {"type": "thinking", "thinking": str(block.get("thinking", ""))}
            if block.get("signature"):
                thinking["thinkingSignature"] = block["signature"]
            out.append(thinking)
        elif kind == "redacted_thinking":
            out.append(
                {
                    "type": "thinking",
                    "thinking": "",
                    "thinkingSignature": str(block.get("data", "")),
                    "redacted": True,
                }
            )
        elif kind == "tool_use":
            arguments = block.get("input")
            out.append(
                {
                    "type": "toolCall",
                    "id": str(block.get("id", "")),
                    "name": str(block.get("name", "")),
                    "arguments": arguments if isinstance(arguments, dict) else {},
                }
            )
        else:
            # Server-side tools (web search and the like) ran at the provider; the reply keeps
            # them as opaque blocks that a different route could not replay.
            out.append(_text_block(f"[{kind}: {orjson.dumps(block).decode()[:200]}]"))
    return out


@dataclass
class _UserParts:
    results: list[dict[str, Any]] = field(default_factory=list)
    message: dict[str, Any] | None = None
    reminders: list[str] = field(default_factory=list)
    #: True when the user content is nothing but reminders.
    only_reminders: bool = False


@dataclass(frozen=True, slots=True)
class UserShape:
    """What a user entry becomes, without converting it: the timeline's cheap first pass."""

    results: int
    has_message: bool
    reminders: list[str]
    only_reminders: bool


def user_shape(entry: Mapping[str, Any]) -> UserShape:
    """The shape ``user_parts`` will produce (same rules; a test holds them together)."""
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        found, rest = reminders(content)
        return UserShape(0, True, found, bool(found) and not rest.strip())
    results = 0
    blocks = 0
    visible = False
    found_all: list[str] = []
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "tool_result":
            results += 1
            continue
        blocks += 1
        if kind == "text":
            found, rest = reminders(str(block.get("text", "")))
            found_all.extend(found)
            visible = visible or bool(rest.strip())
        else:
            visible = True
    return UserShape(results, blocks > 0, found_all, blocks > 0 and bool(found_all) and not visible)


def user_parts(entry: Mapping[str, Any], tool_names: Mapping[str, str]) -> _UserParts:
    """A user entry as pi-ai messages: its tool results, then its own message (if any)."""
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    ts = iso_ms(entry.get("timestamp")) or 0
    parts = _UserParts()
    if isinstance(content, str):
        parts.reminders, rest = reminders(content)
        parts.only_reminders = bool(parts.reminders) and not rest.strip()
        parts.message = {"role": "user", "content": content, "timestamp": ts}
        return parts
    blocks: list[dict[str, Any]] = []
    visible_text = False
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "tool_result":
            call_id = str(block.get("tool_use_id", ""))
            parts.results.append(
                {
                    "role": "toolResult",
                    "toolCallId": call_id,
                    "toolName": tool_names.get(call_id, "unknown"),
                    "content": _result_content(block.get("content")),
                    "isError": bool(block.get("is_error")),
                    "timestamp": ts,
                }
            )
        elif kind == "text":
            text = str(block.get("text", ""))
            found, rest = reminders(text)
            parts.reminders.extend(found)
            visible_text = visible_text or bool(rest.strip())
            blocks.append(_text_block(text))
        elif kind == "image":
            visible_text = True
            blocks.append(_image_block(block))
        else:
            visible_text = True
            blocks.append(_text_block(orjson.dumps(block).decode()))
    if blocks:
        parts.message = {"role": "user", "content": blocks, "timestamp": ts}
        parts.only_reminders = bool(parts.reminders) and not visible_text
    return parts


def reply_message(entries: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One reply from its streamed entries (one content block each, sharing ``message.id``).

    The blocks are concatenated; model, id and time are the first entry's; usage and stop
    reason the last's (each entry carries the figures so far, the last one the final ones).
    """
    first = cast(Mapping[str, Any], entries[0].get("message") or {})
    last = cast(Mapping[str, Any], entries[-1].get("message") or {})
    blocks = assistant_blocks(first.get("content"))
    for entry in entries[1:]:
        raw = entry.get("message")
        if isinstance(raw, dict):
            blocks.extend(assistant_blocks(raw.get("content")))
    usage = next(
        (u for e in reversed(entries) if isinstance(u := (e.get("message") or {}).get("usage"), dict)), {}
    )
    message = {
        "role": "assistant",
        "content": blocks,
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": str(first.get("model", "unknown")),
        "usage": claude_usage(usage),
        "stopReason": _stop_reason(last.get("stop_reason"), blocks),
        "timestamp": iso_ms(entries[0].get("timestamp")) or 0,
    }
    if isinstance(first.get("id"), str):
        message["responseId"] = first["id"]
    # Claude Code's own cause of a cache miss, shown beside the prediction (design P10).
    reasons = [
        d.get("cache_miss_reason")
        for e in entries
        if isinstance(d := (e.get("message") or {}).get("diagnostics"), dict)
    ]
    if any(isinstance(r, str) for r in reasons):
        message["diagnostics"] = [{"cacheMissReason": next(r for r in reasons if isinstance(r, str))}]
    return message


def _stop_reason(raw: object, blocks: Sequence[Mapping[str, Any]]) -> str:
    if isinstance(raw, str) and raw in _STOP_REASONS:
        return _STOP_REASONS[raw]
    return "toolUse" if any(b.get("type") == "toolCall" for b in blocks) else "stop"


def _insert_agent(
    read: JsonLines, entries: list[Entry], lines: list[int], diagnostics: list[Diagnostic]
) -> None:
    """A sub-agent file's entries, as sidechain entries, before the result naming the agent."""
    diagnostics.extend(read.diagnostics)
    chain: list[Entry] = []
    chain_lines: list[int] = []
    for obj, line in zip(read.objects, read.lines, strict=True):
        if isinstance(obj.get("uuid"), str) and obj["uuid"]:
            entry = _checked(obj, read.path, line, diagnostics)
            chain.append(entry if entry.get("isSidechain") is True else {**entry, "isSidechain": True})
            chain_lines.append(line)
    if not chain:
        return
    agent = next((e["agentId"] for e in chain if isinstance(e.get("agentId"), str)), None)
    agent = agent or read.path.stem.removeprefix("agent-")
    at = len(entries)
    for position, entry in enumerate(entries):
        result = entry.get("toolUseResult")
        if isinstance(result, dict) and result.get("agentId") == agent and not entry.get("isSidechain"):
            at = position
            break
    entries[at:at] = chain
    lines[at:at] = chain_lines


def _checked(obj: dict[str, Any], path: Path, line: int, diagnostics: list[Diagnostic]) -> dict[str, Any]:
    """The entry, or, when a field it is read by has the wrong type, the entry set aside where it
    is read (design T9) with its line and field reported: its children keep their place."""
    shape = claude_entry_problem(obj)
    if shape is None:
        return obj
    message = f"entry {obj['uuid']} cannot be used: {shape.message}; set aside"
    diagnostics.append(Diagnostic(path, line, "error", "bad-entry", message, shape.field))
    return set_aside(obj, _LINK_KEYS)


def _results_only(entry: Mapping[str, Any]) -> bool:
    """A user entry carrying tool results and no words the user typed."""
    shape = user_shape(entry)
    typed = shape.has_message and not shape.only_reminders and not entry.get("isMeta")
    return shape.results > 0 and not typed


def _is_api_error(entry: Mapping[str, Any]) -> bool:
    message = entry.get("message")
    return bool(entry.get("isApiErrorMessage")) or (
        isinstance(message, dict) and message.get("model") == "<synthetic>"
    )


def _reply_id(entry: Mapping[str, Any]) -> str | None:
    message = entry.get("message")
    value = message.get("id") if isinstance(message, dict) else None
    return value if isinstance(value, str) and value else None


@dataclass(eq=False)
class ClaudeSession(ForeignSession):
    ID_KEY = "uuid"
    PARENT_KEYS = ("parentUuid", "logicalParentUuid")
    #: Lines without a ``uuid``: summaries, titles, file-history snapshots, queue operations.
    metadata: list[dict[str, Any]] = field(default_factory=list)
    #: The line of each metadata object.
    metadata_lines: list[int] = field(default_factory=list)
    # Caches: the file is only read, so none of them goes stale.
    _plans: dict[str | None, list[_Spec]] = field(default_factory=dict, repr=False)
    _replies: dict[int, dict[str, Any]] = field(default_factory=dict, repr=False)
    _user: dict[int, _UserParts] = field(default_factory=dict, repr=False)
    _names: dict[str, str] | None = field(default=None, repr=False)
    #: Leaves shown on their parent's chain instead of as branches (see ``_repair``).
    joined: set[int] = field(default_factory=set, repr=False)
    _joined_under: dict[int, list[int]] = field(default_factory=dict, repr=False)
    _turns: dict[str, list[int]] = field(default_factory=dict, repr=False)
    _turn_of: dict[int, str] = field(default_factory=dict, repr=False)

    @classmethod
    def from_lines(cls, read: JsonLines, agents: Sequence[JsonLines] = ()) -> ClaudeSession:
        """The session from its main file and, from Claude Code 2.x on, its sub-agents' files
        (each agent's chain is placed before the Task result that names its ``agentId``, or at
        the end, as the sidechain lane it was in older files)."""
        entries: list[Entry] = []
        lines: list[int] = []
        metadata: list[dict[str, Any]] = []
        metadata_lines: list[int] = []
        diagnostics = list(read.diagnostics)
        session_id = cwd = version = None
        for obj, line in zip(read.objects, read.lines, strict=True):
            if session_id is None and isinstance(obj.get("sessionId"), str):
                session_id = obj["sessionId"]
            if cwd is None and isinstance(obj.get("cwd"), str):
                cwd = obj["cwd"]
            if isinstance(obj.get("uuid"), str) and obj["uuid"]:
                entries.append(_checked(obj, read.path, line, diagnostics))
                lines.append(line)
            else:
                metadata.append(obj)
                metadata_lines.append(line)
        for agent in agents:
            _insert_agent(agent, entries, lines, diagnostics)
        version = next((e["version"] for e in reversed(entries) if isinstance(e.get("version"), str)), None)
        if not any(e.get("type") in CONVERSATION_TYPES for e in entries):
            unusable = len(read.diagnostics)
            diagnostics.append(
                Diagnostic(
                    read.path,
                    read.lines[0] if read.lines else 1,
                    "warning",
                    "no-entries",
                    "no conversation entry could be read (no user, assistant, system or attachment "
                    f"line with a 'uuid'; {unusable} line(s) set aside, {len(metadata)} metadata line(s))",
                )
            )
        session = cls(
            format="claude-code",
            path=read.path,
            entries=entries,
            lines=lines,
            diagnostics=diagnostics,
            session_id=session_id or read.path.stem,
            cwd=cwd,
            version=version,
            metadata=metadata,
            metadata_lines=metadata_lines,
        )
        session._link()
        session._repair()
        return session

    # --- tree ----------------------------------------------------------------------------------
    #
    # The links as written are not the chain Claude Code sent: ``_repair`` rebuilds it once on
    # open (see the module docstring) and the walks below follow the repaired links.

    def _repair(self) -> None:
        """File-order links for roots that continue the main chain, then each turn's entries
        gathered, then stray leaves joined to the chain they hang from."""
        entries, parents = self.entries, self.parents
        counting: list[bool] = []
        count = counting.append
        last_main = -1
        for position, entry in enumerate(entries):
            counts = entry.get("type") in CONVERSATION_TYPES
            count(counts)
            if not counts or entry.get("isSidechain"):
                continue
            if parents[position] < 0 and last_main >= 0:
                # A root after the first (a compaction whose logical parent is not in this file,
                # or a file whose entries all have ``parentUuid: null``) continues the chain.
                parents[position] = last_main
            last_main = position
        continued = self.continued(counting)
        if sum(1 for p, c in enumerate(counting) if c and not continued[p]) < 2:
            return  # one leaf: the chain holds every entry, nothing sits off it
        children: list[list[int]] = [[] for _ in entries]
        for position, parent in enumerate(parents):
            if parent >= 0 and counting[position]:
                children[parent].append(position)
        self._gather_turns(counting, children, continued)
        joined: dict[int, list[int]] = {}
        for position, entry in enumerate(entries):
            parent = parents[position]
            if parent < 0 or not counting[position] or continued[position] or position in self.joined:
                continue
            kind = entry.get("type")
            note = kind == "attachment" or (kind == "system" and entry.get("subtype") != "compact_boundary")
            # A harness note left as a leaf beside a chain that goes on is part of that chain.
            if note and any(continued[c] for c in children[parent] if c != position):
                joined.setdefault(parent, []).append(position)
                self.joined.add(position)
        self._joined_under = joined

    def _gather_turns(self, counting: list[bool], children: list[list[int]], continued: bytearray) -> None:
        """One model call's entries and its tool results, wherever their links put them.

        Claude Code writes a reply as one entry per content block (sharing ``message.id``) and
        gives each tool result its own tool_use entry as parent, while the next reply continues
        from the last result written: with parallel calls every other result (and, when results
        finish out of order, the later tool_use entries) sits off the chain. Claude Code sent
        them all; a turn's entries off the chain are shown with it, and its stray leaves are no
        branch. A turn that nothing continues keeps its last-written leaf as the branch's end.
        """
        entries, parents = self.entries, self.parents
        turns: dict[str, list[int]] = {}
        turn_of: dict[int, str] = {}
        for position, entry in enumerate(entries):
            kind = entry.get("type")
            key: str | None = None
            if kind == "assistant" and not _is_api_error(entry):
                key = _reply_id(entry) or f"uuid:{entry.get('uuid')}"
            elif kind == "user" and _results_only(entry):
                parent, passed = parents[position], set()
                while parent >= 0 and not counting[parent] and parent not in passed:  # may loop
                    passed.add(parent)
                    parent = parents[parent]
                key = turn_of.get(parent) if parent >= 0 else None
            if key is not None:
                turns.setdefault(key, []).append(position)
                turn_of[position] = key
        for key, members in turns.items():
            if len(members) < 2:
                continue
            inside = set(members)
            goes_on = any(
                continued[c] or c not in inside for m in members for c in children[m] if counting[c]
            )
            leaves = [m for m in members if not continued[m]]
            stray = leaves if goes_on else leaves[:-1]
            if stray:  # only a turn with entries off the chain needs gathering
                self.joined.update(stray)
                self._turns[key] = members
        self._turn_of = {p: key for p, key in turn_of.items() if key in self._turns}

    def path_positions(self, leaf: str | None = None) -> list[int]:
        """The chain root first, with each turn's entries that sit off it and each joined note
        right after the entry it hangs from."""
        base = super().path_positions(leaf)
        joined, turn_of = self._joined_under, self._turn_of
        if not joined and not turn_of:
            return base
        on = set(base)
        out: list[int] = []
        for position in base:
            out.append(position)
            key = turn_of.get(position)
            if key is not None:
                for extra in self._turns[key]:
                    if extra not in on:
                        on.add(extra)
                        out.append(extra)
            for extra in joined.get(position, ()):
                if extra not in on:
                    on.add(extra)
                    out.append(extra)
        return out

    def leaf_positions(self) -> list[int]:
        return [p for p in super().leaf_positions() if p not in self.joined]

    def entry_id(self, entry: Entry) -> str | None:
        value = entry.get("uuid")
        return value if isinstance(value, str) else None

    def counts(self, position: int) -> bool:
        """Bookkeeping entries (``progress``) never end a branch: their parent does."""
        return self.entries[position].get("type") in CONVERSATION_TYPES

    @property
    def default_leaf(self) -> str | None:
        for position in range(len(self.entries) - 1, -1, -1):
            entry = self.entries[position]
            if self.counts(position) and not entry.get("isSidechain") and position not in self.joined:
                return self.entry_id(entry)
        return self.entry_id(self.entries[-1]) if self.entries else None

    def is_sidechain(self, position: int) -> bool:
        return bool(self.entries[position].get("isSidechain"))

    def _summaries(self) -> dict[str, str]:
        return {
            str(m["leafUuid"]): str(m.get("summary", ""))
            for m in self.metadata
            if m.get("type") == "summary" and isinstance(m.get("leafUuid"), str)
        }

    @property
    def title(self) -> str:
        for meta in reversed(self.metadata):
            for key in ("customTitle", "aiTitle"):
                if isinstance(meta.get(key), str) and meta[key].strip():
                    return str(meta[key]).strip()
        summaries = self._summaries()
        leaf = self.default_leaf
        if leaf in summaries:
            return summaries[leaf]
        if summaries:
            return next(iter(summaries.values()))
        if not self.entries:
            return "(no messages)"
        return self.branch_title(self.ancestors(self.leaf_position(None)))

    def branch_title(self, leaf_first: Iterable[int]) -> str:
        """The summary Claude Code wrote for this leaf, else the last user text on the branch."""
        positions = iter(leaf_first)
        first = next(positions, None)
        if first is None:
            return "(no user message)"
        summary = self._summaries().get(str(self.entry_id(self.entries[first])))
        if summary:
            return summary
        for position in itertools.chain((first,), positions):
            entry = self.entries[position]
            if entry.get("type") != "user" or entry.get("isMeta") or entry.get("isCompactSummary"):
                continue
            parts = user_parts(entry, {})
            if parts.message is None or parts.only_reminders or parts.results:
                continue
            text = content_preview(parts.message["content"])
            text = reminders(text)[1]
            if text.strip():
                return " ".join(text.split())[:120]
        return "(no user message)"

    def _from_boundary(self, path: list[int]) -> list[int]:
        entries = self.entries
        for index in range(len(path) - 1, -1, -1):
            entry = entries[path[index]]
            if entry.get("type") == "system" and entry.get("subtype") == "compact_boundary":
                return path[index:]
        return path

    # --- views ---------------------------------------------------------------------------------
    #
    # The timeline is planned in one cheap pass (row kinds, which streamed entries form one
    # reply, what reaches the model); messages are converted when a row, the context or the
    # request sequence first needs them, and kept, so every view shares the same dicts.

    def _plan(self, leaf: str | None) -> list[_Spec]:
        cached = self._plans.get(leaf)
        if cached is not None:
            return cached
        with paused_gc():
            plan = self._plan_rows(leaf)
        self._plans[leaf] = plan
        return plan

    def _plan_rows(self, leaf: str | None) -> list[_Spec]:
        entries = self.entries
        path = self.path_positions(leaf)
        context = set(self._from_boundary(path))
        specs: list[_Spec] = []
        append = specs.append
        replies: dict[str, list[int]] = {}
        lines = self.lines
        # A summary names the leaf it sums up: it follows that entry on the branches that hold
        # it; one naming a leaf outside the file (the conversation this one resumed) sits where
        # the file has it.
        summaries: list[tuple[int, int]] = []
        after: dict[int, list[int]] = {}
        lane = bool(entries) and self.is_sidechain(self.leaf_position(leaf))
        for index, (meta, line) in enumerate(zip(self.metadata, self.metadata_lines, strict=True)):
            if meta.get("type") != "summary" or lane:
                continue
            named_leaf = meta.get("leafUuid")
            named = self.index.get(named_leaf) if isinstance(named_leaf, str) else None
            if named is None:
                summaries.append((line, index))
            else:
                after.setdefault(named, []).append(index)
        summaries.reverse()
        pending: list[int] = []  # summaries of the previous entry, shown after its rows
        for position in path:
            for index in pending:
                append(self._summary_spec(index))
            pending = after.get(position, [])
            while summaries and summaries[-1][0] < lines[position]:
                append(self._summary_spec(summaries.pop()[1]))
            entry = entries[position]
            kind = entry.get("type")
            uuid = str(entry.get("uuid"))
            live = position in context
            side = bool(entry.get("isSidechain"))
            if kind == "assistant":
                api_error = _is_api_error(entry)
                reply = _reply_id(entry)
                group = replies.get(reply) if reply is not None and not api_error else None
                if group is not None:
                    group.append(position)
                    continue
                raw = entry.get("message")
                refused = isinstance(raw, dict) and _STOP_REASONS.get(str(raw.get("stop_reason"))) == "error"
                group = [position]
                if reply is not None and not api_error and not refused:
                    replies[reply] = group
                row_kind = k.ERROR if api_error or refused else k.ASSISTANT
                append(_Spec(uuid, row_kind, position, live and not api_error, side, _REPLY, group))
            elif kind == "user":
                shape = user_shape(entry)
                for n in range(shape.results):
                    append(_Spec(uuid if n == 0 else f"{uuid}#{n}", k.TOOL, position, live, side, n))
                extra = 0
                if shape.has_message:
                    if entry.get("isCompactSummary"):
                        row_kind = k.COMPACTION_SUMMARY
                    elif entry.get("isMeta"):
                        row_kind = k.META
                    elif shape.only_reminders:
                        row_kind, extra = k.REMINDER, 1
                    else:
                        row_kind = k.USER
                    append(
                        _Spec(
                            uuid if not shape.results else f"{uuid}#u", row_kind, position, live, side, _OWN
                        )
                    )
                    replies.clear()  # a new user turn: no later entry continues an older reply
                for n in range(extra, len(shape.reminders)):
                    append(_Spec(f"{uuid}#r{n}", k.REMINDER, position, live, side, _REMINDER0 - n))
            elif kind == "system":
                row_kind = k.COMPACTION if entry.get("subtype") == "compact_boundary" else k.NOTE
                append(_Spec(uuid, row_kind, position, False, side, _NONE))
            elif kind == "attachment":
                append(_Spec(uuid, k.ATTACHMENT, position, False, side, _NONE))
            else:
                append(_Spec(uuid, k.OTHER, position, False, side, _NONE))
        for index in pending + [index for _line, index in reversed(summaries)]:
            append(self._summary_spec(index))
        return specs

    def _summary_spec(self, index: int) -> _Spec:
        return _Spec(f"summary@{self.metadata_lines[index]}", k.SESSION_INFO, index, False, False, _META)

    def _tool_names(self) -> dict[str, str]:
        if self._names is None:
            names: dict[str, str] = {}
            for entry in self.entries:
                message = entry.get("message") if entry.get("type") == "assistant" else None
                content = message.get("content") if isinstance(message, dict) else None
                for block in content if isinstance(content, list) else ():
                    if isinstance(block, dict) and block.get("type") == "tool_use":
                        names[str(block.get("id", ""))] = str(block.get("name", ""))
            self._names = names
        return self._names

    def _parts(self, position: int) -> _UserParts:
        parts = self._user.get(position)
        if parts is None:
            parts = self._user[position] = user_parts(self.entries[position], self._tool_names())
        return parts

    def _message(self, spec: _Spec) -> dict[str, Any] | None:
        if spec.part == _REPLY:
            first = spec.group[0]
            message = self._replies.get(first)
            if message is None:
                entry = self.entries[first]
                message = reply_message([self.entries[p] for p in spec.group])
                if _is_api_error(entry):
                    message["stopReason"] = "error"
                    message["errorMessage"] = content_preview(message["content"]) or "API error"
                self._replies[first] = message
            return message
        if spec.part >= 0:
            return self._parts(spec.position).results[spec.part]
        if spec.part == _OWN:
            return self._parts(spec.position).message
        return None

    def _row(self, spec: _Spec) -> TimelineRow:
        if spec.part == _META:
            return self._summary_row(spec)
        entry = self.entries[spec.position]
        message = self._message(spec)
        text: str | None = None
        if spec.part <= _REMINDER0:
            text = self._parts(spec.position).reminders[_REMINDER0 - spec.part]
        elif spec.kind == k.REMINDER and spec.part == _OWN:
            text = self._parts(spec.position).reminders[0]
        elif spec.part == _OWN and message is not None:
            found, rest = reminders(content_preview(message.get("content")))
            text = rest if found else None
        usage = message.get("usage") if spec.part == _REPLY and message is not None else None
        return TimelineRow(
            spec.id,
            spec.kind,
            self.lines[spec.position],
            entry,
            message,
            usage,
            None,
            spec.in_context,
            spec.sidechain,
            text,
        )

    def _summary_row(self, spec: _Spec) -> TimelineRow:
        meta = self.metadata[spec.position]
        leaf = meta.get("leafUuid")
        where = (
            "this conversation"
            if isinstance(leaf, str) and leaf in self.index
            else "a conversation this file continues"
        )
        said = f"summary Claude Code wrote for {where}: {meta.get('summary', '')}"
        return TimelineRow(spec.id, spec.kind, self.metadata_lines[spec.position], meta, text=said)

    def timeline(self, leaf: str | None = None) -> Timeline:
        """The branch's rows: planned up front, each converted when first asked for."""
        plan = self._plan(leaf)
        return Timeline([spec.kind for spec in plan], lambda index: self._row(plan[index]))

    def context(self, leaf: str | None = None) -> ForeignContext:
        messages: list[Message] = []
        sources: list[str] = []
        with paused_gc():
            for spec in self._plan(leaf):
                if not spec.in_context:
                    continue
                message = self._message(spec)
                if message is not None:
                    messages.append(cast(Message, message))
                    sources.append(str(self.entries[spec.position].get("uuid")))
        return unrecorded_system(messages, sources, [SYSTEM_UNKNOWN])

    def lanes(self, leaf: str | None = None) -> list[str]:
        """The sub-agent chains (``isSidechain``) run from this branch: each chain's last leaf,
        for chains that hang from the branch or were written right after one of its entries
        (older files start every sub-agent chain with ``parentUuid: null``)."""
        if not any(entry.get("isSidechain") for entry in self.entries):
            return []
        on = set(self.path_positions(leaf))
        if self.is_sidechain(self.leaf_position(leaf)):
            return []
        chains: dict[int, int] = {}
        for position in self.leaf_positions():
            if not self.is_sidechain(position):
                continue
            root = list(self.ancestors(position))[-1]
            anchor = self.parents[root] if self.parents[root] >= 0 else root - 1
            passed: set[int] = set()  # parents written by hand may loop: stop at a repeat
            while (
                anchor >= 0
                and anchor not in passed
                and (self.is_sidechain(anchor) or not self.counts(anchor))
            ):
                passed.add(anchor)
                anchor = self.parents[anchor] if self.parents[anchor] >= 0 else anchor - 1
            if anchor in on:
                chains[root] = max(chains.get(root, -1), position)
        return [str(self.entry_id(self.entries[p])) for _root, p in sorted(chains.items())]

    def usage(self, leaf: str | None = None) -> list[UsageRecord]:
        """The branch's model calls, then those of the sub-agents it ran (kind ``sub-agent``)."""
        records = self._usage(leaf, "message")
        for lane in self.lanes(leaf):
            records.extend(self._usage(lane, "sub-agent"))
        return records

    def _usage(self, leaf: str | None, kind: str) -> list[UsageRecord]:
        records = []
        for spec in self._plan(leaf):
            if spec.kind != k.ASSISTANT:
                continue
            message = cast(dict[str, Any], self._message(spec))
            raw = self.entries[spec.group[-1]].get("message")
            raw_usage = raw.get("usage") if isinstance(raw, dict) else None
            records.append(
                UsageRecord(
                    spec.id,
                    iso_ms(self.entries[spec.position].get("timestamp")),
                    "anthropic",
                    str(message.get("model")),
                    cast(Mapping[str, Any], message["usage"]),
                    kind,
                    raw=raw_usage if isinstance(raw_usage, dict) else None,
                )
            )
        return records

    def request_contexts(self, leaf: str | None = None) -> list[tuple[str, Sequence[Message]]]:
        """Each reply's request: the messages before it, back to the last compact boundary."""
        out: list[tuple[str, Sequence[Message]]] = []
        current: list[Message] = []
        for spec in self._plan(leaf):
            if spec.kind == k.COMPACTION:
                current = []
            if spec.part == _REPLY and _is_api_error(self.entries[spec.position]):
                continue
            message = self._message(spec)
            if message is None:
                continue
            if spec.part == _REPLY:
                out.append((spec.id, Prefix(current, len(current))))  # shared (design X8)
            current.append(cast(Message, message))
        return out


#: ``_Spec.part`` values: >= 0 the n-th tool result of a user entry; the others below.
_REPLY = -1  # an assistant reply (one or more streamed entries)
_OWN = -2  # a user entry's own message
_NONE = -3  # a row without a message
_META = -4  # a metadata line (a ``summary``): ``position`` indexes ``metadata``
_REMINDER0 = -10  # -10 - n: the n-th reminder of a user entry, as a row of its own


@dataclass(frozen=True, slots=True)
class _Spec:
    id: str
    kind: str
    position: int
    in_context: bool
    sidechain: bool
    part: int
    #: An assistant reply's entries (the list grows while the plan is made).
    group: list[int] = field(default_factory=list)
