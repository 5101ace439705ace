"""Foreign sessions (pi-coding-agent, Claude Code, Codex CLI) as timelines, contexts and requests (design X1).

Plain data and functions for the window and the CLI (no Qt):

* ``desktop.host.foreign.detect_format(path)``: "desktop" | "pi" | "claude-code" | unknown.
* ``open_foreign(path)`` → ``ForeignSession``: ``.timeline(leaf)``, ``.branches()``,
  ``.context(leaf)``, ``.system_diffs(leaf)``, ``.usage(leaf)``, ``.diagnostics``.
* ``next_request(session, "provider/model", leaf=...)``: the byte-exact next request.
* ``fork_to_desktop(session, ...)``: continue it as a new Desktop session (design X2).
* ``browse(home)``: the pi and Claude Code sessions on this machine by workspace.
"""

from __future__ import annotations

from desktop.host.foreign import browse
from desktop.session.foreign import model as kinds
from desktop.session.foreign.base import BranchNotFound, ForeignSession
from desktop.session.foreign.claude import ClaudeSession
from desktop.session.foreign.codex import CodexSession
from desktop.session.foreign.fork import fork_to_desktop, import_rows
from desktop.session.foreign.model import TimelineRow
from desktop.session.foreign.open import ForeignOpenError, open_foreign
from desktop.session.foreign.pi import PiSession
from desktop.session.foreign.request import next_request, request_options, route_model

__all__ = [
    "BranchNotFound",
    "ClaudeSession",
    "CodexSession",
    "ForeignOpenError",
    "ForeignSession",
    "PiSession",
    "TimelineRow",
    "browse",
    "fork_to_desktop",
    "import_rows",
    "kinds",
    "next_request",
    "open_foreign",
    "request_options",
    "route_model",
]
