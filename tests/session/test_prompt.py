"""Skills on disk feed per-entry sections; a malformed SKILL.md is reported, never fatal."""

from __future__ import annotations

import os
from pathlib import Path

from desktop.session.prompt import WorkspacePrompt


def write_skill(root: Path, name: str, description: str, body: str = "Do it.") -> Path:
    path = root / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: {name}\ndescription: {description}\n---\n{body}\n", encoding="utf-8")
    return path


def bump(path: Path) -> None:
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10_000_000))


def test_skill_edits_on_disk_refresh_only_their_entry(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    skills = workspace / ".pi" / "skills"
    (workspace / "AGENTS.md").parent.mkdir(parents=True)
    (workspace / "AGENTS.md").write_text("Use tabs.", encoding="utf-8")
    write_skill(skills, "lint", "Run linters")
    prompt = WorkspacePrompt(workspace, user_skills=tmp_path / "user-skills")
    first = prompt.sections()
    assert "skill:lint" in first and "Use tabs." in first["guidance"]

    edited = write_skill(skills, "lint", "Run all linters")
    bump(edited)
    second = prompt.sections()
    changed = {k for k in second if second[k] != first.get(k)}
    assert changed == {"skill:lint"}

    write_skill(skills, "deploy", "Ship")
    third = prompt.sections()
    assert set(third) - set(second) == {"skill:deploy"}


def test_malformed_skill_is_reported_and_the_rest_still_works(tmp_path: Path) -> None:
    root = tmp_path / "ws" / ".claude" / "skills"
    write_skill(root, "good", "Fine", body="The body.")
    bad = root / "bad" / "SKILL.md"
    bad.parent.mkdir(parents=True)
    bad.write_text("no front matter here", encoding="utf-8")
    prompt = WorkspacePrompt(tmp_path / "ws", user_skills=tmp_path / "none")
    catalog = prompt.skills()
    assert [s.id for s in catalog.skills] == ["good"]
    assert len(catalog.diagnostics) == 1 and "bad/SKILL.md" in str(catalog.diagnostics[0])
    assert "front matter" in str(catalog.diagnostics[0])
