"""The guided first session: a few real turns against the offline emulator (design G5).

A first launch with no key opens on the emulator route. Instead of an empty window, the
worker prepares a small demo workspace (an ``AGENTS.md`` and one skill), runs one turn, edits
the workspace the way a user would, and runs a second turn that reads a file. The turns go
through the real runtime, journal and emulator, so the timeline shows a genuine baseline
system row, a genuine section diff (the guidance change and the new skill entry), a tool call
with its result, and the payload preview of the next request.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from desktop.ui.worker import SessionWorker

WELCOME_NOTE = (
    "Welcome to Pi Desktop. You are on the offline emulator route: no API key, no network, replies "
    "are scripted. Click the purple SYSTEM rows (show them with Ctrl+H) to see what the model was told and "
    "how each section changed; the Payload tab shows the exact next request and where its cached prefix "
    "breaks. Add a key under Settings → Accounts to talk to a real model."
)

AGENTS_V1 = """# Welcome project

This folder is a demo workspace created by Pi Desktop on first launch.
- Keep answers short.
"""

AGENTS_V2 = AGENTS_V1 + "- When you read a file, quote the line you relied on.\n"

SKILL_RELEASE = """---
name: release-notes
description: Write release notes from the git log of this workspace.
---
Collect the commits since the last tag and group them by area.
"""

SKILL_CHANGELOG = """---
name: changelog
description: Keep CHANGELOG.md in the Keep a Changelog format.
---
Add entries under "Unreleased"; never rewrite released sections.
"""

FIRST_PROMPT = "Hello! What is this workspace about?"
SECOND_PROMPT = 'Please read AGENTS.md and tell me what it asks. [[tool:read {"path": "AGENTS.md"}]]'


def prepare_workspace(folder: Path) -> Path:
    """Create (or reset) the demo workspace at ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "AGENTS.md").write_text(AGENTS_V1, encoding="utf-8")
    skill = folder / ".pi" / "skills" / "release-notes"
    skill.mkdir(parents=True, exist_ok=True)
    (skill / "SKILL.md").write_text(SKILL_RELEASE, encoding="utf-8")
    stale = folder / ".pi" / "skills" / "changelog"
    if (stale / "SKILL.md").exists():
        (stale / "SKILL.md").unlink()
        stale.rmdir()
    return folder


def change_workspace(folder: Path) -> None:
    """The edit between the two turns: guidance grows a line, a second skill appears."""
    (folder / "AGENTS.md").write_text(AGENTS_V2, encoding="utf-8")
    skill = folder / ".pi" / "skills" / "changelog"
    skill.mkdir(parents=True, exist_ok=True)
    (skill / "SKILL.md").write_text(SKILL_CHANGELOG, encoding="utf-8")


def seed_welcome(worker: SessionWorker, folder: Path) -> None:
    """Run the guided turns on the worker thread; a quit (or a stop) ends them early."""
    if worker.runtime is None or worker.closing.is_set():
        return
    worker.runtime.note("info", WELCOME_NOTE, worker.on_event, kind="welcome")
    for prompt in (FIRST_PROMPT, SECOND_PROMPT):
        if worker.closing.is_set() or worker.cancel.is_set():
            return
        if prompt == SECOND_PROMPT:
            change_workspace(folder)
        worker.run_turn(prompt)
