"""pi-coding-agent's context rebuilding, as pure functions over session entries (design X1).

A line-for-line port of pi-coding-agent 1.0.3 ``core/session-manager.ts`` (``buildSessionPath``,
``buildContextEntries``, ``buildSessionProjection``, ``sessionEntryToContextMessages``) and
``core/messages.ts`` (``convertToLlm``, ``bashExecutionToText``), and of its in-memory
migrations v1 → v2 → v3. ``tests/foreign/test_pi_oracle.py`` compares the result with what pi
itself builds from the same files (``scripts/oracle-agent``). Keys a JS object would leave
``undefined`` are left out here too, so both sides serialize to the same JSON.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from desktop.pi.types import Message
from desktop.session.foreign.model import iso_ms

Entry = dict[str, Any]

COMPACTION_SUMMARY_PREFIX = (
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX = "\n</summary>"
BRANCH_SUMMARY_PREFIX = (
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
)
BRANCH_SUMMARY_SUFFIX = "</summary>"
CURRENT_VERSION = 3


# --- migrations (in memory only; the file is never rewritten) -----------------------------------


def migrate(objects: Sequence[Entry], lines: Sequence[int], version: int) -> list[Entry]:
    """Bring parsed objects (header first) to v3 without touching the originals.

    v1 → v2 gives every entry an id and chains it to the previous one, and turns a compaction's
    ``firstKeptEntryIndex`` (an index into the parsed lines, header included) into
    ``firstKeptEntryId``. pi draws random ids; these are ``L<line>``, stable across reads, so a
    branch or a fork can name an entry of a v1 file. v2 → v3 renames the ``hookMessage`` role.
    """
    if version >= CURRENT_VERSION:
        return list(objects)
    out = list(objects)
    if version < 2:
        previous: str | None = None
        on_line: dict[int, int] = {}  # objects read so far from each line (glued lines hold two)
        for index, entry in enumerate(out):
            if entry.get("type") == "session":
                continue
            copy = dict(entry)
            line = lines[index]
            nth = on_line[line] = on_line.get(line, 0) + 1
            copy["id"] = f"L{line}" if nth == 1 else f"L{line}.{nth}"
            copy["parentId"] = previous
            previous = copy["id"]
            if copy.get("type") == "compaction":
                kept = copy.pop("firstKeptEntryIndex", None)
                if type(kept) is int and 0 <= kept < index:
                    target = out[kept]
                    if target.get("type") != "session":
                        copy["firstKeptEntryId"] = target["id"]
            out[index] = copy
    for index, entry in enumerate(out):
        message = entry.get("message")
        if (
            entry.get("type") == "message"
            and isinstance(message, dict)
            and message.get("role") == "hookMessage"
        ):
            out[index] = {**entry, "message": {**message, "role": "custom"}}
    return out


# --- the tree -----------------------------------------------------------------------------------


def _is_system_message(entry: Mapping[str, Any]) -> bool:
    message = entry.get("message")
    return entry.get("type") == "message" and isinstance(message, Mapping) and message.get("role") == "system"


def context_entries(path: Sequence[Entry]) -> list[Entry]:
    """``buildContextEntries``: the latest compaction, its kept non-system range, then the rest."""
    compaction_index = -1
    for index, entry in enumerate(path):
        if entry.get("type") == "compaction":
            compaction_index = index
    if compaction_index < 0:
        return list(path)
    compaction = path[compaction_index]
    selected = [compaction]
    first_kept = compaction.get("firstKeptEntryId")
    found = False
    for entry in path[:compaction_index]:
        if entry.get("id") == first_kept:
            found = True
        if found and not _is_system_message(entry):
            selected.append(entry)
    selected.extend(path[compaction_index + 1 :])
    return selected


def settings(path: Sequence[Entry]) -> tuple[str, tuple[str, str] | None]:
    """(thinking level, (provider, model id)) as ``getSessionContextSettings`` reads them."""
    thinking = "off"
    model: tuple[str, str] | None = None
    for entry in path:
        kind = entry.get("type")
        if kind == "thinking_level_change":
            thinking = entry.get("thinkingLevel")  # type: ignore[assignment]
        elif kind == "model_change":
            model = (entry.get("provider"), entry.get("modelId"))  # type: ignore[assignment]
        elif kind == "message":
            message = entry.get("message")
            if isinstance(message, Mapping) and message.get("role") == "assistant":
                model = (message.get("provider"), message.get("model"))  # type: ignore[assignment]
    return thinking, model


def _present(entry: Mapping[str, Any], target: dict[str, Any], *keys: str) -> dict[str, Any]:
    """Copy the keys the entry has (JS drops ``undefined`` keys when it serializes)."""
    for key in keys:
        if key in entry:
            target[key] = entry[key]
    return target


def entry_messages(entry: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``sessionEntryToContextMessages``: what one selected entry contributes."""
    kind = entry.get("type")
    if kind == "message":
        message = entry.get("message")
        if not isinstance(message, dict):
            return []
        role = message.get("role")
        if role == "system" and message.get("content") is None:
            return [{**message, "content": ""}]
        if role in ("user", "assistant", "toolResult") and message.get("content") is None:
            return [{**message, "content": []}]
        return [message]
    if kind == "custom_message":
        custom: dict[str, Any] = {"role": "custom"}
        _present(entry, custom, "customType")
        custom["content"] = entry.get("content") if entry.get("content") is not None else []
        _present(entry, custom, "display", "details")
        custom["timestamp"] = iso_ms(entry.get("timestamp"))
        return [custom]
    if kind == "branch_summary" and entry.get("summary"):
        summary: dict[str, Any] = {"role": "branchSummary", "summary": entry["summary"]}
        _present(entry, summary, "fromId")
        summary["timestamp"] = iso_ms(entry.get("timestamp"))
        return [summary]
    if kind == "compaction":
        compacted: dict[str, Any] = {"role": "compactionSummary"}
        _present(entry, compacted, "summary", "tokensBefore")
        compacted["timestamp"] = iso_ms(entry.get("timestamp"))
        checkpoint = entry.get("systemMessage")
        return [checkpoint, compacted] if isinstance(checkpoint, dict) and checkpoint else [compacted]
    return []


