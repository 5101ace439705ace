"""Codex CLI sessions, read-only (design X1).

Codex writes ``~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`` (``$CODEX_HOME``
moves it): one ``{"timestamp", "type", "payload"}`` object per line.

* ``session_meta``: the session's id, ``cwd``, ``cli_version``, user ``instructions``.
* ``turn_context``: each turn's model, reasoning effort, ``cwd`` and approval policy.
* ``response_item``: the conversation as the Responses API holds it, in order: ``message``
  (role ``user``, ``developer`` or ``assistant``; ``input_text``/``output_text`` parts),
  ``reasoning`` (summary and encrypted content), ``function_call`` / ``function_call_output``
  (matched by ``call_id``), ``custom_tool_call`` / ``custom_tool_call_output`` (freeform tools
  such as ``apply_patch``), ``local_shell_call``, ``web_search_call``.
* ``event_msg``: what the terminal showed (``user_message``, ``agent_message`` repeat the
  items); ``token_count`` carries ``info.last_token_usage`` (``input_tokens`` with
  ``cached_input_tokens`` inside it, ``output_tokens``, ``reasoning_output_tokens``) after
  each model call.
* ``compacted``: a summary replacing the history before it (with ``replacement_history``, the
  exact new history, when the writing version records it).

Older rollouts start with a bare ``{"id", "timestamp", "instructions"}`` line and hold the
items unwrapped (``{"record_type": "state"}`` lines between them); they are read the same way.

A session is one linear history: every line gets the id ``L<line>``, and a model call is the
run of output items (reasoning, message, calls) between two inputs, with the next
``token_count`` as its usage. The base instructions and tool declarations Codex sends are not
in the file, so the rebuilt context has none (``system_known=False``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import orjson

from desktop.host.foreign.lines import JsonLines
from desktop.host.journal.reader import Diagnostic
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
from desktop.session.prefix import Prefix

SYSTEM_UNKNOWN = (
    "Codex CLI does not record its base instructions or tool declarations in the rollout; the "
    "context has no system prompt and the next request declares no tools"
)
COMPACTION_APPROXIMATE = (
    "this rollout records a compaction's summary but not the history Codex rebuilt around it; "
    "the context after it is the summary and what followed"
)
_OUTPUTS = frozenset(
    {"reasoning", "function_call", "custom_tool_call", "local_shell_call", "web_search_call"}
)
_RESULTS = frozenset({"function_call_output", "custom_tool_call_output", "local_shell_call_output"})
#: Injected context Codex sends as user messages (not typed by the user).
_INJECTED = ("<environment_context>", "<user_instructions>", "# AGENTS.md", "<turn_aborted>")


def _item(entry: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The Responses item a line carries (wrapped or, in older rollouts, bare)."""
    if entry.get("type") == "response_item":
        payload = entry.get("payload")
        return payload if isinstance(payload, dict) else None
    if "payload" not in entry and "record_type" not in entry and isinstance(entry.get("type"), str):
        return entry if entry["type"] in _OUTPUTS | _RESULTS | {"message"} else None
    return None


def _text(parts: object) -> str:
    if isinstance(parts, str):
        return parts
    out = []
    for part in parts if isinstance(parts, list) else ():
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            out.append(part["text"])
    return "\n".join(out)


def _user_content(parts: object) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in parts if isinstance(parts, list) else ():
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind in ("input_text", "output_text", "text") and isinstance(part.get("text"), str):
            blocks.append({"type": "text", "text": part["text"]})
        elif kind == "input_image":
            url = part.get("image_url")
            if isinstance(url, str) and url.startswith("data:") and ";base64," in url:
                head, data = url.split(";base64,", 1)
                blocks.append({"type": "image", "data": data, "mimeType": head.removeprefix("data:")})
            else:
                blocks.append({"type": "text", "text": "[image not embedded in the rollout]"})
    return blocks


def _input_message(item: Mapping[str, Any], ts: int) -> Message:
    """A user, developer or system message item as the message the model was given."""
    if item.get("role") in ("developer", "system"):
        return cast(Message, {"role": "system", "content": _text(item.get("content")), "timestamp": ts})
    return cast(Message, {"role": "user", "content": _user_content(item.get("content")), "timestamp": ts})


