"""Keep the transcript's system state in step with what Desktop wants the model to know.

One function decides every system update: replay the effective state from the context
(so the decision depends only on the transcript), diff it against the desired sections
and declarations, and describe the single hidden system row to append. Continuation of
a legacy history falls out of the same diff: an aggregate ``skills`` section is replaced
once by the header plus per-skill entries (S3), a history without any model-system rows
gets one baseline row with the full state (S5), and a second continuation finds nothing
to change. Nothing is ever prepended or rewritten.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from desktop.pi.types import SystemMessage, Tool
from desktop.session.history import MODEL_SYSTEM_VERSION
from desktop.session.sections import SKILLS_HEADER, is_skill_entry
from desktop.session.state import EffectiveState, system_update


class DesiredState(NamedTuple):
    sections: dict[str, str]
    tools: Sequence[Tool] = ()


def update_label(current_sections: Mapping[str, str], update: SystemMessage, baseline: bool) -> str:
    """Why the row exists, for the inspector (never sent to the model)."""
    if baseline:
        return "baseline: first recorded system state of this history"
    changed = update.get("sections") or {}
    if (
        SKILLS_HEADER in changed
        and SKILLS_HEADER in current_sections
        and not any(is_skill_entry(n) for n in current_sections)
        and any(is_skill_entry(n) for n in changed)
    ):
        return "legacy skills section split into header and entries"
    parts = []
    if changed:
        names = sorted(changed)
        parts.append("sections: " + ", ".join(names[:6]) + (" …" if len(names) > 6 else ""))
    if update.get("toolsAdded"):
        parts.append("tools added: " + ", ".join(t["name"] for t in update["toolsAdded"]))
    if update.get("toolsRemoved"):
        parts.append("tools removed: " + ", ".join(t["name"] for t in update["toolsRemoved"]))
    return "; ".join(parts)


def system_fields_for(
    state: EffectiveState,
    has_model_system: bool,
    desired: DesiredState,
    *,
    timestamp: int,
    anchor_before: str | None = None,
) -> dict[str, Any] | None:
    """The payload of the hidden system row to append, or None when the state is current: from
    the replayed state and whether any row carries model-system metadata, as the runtime keeps
    them (design P7)."""
    update = system_update(state, desired.sections, desired.tools, timestamp=timestamp)
    if update is None:
        return None
    fields: dict[str, Any] = {
        "modelSystem": {"v": MODEL_SYSTEM_VERSION, "message": update},
        "label": update_label(state.sections, update, baseline=not has_model_system),
    }
    if anchor_before is not None:
        fields["before"] = anchor_before
    return fields