_EDITABLE = frozenset({"user", "assistant", "toolResult", "custom"})


def apply_edit(messages: list[dict[str, Any]], edit: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """``projectContextEntry``: the latest ``context_edit`` for an entry, applied to its messages."""
    if edit is None:
        return messages
    replacement = edit.get("replacement")
    if replacement is None:
        return []
    content = replacement.get("content") if isinstance(replacement, Mapping) else None
    out = []
    for message in messages:
        role = message.get("role")
        if role not in _EDITABLE:
            out.append(message)
            continue
        if role in ("assistant", "toolResult") and isinstance(content, str):
            new_content: Any = [{"type": "text", "text": content}]
        else:
            new_content = content
        edited = dict(message)
        if new_content is None:
            edited.pop("content", None)
        else:
            edited["content"] = new_content
        out.append(edited)
    return out


@dataclass(frozen=True)
class Projection:
    #: (entry, messages it contributes) in context order.
    entries: list[tuple[Entry, list[dict[str, Any]]]]
    thinking_level: str
    model: tuple[str, str] | None

    @property
    def messages(self) -> list[dict[str, Any]]:
        return [m for _entry, messages in self.entries for m in messages]

    @property
    def sources(self) -> list[str]:
        return [str(entry.get("id")) for entry, messages in self.entries for _m in messages]


def project_path(path: Sequence[Entry]) -> Projection:
    """``buildSessionProjection`` over an already built path."""
    thinking, model = settings(path)
    selected = context_entries(path)
    edits: dict[object, Entry] = {}
    for entry in selected:
        if entry.get("type") == "context_edit":
            edits[entry.get("targetId")] = entry
    projected: list[tuple[Entry, list[dict[str, Any]]]] = []
    append = projected.append
    for index, entry in enumerate(selected):
        kind = entry.get("type")
        if kind == "message":
            # The common case, inlined (same result as entry_messages with no edit): a stored
            # message with content stands for itself.
            message = entry.get("message")
            if type(message) is dict and message.get("content") is not None and entry.get("id") not in edits:
                append((entry, [message]))
                continue
        elif kind == "compaction" and index > 0:
            # An older compaction inside the newest one's kept range contributes nothing.
            append((entry, []))
            continue
        append((entry, apply_edit(entry_messages(entry), edits.get(entry.get("id")))))
    return Projection(projected, thinking, model)


def contributing(path: Sequence[Entry]) -> set[int]:
    """``id()`` of the entries whose messages reach the model (after ``convertToLlm``), without
    building any message: the timeline's in-context marks on open. Must agree with
    ``project_path`` + ``convert_to_llm`` (a test holds them together on every fixture leaf)."""
    selected = context_entries(path)
    omitted: dict[object, bool] = {}
    for entry in selected:
        if entry.get("type") == "context_edit":
            omitted[entry.get("targetId")] = entry.get("replacement") is None
    out: set[int] = set()
    for index, entry in enumerate(selected):
        if omitted.get(entry.get("id")):
            continue
        kind = entry.get("type")
        if kind == "message":
            message = entry.get("message")
            if type(message) is not dict:
                continue
            role = message.get("role")
            if role in _MODEL_ROLES or (role == "bashExecution" and not message.get("excludeFromContext")):
                out.add(id(entry))
        elif (
            kind == "custom_message"
            or (kind == "compaction" and index == 0)
            or (kind == "branch_summary" and entry.get("summary"))
        ):
            out.add(id(entry))
    return out


_MODEL_ROLES = frozenset(
    {"system", "user", "assistant", "toolResult", "custom", "branchSummary", "compactionSummary"}
)


# --- convertToLlm -------------------------------------------------------------------------------


def bash_execution_text(message: Mapping[str, Any]) -> str:
    text = f"Ran `{message.get('command')}`\n"
    output = message.get("output")
    text += f"```\n{output}\n```" if output else "(no output)"
    code = message.get("exitCode")
    if message.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif code is not None and code != 0:
        text += f"\n\nCommand exited with code {_js_number(code)}"
    if message.get("truncated") and message.get("fullOutputPath"):
        text += f"\n\n[Output truncated. Full output: {message['fullOutputPath']}]"
    return text


def _js_number(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


PLAIN_ROLES = frozenset({"system", "user", "assistant", "toolResult"})


def convert_to_llm(messages: Sequence[Mapping[str, Any]]) -> list[Message]:
    """pi's ``convertToLlm``: custom roles become user messages, unknown roles are dropped."""
    out: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        if role == "bashExecution":
            if message.get("excludeFromContext"):
                continue
            out.append(
                _with_ts(
                    {"role": "user", "content": [{"type": "text", "text": bash_execution_text(message)}]},
                    message,
                )
            )
        elif role == "custom":
            content = message.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            out.append(_with_ts({"role": "user", "content": blocks}, message))
        elif role == "branchSummary":
            text = BRANCH_SUMMARY_PREFIX + str(message.get("summary")) + BRANCH_SUMMARY_SUFFIX
            out.append(_with_ts({"role": "user", "content": [{"type": "text", "text": text}]}, message))
        elif role == "compactionSummary":
            text = COMPACTION_SUMMARY_PREFIX + str(message.get("summary")) + COMPACTION_SUMMARY_SUFFIX
            out.append(_with_ts({"role": "user", "content": [{"type": "text", "text": text}]}, message))
        elif role in ("system", "user", "assistant", "toolResult"):
            out.append(dict(message) if not isinstance(message, dict) else message)  # pi returns it as is
    return cast(list[Message], out)


def _with_ts(target: dict[str, Any], source: Mapping[str, Any]) -> dict[str, Any]:
    if "timestamp" in source:
        target["timestamp"] = source["timestamp"]
    return target
