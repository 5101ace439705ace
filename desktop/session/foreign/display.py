"""A foreign session as the window's timeline shows it: plain row dicts (design X1, no Qt).

The window's timeline, row view, usage tab and section-diff tab read Pi Desktop journal rows.
A pi or Claude Code timeline row becomes the same shape where one exists (``user``,
``assistant``, ``toolResult``, ``system`` with ``modelSystem``, ``compaction``), so those views
show it unchanged; every other kind (compaction and branch summaries, labels, model changes,
Claude Code reminders, ...) becomes a ``foreign`` row that keeps its own kind. Every row says
where it came from (``foreign``: the source kind, ``line``: its line in the file) and whether
it is in the model's context at the leaf. System and compaction rows carry their section
diff (``diff``), computed here on the worker so the GUI thread only shows it.

Claude Code records usage without a cost; it is priced here from the catalog when the model
is known there (design G5), and said so in the row (``costFrom``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from desktop.pi.catalog import CatalogEntry, active_catalog
from desktop.pi.cost import calculate_cost
from desktop.session.foreign import model as k
from desktop.session.foreign.model import Branch, SystemDiff, TimelineRow

#: Source kinds shown as the Desktop row type of the same meaning.
_DESKTOP_TYPES = {
    k.USER: "user",
    k.ASSISTANT: "assistant",
    k.TOOL: "toolResult",
    k.SYSTEM: "system",
    k.COMPACTION: "compaction",
}
READ_ONLY_NOTE = (
    "{name}: opened read-only; the file is never changed. Continue in Pi Desktop to keep working on it."
)
FORMAT_NAMES = {
    "pi": "pi-coding-agent session",
    "claude-code": "Claude Code transcript",
    "codex": "Codex CLI session",
}


class Prices:
    """The catalog in use, read once per open: its entry for each recorded model, looked up
    once per model rather than once per reply."""

    def __init__(self) -> None:

        self.catalog = active_catalog()
        self.entries: dict[tuple[str, str], CatalogEntry | None] = {}

    def entry(self, provider: str, model_id: str) -> CatalogEntry | None:
        key = (provider, model_id)
        if key not in self.entries:
            self.entries[key] = self.catalog.get(provider, model_id)
        return self.entries[key]


def _priced(message: Mapping[str, Any], prices: Prices) -> dict[str, Any]:
    """The message with its usage priced from the catalog when it carries no cost (Claude Code)."""
    usage = message.get("usage")
    if not isinstance(usage, Mapping):
        return dict(message)
    cost = usage.get("cost")
    total = cost.get("total") if isinstance(cost, Mapping) else None
    if isinstance(total, (int, float)) and not isinstance(total, bool) and total > 0:
        return dict(message)

    entry = prices.entry(str(message.get("provider") or ""), str(message.get("model") or ""))
    if entry is None:
        return dict(message)
    priced = unpriced(usage)
    calculate_cost(entry.model, priced)
    return {**message, "usage": priced, "costFrom": f"catalog prices for {entry.key}"}


def row_dict(
    row: TimelineRow, diffs: Mapping[str, SystemDiff] | None = None, prices: Prices | None = None
) -> dict[str, Any]:
    """One timeline row as the window's row dict (see the module docstring)."""
    kind = row.kind
    out: dict[str, Any] = {
        "id": row.id,
        "ts": row.ts,
        "foreign": kind,
        "line": row.line,
        "inContext": row.in_context,
        "summary": row.summary,
    }
    if row.label:
        out["tag"] = row.label
    message = row.message
    desktop_type = _DESKTOP_TYPES.get(kind)
    if desktop_type in ("user", "assistant", "toolResult") and isinstance(message, Mapping):
        body = dict(message)
        if row.usage is not None and "usage" not in body:
            body["usage"] = dict(row.usage)
        out["type"] = desktop_type
        out["message"] = _priced(body, prices or Prices()) if desktop_type == "assistant" else body
    elif desktop_type == "system" and isinstance(message, Mapping):
        out["type"] = "system"
        out["modelSystem"] = {"v": 1, "message": dict(message)}
    elif desktop_type == "compaction":
        entry = row.entry
        out["type"] = "compaction"
        found = entry.get("compactMetadata")
        meta: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
        tokens = entry.get("tokensBefore")
        if tokens is None:
            tokens = meta.get("preTokens")
        if isinstance(tokens, int):
            out["tokensBefore"] = tokens
        reason = entry.get("reason") or meta.get("trigger")
        if isinstance(reason, str):
            out["reason"] = reason
    else:
        out["type"] = "foreign"
        out["hidden"] = row.hidden
        if row.text is not None:
            out["text"] = row.text
        elif isinstance(message, Mapping):
            out["message"] = dict(message)
    if diffs is not None and row.id in diffs:
        out["diff"] = diffs[row.id]
    return out


def unpriced(usage: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``usage`` without its cost, for ``calculate_cost`` to fill: it writes into the
    cost it finds, and the file's own (read once, kept by the session) must stay as recorded,
    or the next build of the row would find it priced and no longer say where that came from."""
    return {key: value for key, value in usage.items() if key != "cost"}


def branch_dict(branch: Branch) -> dict[str, Any]:
    data = asdict(branch)
    data["forkPoint"] = data.pop("fork_point")
    return data
