"""Contextual guidance: workspace instruction files and environment facts.

Only facts that change rarely go into the prompt (no clock, no per-request counters):
anything that changed on every request would append a section update every turn and
defeat the prompt cache this design protects.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

GUIDANCE_FILES = ("AGENTS.md", "CLAUDE.md")
MAX_GUIDANCE_CHARS = 64_000


def find_guidance(workspace: Path, stop_at: Path | None = None) -> list[tuple[str, str]]:
    """Instruction files from the outermost parent down to the workspace (nearest last)."""
    workspace = workspace.resolve()
    boundary = (stop_at or Path.home()).resolve()
    chain = [workspace]
    for parent in workspace.parents:
        chain.append(parent)
        if parent == boundary:
            break
    found: list[tuple[str, str]] = []
    for directory in reversed(chain):
        for name in GUIDANCE_FILES:
            path = directory / name
            if path.is_file():
                try:
                    text = path.read_text(encoding="utf-8", errors="replace")[:MAX_GUIDANCE_CHARS]
                except OSError:
                    continue
                found.append((str(path), text))
    return found


def environment_facts(workspace: Path) -> dict[str, str]:
    return {
        "Working directory": str(workspace.resolve()),
        "Platform": f"{platform.system()} {platform.release()}".strip(),
        "Shell": os.environ.get("SHELL", "/bin/sh")
        if os.name != "nt"
        else os.environ.get("COMSPEC", "cmd.exe"),
        "Git repository": "yes" if (workspace / ".git").exists() else "no",
    }
