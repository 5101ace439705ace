"""Continue a pi or Claude Code session in Pi Desktop (design X2).

The fork is a NEW Desktop session; the source file is only read. What the model was given at
the chosen leaf is journaled as plain ``user``/``assistant``/``toolResult`` rows, in one group
commit, after a note that says where they came from. Nothing else is carried over:

* no system rows: the source's prompt and tools are that app's, not Desktop's, and Desktop
  does not invent a past state it never had. Opening the fork continues it like any history
  without system rows: one baseline system row with Desktop's current state (S5);
* no tool activation (A5, A8): an imported ToolSearch result is evidence of nothing on this
  installation. The imported rows come before Desktop's first signed ``tool_activation``
  section, which restoration never reads them past; and tool results are imported without
  their ``details`` (display metadata of the tool that produced them, never sent to a model),
  which is where a ToolSearch result keeps the names it activated, so even rows that came
  after a section would grant nothing. Every row carries ``imported`` so the origin stays
  visible. Only what the user activates from now on runs.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from desktop import __version__
from desktop.host.journal import SessionStore, new_row_id
from desktop.host.journal.envelope import now_ms
from desktop.session.foreign.base import ForeignSession

IMPORTED_ROLES = ("user", "assistant", "toolResult")


def _route(message: Mapping[str, Any]) -> dict[str, Any]:
    """The ``route`` of an imported assistant row: where it came from, never a live binding."""
    return {
        "provider": str(message.get("provider") or "unknown"),
        "model": str(message.get("model") or "unknown"),
        "api": str(message.get("api") or "unknown"),
        "baseUrl": "",
        "imported": True,
    }


def import_rows(session: ForeignSession, leaf: str | None = None) -> list[dict[str, Any]]:
    """The rows a fork journals: a note, then the context at ``leaf`` as plain rows (pure)."""
    context = session.context(leaf)
    ts = now_ms()
    leaf_id = leaf or session.default_leaf
    origin = {"format": session.format, "source": str(session.path), "sessionId": session.session_id}
    rows: list[dict[str, Any]] = []
    for message, source in zip(context.messages, context.sources, strict=True):
        role = message.get("role")
        if role not in IMPORTED_ROLES:
            continue
        body = dict(message)
        stamp = body.get("timestamp")  # the row keeps the time it was written in the source
        row_ts = stamp if type(stamp) is int and stamp >= 0 else ts
        row: dict[str, Any] = {"type": role, "v": 1, "id": new_row_id(), "ts": row_ts}
        if role == "toolResult":
            body.pop("details", None)
        if role == "assistant":
            row["route"] = _route(body)
        row["message"] = body
        row["imported"] = {**origin, "entry": source}
        rows.append(row)
    skipped = len(context.messages) - len(rows)
    what = {"claude-code": "Claude Code", "codex": "Codex CLI"}.get(session.format, "pi")
    text = (
        f"Continued from the {what} session {session.path} (branch ending at {leaf_id}): "
        f"{len(rows)} message(s) imported as plain rows"
        + (f", {skipped} system message(s) left out" if skipped else "")
        + ". That session's system prompt, tools and tool activation are not imported; "
        "Pi Desktop's own apply from here, and only tools activated from now on can run."
    )
    note = {
        "type": "note",
        "v": 1,
        "id": new_row_id(),
        "ts": ts,
        "level": "info",
        "text": text,
        "data": {"kind": "import", **origin, "leaf": leaf_id, "messages": len(rows)},
    }
    return [note, *rows]


def fork_to_desktop(
    session: ForeignSession,
    *,
    leaf: str | None = None,
    workspace: str | os.PathLike[str] | None = None,
    data_dir: str | None = None,
) -> Path:
    """Write a new Desktop session continuing ``session`` at ``leaf``; returns its path.

    The new file lives in the data dir's sessions folder under the workspace (the source's
    recorded ``cwd`` unless given). Open it with ``desktop.session.assembly.open_session`` to
    continue: that appends the baseline system row and restores no activation.
    """
    rows = import_rows(session, leaf)
    cwd = Path(workspace) if workspace is not None else Path(session.cwd or os.getcwd())
    with SessionStore(data_dir=data_dir).create(cwd, app_version=__version__) as writer:
        writer.append(rows)
        return writer.path
