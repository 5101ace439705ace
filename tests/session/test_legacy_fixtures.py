"""Legacy session files continue correctly, twice in a row (S3, S5): opening writes nothing
(design G12), the first turn appends exactly one system row with its user row, the second
appends none, and no earlier byte of the file changes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from desktop.emulator import Emulator
from tests.session.support import config, open_

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "legacy"


def workspace_with_skills(root: Path) -> Path:
    for name, description in (("lint", "Run the linters"), ("deploy", "Ship it")):
        path = root / ".pi" / "skills" / name / "SKILL.md"
        path.parent.mkdir(parents=True)
        path.write_text(f"---\nname: {name}\ndescription: {description}\n---\nSteps.\n", encoding="utf-8")
    return root


@pytest.mark.parametrize("fixture", ["aggregate_skills.jsonl", "no_metadata.jsonl"])
def test_legacy_session_continues_once(tmp_path: Path, fixture: str) -> None:
    session_file = tmp_path / fixture
    shutil.copy(FIXTURES / fixture, session_file)
    original = session_file.read_bytes()
    workspace = workspace_with_skills(tmp_path / "ws")
    with Emulator() as emu:
        cfg = config(emu, workspace)
        with open_(session_file, cfg):
            pass
        assert session_file.read_bytes() == original  # looking writes nothing
        with open_(session_file, cfg) as session:
            session.runtime.run_turn("continue")
        first = session_file.read_bytes()
        assert first.startswith(original)  # nothing rewritten or prefixed
        with open_(session_file, cfg) as session:
            systems = [r for r in session.writer.rows if r["type"] == "system"]
            appended = systems[-1]
            sections = appended["modelSystem"]["message"]["sections"]
            user = next(r for r in session.writer.rows if r["id"] == appended["before"])
            assert user["message"]["content"] == "continue"  # anchored before the turn's message (T4)
            session.runtime.run_turn("again")
            assert [r for r in session.writer.rows if r["type"] == "system"] == systems  # once only
    assert {"skills", "skill:lint", "skill:deploy"} <= set(sections)
    if fixture == "aggregate_skills.jsonl":
        assert "legacy skills" in appended["label"]
        assert sections["skills"].startswith("<skills>\nSkills are specialized")
        assert len(systems) == 2
    else:
        assert appended["label"].startswith("baseline")
        assert len(systems) == 1
        assert appended["modelSystem"]["message"].get("toolsAdded")  # the full current state
