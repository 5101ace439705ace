"""Foreign session files (pi-coding-agent, Claude Code, Codex CLI): detection, read-only reading, listing.

Reading never writes (design X1): files are opened ``rb``, never locked, repaired or given a
sidecar. Turning their entries into timelines and contexts is ``desktop.session.foreign``'s job.
"""

from __future__ import annotations

from desktop.host.foreign.browser import (
    browse,
    list_claude_sessions,
    list_pi_sessions,
)
from desktop.host.foreign.detect import SUPPORTED, detect_format
from desktop.host.foreign.lines import read_json_lines

__all__ = [
    "SUPPORTED",
    "browse",
    "detect_format",
    "list_claude_sessions",
    "list_pi_sessions",
    "read_json_lines",
]
