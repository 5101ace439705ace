"""What a hidden system row changed: each section before and after (design G2).

"Before" is the replayed system state just before the row in *model order*, built exactly
as the runtime and the projections build it (``context_view`` then
``current_system_message``), so the inspector can never show a state the model did not
have. A ``null`` section value is a tombstone and shows as a removal. A compaction row is
treated as a restart: its checkpoint is the full state after it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from desktop.pi.text import content_text
from desktop.pi.transcript import current_system_message
from desktop.session.history import checkpoint_message, context_view, row_message

_STATE_ROWS = frozenset({"system", "compaction"})
Status = Literal["added", "changed", "removed", "unchanged", "dropped"]


@dataclass(frozen=True)
class SectionChange:
    name: str
    before: str | None
    after: str | None
    status: Status


@dataclass(frozen=True)
class SectionDiff:
    row_id: str
    label: str
    anchored_before: str | None = None
    changes: list[SectionChange] = field(default_factory=list)
    tools_added: list[str] = field(default_factory=list)
    tools_redefined: list[str] = field(default_factory=list)
    tools_removed: list[str] = field(default_factory=list)
    content: str = ""
    problem: str | None = None
    sections_before: int = 0
    sections_after: int = 0


def state_before(
    rows_in_model_order: Sequence[Mapping[str, Any]],
    index: int,
    state_positions: Sequence[int] | None = None,
    ids: Sequence[str | None] | None = None,
) -> dict[str, Any] | None:
    """The replayed system message in force just before ``rows_in_model_order[index]``.

    Only system state matters here, so the replay runs over the rows that can carry it: system
    and compaction rows (``state_positions``, if the caller already knows them), plus the first
    kept row of each compaction, so ``context_view`` finds the retained tail exactly as it does
    over the full history. Same result, a fraction of the work: this runs on the GUI thread.
    ``ids`` (the row ids in the same order, if the caller has them) finds those kept rows
    without reading every row (design G9).
    """
    rows = rows_in_model_order
    if state_positions is None:
        state_positions = [i for i in range(index) if rows[i].get("type") in _STATE_ROWS]
    positions = [i for i in state_positions if i < index]
    kept = {rows[i].get("firstKeptId") for i in positions if rows[i].get("type") == "compaction"}
    if kept:
        if ids is None:
            ids = [rows[i].get("id") for i in range(index)]
        positions = sorted({*positions, *(i for i in range(index) if ids[i] in kept)})
    view = context_view([rows[i] for i in positions])
    message = current_system_message(view.messages)
    return dict(message) if message is not None else None


def section_status(before: str | None, after: str | None, present_before: bool) -> Status:
    """How one named section moved: added, removed, changed or unchanged (also for foreign rows)."""
    if after is None:
        return "removed"
    if not present_before:
        return "added"
    return "unchanged" if before == after else "changed"


def section_changes(
    old: Mapping[str, str], update: Mapping[str, Any], *, restart: bool = False
) -> tuple[list[SectionChange], dict[str, str]]:
    """How each section ``update`` names moves from ``old``, and the sections after it; a
    ``restart`` (a compaction's checkpoint, also for foreign rows) drops every other section."""
    changes: list[SectionChange] = []
    after = dict(old)
    named = update.get("sections") or {}
    for name, value in named.items():
        changes.append(
            SectionChange(name, old.get(name), value, section_status(old.get(name), value, name in old))
        )
        if value is None:
            after.pop(name, None)
        else:
            after[name] = value
    if restart:
        changes += [
            SectionChange(name, text, None, "dropped") for name, text in old.items() if name not in named
        ]
        after = {name: text for name, text in after.items() if name in named}
    return changes, after


def tool_changes(
    update: Mapping[str, Any], old: Mapping[str, Mapping[str, Any]]
) -> tuple[list[str], list[str]]:
    """The tools ``update`` declares that ``old`` lacked, and those it declares differently."""
    added: list[str] = []
    redefined: list[str] = []
    for tool in update.get("toolsAdded") or ():
        if not isinstance(tool, Mapping):
            continue
        name = str(tool.get("name", "?"))
        if name in old:
            if old[name] != tool:
                redefined.append(name)
        else:
            added.append(name)
    return added, redefined


def section_diff(
    rows_in_model_order: Sequence[Mapping[str, Any]],
    index: int,
    state_positions: Sequence[int] | None = None,
    ids: Sequence[str | None] | None = None,
) -> SectionDiff:
    """The diff for the system or compaction row at ``index`` of the model-order rows."""
    row = rows_in_model_order[index]
    row_id = str(row.get("id", "?"))
    kind = row.get("type")
    before = state_before(rows_in_model_order, index, state_positions, ids) or {}
    old_sections: dict[str, str] = dict(before.get("sections") or {})
    old_tools = {t["name"]: t for t in before.get("toolsAdded") or ()}
    update: Mapping[str, Any]
    if kind == "compaction":
        checkpoint = checkpoint_message(row)
        label = f"compaction checkpoint ({row.get('reason', 'manual')}): full state restored after it"
        if checkpoint is None:
            return SectionDiff(row_id, label, None, problem="this compaction row has no usable checkpoint")
        update = cast(Mapping[str, Any], checkpoint)
    elif kind == "system":
        message = row_message(row)
        label = str(row.get("label") or "system update")
        if message is None:
            return SectionDiff(
                row_id,
                label,
                row.get("before"),
                problem="this system row carries no modelSystem message of a known version, "
                "so it is not part of the model's context",
                sections_before=len(old_sections),
                sections_after=len(old_sections),
            )
        update = cast(Mapping[str, Any], message)
    else:
        return SectionDiff(row_id, "", None, problem=f"a {kind} row changes no system sections")

    changes, new_sections = section_changes(old_sections, update, restart=kind == "compaction")
    removed = [t.get("name", "?") for t in update.get("toolsRemoved") or ()]
    if kind == "compaction":
        new_tool_names = {t["name"] for t in update.get("toolsAdded") or ()}
        removed = sorted(set(old_tools) - new_tool_names)
    added_names, redefined = tool_changes(update, old_tools)
    return SectionDiff(
        row_id,
        label,
        row.get("before") if kind == "system" else None,
        changes,
        added_names,
        redefined,
        removed,
        content_text(update.get("content") or ""),
        sections_before=len(old_sections),
        sections_after=len(new_sections),
    )
