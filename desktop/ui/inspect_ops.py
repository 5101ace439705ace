"""The worker's operations for foreign sessions and the what-if replay (design X1, X2, X3).

Plain functions the worker thread calls (no Qt, no signals): each takes what the worker holds
and returns the plain dict the window is sent. They read files (a session, the folders the
browser lists) and write one (a fork), so they never run on the GUI thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from desktop.host import paths
from desktop.host.desktop_sessions import list_sessions
from desktop.pi.catalog import RouteError
from desktop.pi.cost import calculate_cost
from desktop.pi.projection import ProjectionError, project
from desktop.pi.routes import resolve_model
from desktop.pi.types import Model
from desktop.ui.messages import ForeignBranch, ForeignBranchRows, SessionOpened, ShownSession
from desktop.ui.session_browser import browse_rows, desktop_rows
from desktop.ui.usage_stats import UsageLine, totals

if TYPE_CHECKING:  # the foreign readers load when a foreign session opens
    from desktop.session.foreign import ForeignSession

DEFAULT_WHATIF_ROUTES = ("anthropic/claude-opus-5-5", "deepseek/deepseek-flash", "openai/gpt-5.5")


def file_format(path: Path) -> tuple[str, str]:
    """(format, description) of a file by its content: desktop, pi, claude-code or unknown."""
    from desktop.host.foreign.detect import detect_format  # Lazy: the launch budget (X27).

    detected = detect_format(path)
    return detected.format, detected.description


def open_foreign_info(path: Path, leaf: str | None = None) -> tuple[ForeignSession, SessionOpened]:
    """Open a pi or Claude Code session read-only and describe it for the window (X1).

    Raises ``ForeignOpenError`` whose text is the one line to show (unknown format).
    """
    from desktop.session.foreign import open_foreign  # Lazy: the launch budget (X27).

    session = open_foreign(path)
    return session, branch_info(session, leaf)


def branch_info(session: ForeignSession, leaf: str | None) -> SessionOpened:
    """The session at a branch as the window shows it: the rows as a reader that builds the
    ones painted (``ForeignRows``), and the branch's usage, priced, for the Usage tab."""
    # Lazy: the launch budget (X27).
    from desktop.session.foreign.display import FORMAT_NAMES, READ_ONLY_NOTE, Prices, branch_dict
    from desktop.ui.foreign_rows import ForeignRows

    leaf = leaf or session.default_leaf
    prices = Prices()
    lines = _usage_lines(session, leaf, prices)
    # The branch's section diffs in one pass over it, not one per system row.
    reader = ForeignRows(session.timeline(leaf), session.system_diffs(leaf), prices)
    branches = [branch_dict(b) for b in session.branches()]
    name = FORMAT_NAMES.get(session.format, session.format)
    note = READ_ONLY_NOTE.format(name=name[0].upper() + name[1:])
    return SessionOpened(
        ShownSession(
            str(session.path), session.cwd or "", note, ForeignBranch(session.format, name, leaf, branches)
        ),
        ForeignBranchRows(reader, lines, totals(lines)),
        diagnostics=[str(d) for d in session.diagnostics],
    )


def _usage_lines(session: ForeignSession, leaf: str | None, prices: Any) -> list[UsageLine]:
    """The Usage tab's lines of a foreign branch: each model call, priced from the catalog when
    the file records no cost (Claude Code)."""
    from desktop.session.foreign.display import unpriced  # Lazy: the launch budget (X27).

    lines = []
    for record in session.usage(leaf):
        usage = unpriced(record.usage)
        cost = record.usage.get("cost")
        total = float(cost.get("total") or 0) if isinstance(cost, dict) else 0.0
        if total <= 0:
            entry = prices.entry(record.provider, record.model)
            if entry is not None:
                cost = calculate_cost(entry.model, usage)
                total = float(cost.get("total", 0.0))
        parts = cost if isinstance(cost, dict) and total > 0 else {}
        lines.append(
            UsageLine(
                record.row_id,
                int(record.ts or 0),
                record.model,
                int(usage.get("input") or 0),
                int(usage.get("cacheRead") or 0),
                int(usage.get("cacheWrite") or 0),
                int(usage.get("output") or 0),
                total,
                float(parts["cacheRead"]) if isinstance(parts.get("cacheRead"), int | float) else None,
                float(parts["output"]) if isinstance(parts.get("output"), int | float) else None,
            )
        )
    return lines


def browse_listing(home: Path | None = None) -> dict[str, Any]:
    """The session browser's data: Pi Desktop's own sessions, then the workspaces and sessions
    under the pi, Claude Code and Codex folders."""
    # Lazy: the launch budget (X27).
    from desktop.host.foreign.browser import claude_projects_root, codex_sessions_root, pi_sessions_root
    from desktop.session.foreign import browse

    return {
        "workspaces": desktop_rows(list_sessions(paths.sessions_dir())) + browse_rows(browse(home=home)),
        "roots": [
            str(paths.sessions_dir()),
            str(pi_sessions_root(home)),
            str(claude_projects_root(home)),
            str(codex_sessions_root(home)),
        ],
    }


def whatif(
    path: Path,
    routes: list[str],
    leaf: str | None = None,
    *,
    progress: Callable[[Any], None] | None = None,
    cancel: threading.Event | None = None,
) -> dict[str, Any]:
    """The what-if replay of the session at ``path`` onto ``routes`` (X3), ``{"error": ...}``,
    or ``{"cancelled": True}`` when ``cancel`` was set during it (X8)."""
    # Lazy: the launch budget (X27).
    from desktop.session.foreign import BranchNotFound, ForeignOpenError
    from desktop.session.whatif import WhatIfCancelled, request_sequence, what_if

    try:
        result = what_if(
            request_sequence(path, leaf=leaf), routes, progress=progress, cancel=cancel
        ).to_json()
    except WhatIfCancelled:
        return {"cancelled": True, "routes": routes}
    except (RouteError, ProjectionError, BranchNotFound, ForeignOpenError, OSError, ValueError) as exc:
        return {"error": str(exc), "routes": routes}
    result["leaf"] = leaf
    return result


def foreign_preview(session: ForeignSession, leaf: str | None, choice: Any) -> dict[str, Any]:
    """The Payload tab for a pi or Claude Code session: its next request on ``choice``'s route,
    with the cache view after the session's last request projected on the same route (X1, P6)."""
    # Lazy: the launch budget (X27).
    from desktop.session.foreign import next_request, request_options
    from desktop.session.inspector.payload_text import pretty_json
    from desktop.session.inspector.preview import PRETTY_LIMIT, build_preview, cache_figures

    try:
        model = cast(Model, resolve_model(choice.route).model)
        request = next_request(session, model, leaf=leaf)
        contexts = session.request_contexts(leaf)
        previous = None
        if contexts:
            options = request_options(session, session.context(leaf))
            previous = project(model, contexts[-1][1], options).body_bytes
        preview = build_preview(
            request,
            label=f"{choice.label} — {session.format} session, read-only",
            api=str(model["api"]),
            previous=previous,
            previous_label="the session's last request, projected on this route",
            offline=choice.route.offline,
        )
        preview.pop("prettyMap", None)
        body = request.body_bytes
        pretty = pretty_json(body.decode("utf-8", errors="replace")) if len(body) <= PRETTY_LIMIT else None
        preview["cache"] = cache_figures(model, body, [previous] if previous is not None else [], pretty)
        return preview
    except Exception as exc:  # a route without a projection, a broken context: one line
        return {"route": choice.label, "error": f"{type(exc).__name__}: {exc}"}
