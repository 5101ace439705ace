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
* ``isSidechain`` entries belong to sub-agents and form branches of their own.
* Synthetic assistant entries for API errors (``isApiErrorMessage``) were never model output
  and are not part of the model's context.

The system prompt and tool declarations are not recorded in the file, so a context rebuilt
from it has no system message and says so (``ForeignContext.system_known``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import orjson

from desktop.host.foreign.lines import JsonLines
from desktop.host.journal.reader import Diagnostic
from desktop.pi.types import Message
from desktop.session.foreign import model as k
from desktop.session.foreign.base import Entry, ForeignSession
from desktop.session.foreign.model import ForeignContext, TimelineRow, UsageRecord, content_preview, iso_ms

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
SYSTEM_UNKNOWN = (
    "Claude Code does not record its system prompt or tool declarations in the transcript; "
    "the context has no system message and the next request declares no tools"
)


def reminders(text: str) -> tuple[list[str], str]:
    """The ``<system-reminder>`` texts inside ``text`` and what is left without them."""
    found = [m.group(1) for m in _REMINDER.finditer(text)]
    return found, _REMINDER.sub("", text) if found else text


def claude_usage(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Anthropic usage figures in pi-ai's ``Usage`` shape (cost left at 0: prices are the catalog's)."""

    def count(name: str) -> int:
        value = raw.get(name)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    usage: dict[str, Any] = {
        "input": count("input_tokens"),
        "output": count("output_tokens"),
        "cacheRead": count("cache_read_input_tokens"),
        "cacheWrite": count("cache_creation_input_tokens"),
    }
    detail = raw.get("cache_creation")
    if isinstance(detail, Mapping) and isinstance(detail.get("ephemeral_1h_input_tokens"), int):
        usage["cacheWrite1h"] = detail["ephemeral_1h_input_tokens"]
    usage["totalTokens"] = usage["input"] + usage["output"] + usage["cacheRead"] + usage["cacheWrite"]
    usage["cost"] = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
    return usage


def _text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _image_block(block: Mapping[str, Any]) -> dict[str, Any]:
    source = block.get("source")
    if isinstance(source, Mapping) and source.get("type") == "base64":
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
        if not isinstance(block, Mapping):
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
        if not isinstance(block, Mapping):
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


def user_parts(entry: Mapping[str, Any], tool_names: Mapping[str, str]) -> _UserParts:
    message = entry.get("message")
    content = message.get("content") if isinstance(message, Mapping) else None
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
        if not isinstance(block, Mapping):
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


def _assistant_message(entry: Mapping[str, Any]) -> dict[str, Any]:
    message = cast(Mapping[str, Any], entry.get("message") or {})
    blocks = assistant_blocks(message.get("content"))
    usage = message.get("usage")
    return {
        "role": "assistant",
        "content": blocks,
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": str(message.get("model", "unknown")),
        "usage": claude_usage(usage if isinstance(usage, Mapping) else {}),
        "stopReason": _stop_reason(message.get("stop_reason"), blocks),
        "timestamp": iso_ms(entry.get("timestamp")) or 0,
        **({"responseId": message["id"]} if isinstance(message.get("id"), str) else {}),
    }


def _stop_reason(raw: object, blocks: Sequence[Mapping[str, Any]]) -> str:
    if isinstance(raw, str) and raw in _STOP_REASONS:
        return _STOP_REASONS[raw]
    return "toolUse" if any(b.get("type") == "toolCall" for b in blocks) else "stop"


def _merge(into: dict[str, Any], entry: Mapping[str, Any]) -> None:
    """Add a later streamed entry of the same reply: its blocks, its (final) usage and stop."""
    later = _assistant_message(entry)
    into["content"] = [*into["content"], *later["content"]]
    raw = cast(Mapping[str, Any], entry.get("message") or {})
    if isinstance(raw.get("usage"), Mapping):
        into["usage"] = later["usage"]
    into["stopReason"] = (
        later["stopReason"] if raw.get("stop_reason") else _stop_reason(None, into["content"])
    )


def _is_api_error(entry: Mapping[str, Any]) -> bool:
    message = entry.get("message")
    return bool(entry.get("isApiErrorMessage")) or (
        isinstance(message, Mapping) and message.get("model") == "<synthetic>"
    )


def _reply_id(entry: Mapping[str, Any]) -> str | None:
    message = entry.get("message")
    value = message.get("id") if isinstance(message, Mapping) else None
    return value if isinstance(value, str) and value else None


def convert_chain(entries: Sequence[Mapping[str, Any]]) -> list[tuple[int, Message]]:
    """(index of the source entry, message) for a root-first chain, as the model was given it."""
    out: list[tuple[int, Message]] = []
    tool_names: dict[str, str] = {}
    open_replies: dict[str, dict[str, Any]] = {}
    for index, entry in enumerate(entries):
        kind = entry.get("type")
        if kind == "assistant":
            if _is_api_error(entry):
                continue
            reply = _reply_id(entry)
            if reply is not None and reply in open_replies:
                _merge(open_replies[reply], entry)
                message = open_replies[reply]
            else:
                message = _assistant_message(entry)
                if reply is not None:
                    open_replies[reply] = message
                out.append((index, cast(Message, message)))
            for block in message["content"]:
                if block.get("type") == "toolCall":
                    tool_names[block["id"]] = block["name"]
        elif kind == "user":
            parts = user_parts(entry, tool_names)
            out.extend((index, cast(Message, result)) for result in parts.results)
            if parts.message is not None:
                out.append((index, cast(Message, parts.message)))
                open_replies.clear()
    return out


@dataclass(eq=False)
class ClaudeSession(ForeignSession):
    #: Lines without a ``uuid``: summaries, titles, file-history snapshots, queue operations.
    metadata: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def from_lines(cls, read: JsonLines) -> ClaudeSession:
        entries: list[Entry] = []
        lines: list[int] = []
        metadata: list[dict[str, Any]] = []
        diagnostics = list(read.diagnostics)
        session_id = cwd = version = None
        for obj, line in zip(read.objects, read.lines, strict=True):
            if session_id is None and isinstance(obj.get("sessionId"), str):
                session_id = obj["sessionId"]
            if cwd is None and isinstance(obj.get("cwd"), str):
                cwd = obj["cwd"]
            if isinstance(obj.get("version"), str):
                version = obj["version"]
            if isinstance(obj.get("uuid"), str) and obj["uuid"]:
                entries.append(obj)
                lines.append(line)
                kind = obj.get("type")
                if kind in ("user", "assistant") and not isinstance(obj.get("message"), Mapping):
                    diagnostics.append(
                        Diagnostic(
                            read.path,
                            line,
                            "error",
                            "bad-entry",
                            f"{kind} entry {obj['uuid']} has no 'message' object",
                        )
                    )
            else:
                metadata.append(obj)
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
        )
        session._link()
        return session

    # --- tree ----------------------------------------------------------------------------------

    def entry_id(self, entry: Entry) -> str | None:
        value = entry.get("uuid")
        return value if isinstance(value, str) else None

    def parent_id(self, entry: Entry) -> str | None:
        for key in ("parentUuid", "logicalParentUuid"):
            value = entry.get(key)
            if isinstance(value, str) and value:
                return value
        return None

    @staticmethod
    def entry_ts(entry: Entry) -> int | None:
        return iso_ms(entry.get("timestamp"))

    def _is_conversation(self, position: int) -> bool:
        entry = self.entries[position]
        return entry.get("type") in CONVERSATION_TYPES

    @property
    def default_leaf(self) -> str | None:
        for position in range(len(self.entries) - 1, -1, -1):
            entry = self.entries[position]
            if self._is_conversation(position) and not entry.get("isSidechain"):
                return self.entry_id(entry)
        return self.entry_id(self.entries[-1]) if self.entries else None

    def effective_leaf(self, position: int) -> int:
        seen: set[int] = set()
        current = position
        while current >= 0 and current not in seen and not self._is_conversation(current):
            seen.add(current)
            current = self.parents[current]
        return current if current >= 0 and current not in seen else position

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
        return self.branch_title(self.path_positions()) if self.entries else "(no messages)"

    def branch_title(self, positions: Sequence[int]) -> str:
        summaries = self._summaries()
        for position in reversed(positions):
            uuid = self.entry_id(self.entries[position])
            if uuid in summaries:
                return summaries[uuid]
        for position in reversed(positions):
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

    def _context_positions(self, leaf: str | None) -> list[int]:
        """The model's chain: ``parentUuid`` only, so a compact boundary ends it."""
        position = self.leaf_position(leaf)
        out: list[int] = []
        seen: set[int] = set()
        while position >= 0 and position not in seen:
            seen.add(position)
            out.append(position)
            parent = self.entries[position].get("parentUuid")
            position = self.index.get(parent, -1) if isinstance(parent, str) and parent else -1
        out.reverse()
        return out

    # --- views ---------------------------------------------------------------------------------

    def timeline(self, leaf: str | None = None) -> list[TimelineRow]:
        positions = self.path_positions(leaf)
        context = set(self._context_positions(leaf))
        rows: list[TimelineRow] = []
        tool_names: dict[str, str] = {}
        replies: dict[str, tuple[int, dict[str, Any]]] = {}
        for position in positions:
            entry = self.entries[position]
            kind = entry.get("type")
            uuid = str(entry.get("uuid"))
            line = self.lines[position]
            ts = iso_ms(entry.get("timestamp"))
            sidechain = bool(entry.get("isSidechain"))
            live = position in context
            if kind == "assistant":
                reply = _reply_id(entry)
                if reply is not None and reply in replies and not _is_api_error(entry):
                    row_index, message = replies[reply]
                    _merge(message, entry)
                    rows[row_index] = _replace_row(rows[row_index], message)
                else:
                    message = _assistant_message(entry)
                    error = _is_api_error(entry) or message["stopReason"] == "error"
                    if _is_api_error(entry):
                        message["stopReason"] = "error"
                        message["errorMessage"] = content_preview(message["content"]) or "API error"
                    if reply is not None and not error:
                        replies[reply] = (len(rows), message)
                    rows.append(
                        TimelineRow(
                            uuid,
                            k.ERROR if error else k.ASSISTANT,
                            ts,
                            line,
                            entry,
                            message,
                            message["usage"],
                            in_context=live and not _is_api_error(entry),
                            sidechain=sidechain,
                        )
                    )
                for block in message["content"]:
                    if block.get("type") == "toolCall":
                        tool_names[block["id"]] = block["name"]
            elif kind == "user":
                rows.extend(self._user_rows(entry, uuid, ts, line, live, sidechain, tool_names))
                replies.clear()
            elif kind == "system":
                row_kind = k.COMPACTION if entry.get("subtype") == "compact_boundary" else k.NOTE
                rows.append(TimelineRow(uuid, row_kind, ts, line, entry, sidechain=sidechain))
            elif kind == "attachment":
                rows.append(TimelineRow(uuid, k.ATTACHMENT, ts, line, entry, sidechain=sidechain))
            else:
                rows.append(TimelineRow(uuid, k.OTHER, ts, line, entry, sidechain=sidechain))
        return rows

    @staticmethod
    def _user_rows(
        entry: Entry,
        uuid: str,
        ts: int | None,
        line: int,
        live: bool,
        sidechain: bool,
        tool_names: Mapping[str, str],
    ) -> list[TimelineRow]:
        parts = user_parts(entry, tool_names)
        rows = [
            TimelineRow(
                uuid if n == 0 else f"{uuid}#{n}",
                k.TOOL,
                ts,
                line,
                entry,
                result,
                in_context=live,
                sidechain=sidechain,
            )
            for n, result in enumerate(parts.results)
        ]
        if parts.message is not None:
            if entry.get("isCompactSummary"):
                kind = k.COMPACTION_SUMMARY
            elif entry.get("isMeta"):
                kind = k.META
            elif parts.only_reminders:
                kind = k.REMINDER
            else:
                kind = k.USER
            row_id = uuid if not rows else f"{uuid}#u"
            if kind == k.REMINDER:
                text: str | None = parts.reminders[0]
            elif parts.reminders:
                text = reminders(content_preview(parts.message["content"]))[1]
            else:
                text = None
            rows.append(
                TimelineRow(
                    row_id,
                    kind,
                    ts,
                    line,
                    entry,
                    parts.message,
                    in_context=live,
                    sidechain=sidechain,
                    text=text,
                )
            )
        first_reminder = 1 if rows and rows[-1].kind == k.REMINDER else 0
        for n, reminder in enumerate(parts.reminders[first_reminder:], first_reminder):
            rows.append(
                TimelineRow(
                    f"{uuid}#r{n}",
                    k.REMINDER,
                    ts,
                    line,
                    entry,
                    in_context=live,
                    sidechain=sidechain,
                    text=reminder,
                )
            )
        return rows

    def context(self, leaf: str | None = None) -> ForeignContext:
        positions = self._context_positions(leaf)
        chain = [self.entries[p] for p in positions]
        converted = convert_chain(chain)
        messages = [message for _index, message in converted]
        sources = [str(chain[index].get("uuid")) for index, _message in converted]
        model = next(
            (("anthropic", str(m.get("model"))) for m in reversed(messages) if m["role"] == "assistant"), None
        )
        return ForeignContext(
            messages=messages,
            sources=sources,
            agent_messages=[dict(m) for m in messages],
            model=model,
            thinking_level=None,
            system_known=False,
            notes=[SYSTEM_UNKNOWN],
        )

    def usage(self, leaf: str | None = None) -> list[UsageRecord]:
        records = []
        for row in self.timeline(leaf):
            if row.kind != k.ASSISTANT or row.message is None:
                continue
            raw = row.entry.get("message")
            raw_usage = raw.get("usage") if isinstance(raw, Mapping) else None
            records.append(
                UsageRecord(
                    row.id,
                    row.ts,
                    "anthropic",
                    str(row.message.get("model")),
                    cast(Mapping[str, Any], row.message["usage"]),
                    raw=raw_usage if isinstance(raw_usage, Mapping) else None,
                )
            )
        return records

    def request_contexts(self, leaf: str | None = None) -> list[tuple[str, list[Message]]]:
        out: list[tuple[str, list[Message]]] = []
        seen: set[str] = set()
        for position in self.path_positions(leaf):
            entry = self.entries[position]
            if entry.get("type") != "assistant" or _is_api_error(entry):
                continue
            reply = _reply_id(entry)
            if reply is not None and reply in seen:
                continue
            if reply is not None:
                seen.add(reply)
            parent = entry.get("parentUuid")
            if not isinstance(parent, str) or parent not in self.index:
                out.append((str(entry.get("uuid")), []))
                continue
            chain = [self.entries[p] for p in self._context_positions(parent)]
            out.append((str(entry.get("uuid")), [m for _i, m in convert_chain(chain)]))
        return out


def _replace_row(row: TimelineRow, message: dict[str, Any]) -> TimelineRow:
    return TimelineRow(
        row.id,
        row.kind,
        row.ts,
        row.line,
        row.entry,
        message,
        message["usage"],
        row.label,
        row.in_context,
        row.sidechain,
        row.text,
    )


__all__ = ["ClaudeSession", "assistant_blocks", "claude_usage", "convert_chain", "reminders", "user_parts"]