def _output_text(raw: object) -> str:
    """A tool output as the model read it: older versions wrap it as ``{"output", "metadata"}``."""
    if isinstance(raw, dict):
        raw = raw.get("content", raw.get("output", orjson.dumps(raw).decode()))
    if not isinstance(raw, str):
        return orjson.dumps(raw).decode() if raw is not None else ""
    if raw.startswith("{") and '"output"' in raw:
        try:
            wrapped = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return raw
        if isinstance(wrapped, dict) and isinstance(wrapped.get("output"), str):
            return str(wrapped["output"])
    return raw


def codex_usage(raw: Mapping[str, Any]) -> dict[str, Any]:
    """OpenAI usage (cached tokens counted inside ``input_tokens``) in pi-ai's ``Usage`` shape."""

    def number(name: str) -> int:
        value = raw.get(name)
        return value if type(value) is int else 0

    cached = number("cached_input_tokens")
    fresh = max(number("input_tokens") - cached, 0)
    output = number("output_tokens")
    return {
        "input": fresh,
        "output": output,
        "cacheRead": cached,
        "cacheWrite": 0,
        "totalTokens": fresh + cached + output,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }


@dataclass(frozen=True, slots=True)
class _Row:
    id: str
    kind: str
    #: Positions of the entries the row is made of (a model call: its output items).
    positions: tuple[int, ...]
    in_context: bool
    text: str | None = None


