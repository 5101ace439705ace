"""Foreign session files (pi-coding-agent, Claude Code, Codex CLI): detection, read-only reading, listing.

Reading never writes (design X1): files are opened ``rb``, never locked, repaired or given a
sidecar. Turning their entries into timelines and contexts is ``desktop.session.foreign``'s job.
"""

from __future__ import annotations

from desktop.host.foreign.browser import (
    SessionEntry,
    Workspace,
    browse,
    claude_projects_root,
    codex_sessions_root,
    list_claude_sessions,
    list_codex_sessions,
    list_pi_sessions,
    pi_sessions_root,
)
from desktop.host.foreign.detect import SUPPORTED, Detected, detect_format
from desktop.host.foreign.lines import JsonLines, parse_json_lines, read_json_lines

__all__ = [
    "SUPPORTED",
    "Detected",
    "JsonLines",
    "SessionEntry",
    "Workspace",
    "browse",
    "claude_projects_root",
    "codex_sessions_root",
    "detect_format",
    "list_claude_sessions",
    "list_codex_sessions",
    "list_pi_sessions",
    "parse_json_lines",
    "pi_sessions_root",
    "read_json_lines",
]