@dataclass(eq=False)
class CodexSession(ForeignSession):
    ID_KEY = "_"  # lines carry no ids: ``L<line>`` (``entry_id``)
    PARENT_KEYS = ("_",)
    meta: dict[str, Any] | None = None
    _ids: dict[int, str] = field(default_factory=dict, repr=False)
    _rows: list[_Row] | None = field(default=None, repr=False)
    #: The rows with every conversation row in context (``_rows`` drops those a compaction ended).
    _all: list[_Row] = field(default_factory=list, repr=False)
    #: Tool name by call id.
    _names: dict[str, str] = field(default_factory=dict, repr=False)
    _messages: dict[str, list[Message]] = field(default_factory=dict, repr=False)
    _usage: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)
    _models: dict[str, tuple[str, str]] = field(default_factory=dict, repr=False)

    @classmethod
    def from_lines(cls, read: JsonLines) -> CodexSession:
        diagnostics = list(read.diagnostics)
        meta: dict[str, Any] | None = None
        entries: list[Entry] = []
        lines: list[int] = []
        for obj, line in zip(read.objects, read.lines, strict=True):
            kind = obj.get("type")
            if kind == "session_meta" and isinstance(obj.get("payload"), dict):
                meta = meta or obj["payload"]
            elif kind is None and "id" in obj and "timestamp" in obj and meta is None:
                meta = obj  # an older rollout's first line
            if "payload" in obj and not isinstance(obj.get("payload"), dict):
                what = f"field 'payload' is {type(obj['payload']).__name__}, not an object; skipped"
                diagnostics.append(
                    Diagnostic(read.path, line, "error", "bad-entry", f"{kind!r} line: {what}")
                )
                continue
            elif kind == "response_item" and not isinstance((obj.get("payload") or {}).get("type"), str):
                what = "field 'payload.type' is not a string; shown as an unknown entry"
                diagnostics.append(
                    Diagnostic(read.path, line, "warning", "bad-field", f"{kind!r} line: {what}")
                )
            entries.append(obj)
            lines.append(line)
        session_id = meta.get("id") if meta else None
        cwd = meta.get("cwd") if meta else None
        version = meta.get("cli_version") if meta else None
        session = cls(
            format="codex",
            path=read.path,
            entries=entries,
            lines=lines,
            diagnostics=diagnostics,
            session_id=session_id if isinstance(session_id, str) else read.path.stem,
            cwd=cwd if isinstance(cwd, str) else None,
            version=version if isinstance(version, str) else None,
            meta=meta,
        )
        session._link()
        return session

    # --- tree: one linear history ----------------------------------------------------------------

    def _link(self) -> None:
        self._ids = {id(entry): f"L{line}" for entry, line in zip(self.entries, self.lines, strict=True)}
        self.index = {f"L{line}": position for position, line in enumerate(self.lines)}
        self.parents = list(range(-1, len(self.entries) - 1))

    def entry_id(self, entry: Entry) -> str | None:
        return self._ids.get(id(entry))

    @property
    def title(self) -> str:
        for row in self._plan():
            if row.kind == k.USER:
                text = " ".join(_text(self._item_at(row.positions[0]).get("content")).split())
                if text:
                    return text[:120]
        return "(no messages)"

    def branch_title(self, leaf_first: Iterable[int]) -> str:
        return self.title

    def _item_at(self, position: int) -> Mapping[str, Any]:
        return _item(self.entries[position]) or {}

    # --- the plan: rows, model calls, usage, in one pass ---------------------------------------

    def _plan(self) -> list[_Row]:
        if self._rows is not None:
            return self._rows
        rows: list[_Row] = []
        reply: list[int] = []
        last_reply: str | None = None
        model: tuple[str, str] = ("openai", "unknown")
        effort: object = None
        totals: Mapping[str, Any] | None = None
        names = self._names

        def close() -> None:
            nonlocal reply, last_reply
            if reply:
                row_id = f"L{self.lines[reply[0]]}"
                rows.append(_Row(row_id, k.ASSISTANT, tuple(reply), True))
                self._models[row_id] = model
                last_reply = row_id
                reply = []

        for position, entry in enumerate(self.entries):
            line = self.lines[position]
            row_id = f"L{line}"
            kind = entry.get("type")
            raw = entry.get("payload")
            payload: Mapping[str, Any] = raw if isinstance(raw, dict) else {}
            item = _item(entry)
            if item is not None:
                item_type = item.get("type") if isinstance(item.get("type"), str) else None
                role = item.get("role")
                if item_type in _OUTPUTS or (item_type == "message" and role == "assistant"):
                    reply.append(position)
                    if item_type in ("function_call", "custom_tool_call", "local_shell_call"):
                        names[str(item.get("call_id", ""))] = str(item.get("name") or item_type)
                    continue
                close()
                if item_type in _RESULTS:
                    rows.append(_Row(row_id, k.TOOL, (position,), True))
                elif item_type == "message" and role == "user":
                    text = _text(item.get("content")).lstrip()
                    rows.append(
                        _Row(row_id, k.META if text.startswith(_INJECTED) else k.USER, (position,), True)
                    )
                elif item_type == "message" and role in ("developer", "system"):
                    rows.append(_Row(row_id, k.META, (position,), True))
                else:
                    rows.append(_Row(row_id, k.OTHER, (position,), False))
                continue
            if kind == "event_msg" and payload.get("type") == "token_count":
                close()
                info = payload.get("info")
                if isinstance(info, dict) and last_reply is not None and last_reply not in self._usage:
                    last = info.get("last_token_usage")
                    total = info.get("total_token_usage")
                    if isinstance(last, dict):
                        self._usage[last_reply] = last
                    elif isinstance(total, dict):
                        previous = totals or {}
                        self._usage[last_reply] = {
                            key: (value - previous.get(key, 0)) if type(value) is int else 0
                            for key, value in total.items()
                        }
                    if isinstance(total, dict):
                        totals = total
                continue
            if kind == "turn_context":
                close()
                name, level = payload.get("model"), payload.get("effort")
                if isinstance(name, str) and ((self._provider(), name) != model or level != effort):
                    model, effort = (self._provider(), name), level
                    said = f"model: {model[0]}/{name}" + (f", reasoning effort {level}" if level else "")
                    rows.append(_Row(row_id, k.MODEL_CHANGE, (position,), False, said))
                continue
            if kind == "compacted":
                close()
                rows.append(_Row(row_id, k.COMPACTION, (position,), False))
                rows.append(_Row(row_id + "#s", k.COMPACTION_SUMMARY, (position,), True))
                continue
            if kind == "session_meta" or (kind is None and entry is self.meta):
                rows.append(_Row(row_id, k.SESSION_INFO, (position,), False, self._meta_text()))
                continue
            if kind == "event_msg" or kind is None:
                continue  # what the terminal showed (the items repeat it), older state lines
            close()
            rows.append(_Row(row_id, k.OTHER, (position,), False))
        close()
        self._all = rows
        self._rows = _after_compaction(rows)
        return self._rows

    def _meta_text(self) -> str:
        meta = self.meta or {}
        version = meta.get("cli_version")
        origin = meta.get("originator")
        said = "Codex CLI session" + (f" ({origin} {version})" if version else "")
        return said + (f" in {self.cwd}" if self.cwd else "")

    def _provider(self) -> str:
        provider = (self.meta or {}).get("model_provider")
        return provider if isinstance(provider, str) and provider else "openai"

    # --- messages ---------------------------------------------------------------------------------

    def _message(self, row: _Row) -> list[Message]:
        cached = self._messages.get(row.id)
        if cached is not None:
            return cached
        out: list[Message] = []
        if row.kind == k.ASSISTANT:
            out = [self._reply(row)]
        elif row.kind == k.TOOL:
            item = self._item_at(row.positions[0])
            call = str(item.get("call_id", ""))
            out = [
                cast(
                    Message,
                    {
                        "role": "toolResult",
                        "toolCallId": call,
                        "toolName": self._names.get(call, "unknown"),
                        "content": [{"type": "text", "text": _output_text(item.get("output"))}],
                        "isError": _failed(item.get("output")),
                        "timestamp": self._ts(row),
                    },
                )
            ]
        elif row.kind in (k.USER, k.META):
            out = [_input_message(self._item_at(row.positions[0]), self._ts(row))]
        elif row.kind == k.COMPACTION_SUMMARY:
            payload = self.entries[row.positions[0]].get("payload") or {}
            history = payload.get("replacement_history") if isinstance(payload, dict) else None
            if isinstance(history, list):
                out = self._history(history, self._ts(row))
            else:
                text = payload.get("message") if isinstance(payload, dict) else None
                out = [
                    cast(Message, {"role": "user", "content": str(text or ""), "timestamp": self._ts(row)})
                ]
        self._messages[row.id] = out
        return out

    def _history(self, items: Sequence[Any], ts: int) -> list[Message]:
        """A ``replacement_history``: the items the model was given after the compaction."""
        out: list[Message] = []
        for item in items:
            if not isinstance(item, dict) or item.get("type") != "message":
                continue
            if item.get("role") == "assistant":
                out.append(cast(Message, self._assistant([item], ("openai", "unknown"), ts, None)))
            else:
                out.append(_input_message(item, ts))
        return out

    def _ts(self, row: _Row) -> int:
        return iso_ms(self.entries[row.positions[0]].get("timestamp")) or 0

    def _reply(self, row: _Row) -> Message:
        items = [self._item_at(p) for p in row.positions]
        usage = self._usage.get(row.id)
        return cast(
            Message,
            self._assistant(items, self._models.get(row.id, ("openai", "unknown")), self._ts(row), usage),
        )

    @staticmethod
    def _assistant(
        items: Sequence[Mapping[str, Any]], model: tuple[str, str], ts: int, usage: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        blocks: list[dict[str, Any]] = []
        for item in items:
            kind = item.get("type")
            if kind == "reasoning":
                summary = _text(item.get("summary"))
                blocks.append(
                    {
                        "type": "thinking",
                        "thinking": summary,
                        "thinkingSignature": orjson.dumps(item).decode(),
                    }
                )
            elif kind == "message":
                text = _text(item.get("content"))
                if text:
                    blocks.append({"type": "text", "text": text})
            elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
                arguments: object = item.get("arguments")
                if kind == "custom_tool_call":
                    arguments = {"input": item.get("input", "")}
                elif kind == "local_shell_call":
                    arguments = item.get("action") if isinstance(item.get("action"), dict) else {}
                elif isinstance(arguments, str):
                    try:
                        arguments = orjson.loads(arguments)
                    except orjson.JSONDecodeError:
                        arguments = {"arguments": arguments}
                blocks.append(
                    {
                        "type": "toolCall",
                        "id": str(item.get("call_id", "")),
                        "name": "local_shell" if kind == "local_shell_call" else str(item.get("name", "")),
                        "arguments": arguments if isinstance(arguments, dict) else {"arguments": arguments},
                    }
                )
            else:  # web search ran at the provider: kept visible, not replayable elsewhere
                blocks.append({"type": "text", "text": f"[{kind}: {orjson.dumps(item).decode()[:200]}]"})
        calls = any(b["type"] == "toolCall" for b in blocks)
        return {
            "role": "assistant",
            "content": blocks,
            "api": "openai-responses",
            "provider": model[0],
            "model": model[1],
            "usage": codex_usage(usage or {}),
            "stopReason": "toolUse" if calls else "stop",
            "timestamp": ts,
        }

    # --- views ------------------------------------------------------------------------------------

    def timeline(self, leaf: str | None = None) -> Timeline:
        rows = self._rows_upto(leaf)

        def build(index: int) -> TimelineRow:
            row = rows[index]
            messages = self._message(row)
            message = messages[0] if len(messages) == 1 else None
            position = row.positions[0]
            usage = message.get("usage") if message is not None and row.kind == k.ASSISTANT else None
            return TimelineRow(
                row.id,
                row.kind,
                self.lines[position],
                self.entries[position],
                message,
                cast(Mapping[str, Any] | None, usage),
                None,
                row.in_context,
                False,
                row.text if row.text is not None else self._summary_text(row),
            )

        return Timeline([row.kind for row in rows], build)

    def _summary_text(self, row: _Row) -> str | None:
        if row.kind == k.COMPACTION:
            payload = self.entries[row.positions[0]].get("payload") or {}
            text = payload.get("message") if isinstance(payload, dict) else None
            return f"compacted: {text}" if isinstance(text, str) else "compacted"
        if row.kind == k.OTHER:
            entry = self.entries[row.positions[0]]
            item = _item(entry)
            what = item.get("type") if item else entry.get("type")
            return f"Codex {what!r} entry (kept as it is; not sent to the model)"
        return None

    def _rows_upto(self, leaf: str | None) -> list[_Row]:
        """The rows up to ``leaf`` (default: the whole session), in-context marks for that leaf."""
        plan = self._plan()
        if leaf is None or leaf == self.default_leaf:
            return plan
        end = self.leaf_position(leaf)
        return _after_compaction([r for r in self._all if r.positions[0] <= end])

    def context(self, leaf: str | None = None) -> ForeignContext:
        messages: list[Message] = []
        sources: list[str] = []
        for row in self._rows_upto(leaf):
            if row.in_context:
                for message in self._message(row):
                    messages.append(message)
                    sources.append(row.id)
        notes = [SYSTEM_UNKNOWN]
        if any(self._approximate(row) for row in self._rows_upto(leaf) if row.kind == k.COMPACTION_SUMMARY):
            notes.append(COMPACTION_APPROXIMATE)
        return unrecorded_system(messages, sources, notes)

    def _approximate(self, row: _Row) -> bool:
        payload = self.entries[row.positions[0]].get("payload")
        return not (isinstance(payload, dict) and isinstance(payload.get("replacement_history"), list))

    def usage(self, leaf: str | None = None) -> list[UsageRecord]:
        records = []
        for row in self._rows_upto(leaf):
            if row.kind != k.ASSISTANT:
                continue
            message = self._message(row)[0]
            records.append(
                UsageRecord(
                    row.id,
                    iso_ms(self.entries[row.positions[0]].get("timestamp")),
                    str(message.get("provider")),
                    str(message.get("model")),
                    cast(Mapping[str, Any], message.get("usage")),
                    raw=self._usage.get(row.id),
                )
            )
        return records

    def request_contexts(self, leaf: str | None = None) -> list[tuple[str, Sequence[Message]]]:
        out: list[tuple[str, Sequence[Message]]] = []
        current: list[Message] = []
        for row in self._rows_upto(leaf):
            if row.kind == k.COMPACTION:
                current = []
                continue
            if row.kind == k.ASSISTANT:
                out.append((row.id, Prefix(current, len(current))))  # shared (design X8)
            if row.kind in (k.ASSISTANT, k.TOOL, k.USER, k.META, k.COMPACTION_SUMMARY):
                current.extend(self._message(row))
        return out


def _after_compaction(rows: list[_Row]) -> list[_Row]:
    """The rows with the in-context mark cleared before the last compaction (the model's view
    restarted there; the rows stay visible)."""
    start = max((i for i, r in enumerate(rows) if r.kind == k.COMPACTION), default=-1) + 1
    if start == 0:
        return rows
    return [
        r if i >= start or not r.in_context else _Row(r.id, r.kind, r.positions, False, r.text)
        for i, r in enumerate(rows)
    ]


def _failed(output: object) -> bool:
    if isinstance(output, str) and output.startswith("{") and '"exit_code"' in output:
        try:
            wrapped = orjson.loads(output)
        except orjson.JSONDecodeError:
            return False
        metadata = wrapped.get("metadata") if isinstance(wrapped, dict) else None
        code = metadata.get("exit_code") if isinstance(metadata, dict) else None
        return type(code) is int and code != 0
    return False
