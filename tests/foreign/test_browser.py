"""The session browser's data: pi and Claude Code sessions by workspace (design X1)."""

from __future__ import annotations

import os
from pathlib import Path

from desktop.host.foreign import browse, list_claude_sessions, list_pi_sessions
from tests.foreign.support import CLAUDE, PI


def place(target: Path, source: Path, mtime: float) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(source.read_bytes())
    os.utime(target, (mtime, mtime))
    return target


def test_pi_sessions_grouped_by_recorded_workspace_newest_first(tmp_path: Path) -> None:
    root = tmp_path / ".pi" / "agent" / "sessions"
    demo = root / "--home-dev-projects-demo--"
    place(demo / "2026-10-01T09-00-00-000Z_a.jsonl", PI / "v3_branches.jsonl", 1_000)
    place(demo / "2026-10-02T09-00-00-000Z_b.jsonl", PI / "v1_linear.jsonl", 3_000)
    place(root / "--tmp-other--" / "c.jsonl", PI / "v2_tree.jsonl", 2_000)
    (demo / "notes.txt").write_text("not a session")
    (demo / "broken.jsonl").write_text("this is not json\n")
    os.utime(demo / "broken.jsonl", (500, 500))
    groups = list_pi_sessions(tmp_path, env={})
    # The workspace is the cwd the files record, not the lossy folder name; newest group first.
    assert [(g.format, g.folder.name, g.workspace) for g in groups] == [
        ("pi", "--home-dev-projects-demo--", "/home/dev/projects/demo"),
        ("pi", "--tmp-other--", "/home/dev/projects/demo"),
    ]
    first = groups[0]
    assert [s.title for s in first.sessions] == ["Hello from v1", "Demo branches", "broken.jsonl"]
    assert [s.problem is None for s in first.sessions] == [True, True, False]
    assert "it looks like text, not JSON Lines" in (first.sessions[2].problem or "")
    assert first.sessions[1].session_id and first.sessions[1].size > 0


def test_pi_agent_dir_from_the_environment(tmp_path: Path) -> None:
    agent = tmp_path / "agent-elsewhere"
    place(agent / "sessions" / "--w--" / "s.jsonl", PI / "v3_compaction.jsonl", 1_000)
    assert list_pi_sessions(tmp_path / "empty-home", env={}) == []
    groups = list_pi_sessions(tmp_path / "empty-home", env={"PI_CODING_AGENT_DIR": str(agent)})
    assert [s.title for g in groups for s in g.sessions] == ["Compaction demo"]


def test_claude_projects_with_titles_from_summaries_or_first_real_message(tmp_path: Path) -> None:
    project = tmp_path / ".claude" / "projects" / "-home-dev-projects-demo"
    place(project / "7f3c2a10-5b4e-4c2d-9a61-0d2e8f4b1c33.jsonl", CLAUDE / "basic.jsonl", 2_000)
    place(project / "c1.jsonl", CLAUDE / "compact.jsonl", 1_000)
    place(
        project / "7f3c2a10-5b4e-4c2d-9a61-0d2e8f4b1c33" / "subagents" / "agent-x.jsonl",
        CLAUDE / "compact.jsonl",
        1,
    )
    groups = list_claude_sessions(tmp_path, env={})
    assert len(groups) == 1 and groups[0].workspace == "/home/dev/projects/demo"
    titles = [(s.session_id, s.title) for s in groups[0].sessions]
    assert titles == [
        ("7f3c2a10-5b4e-4c2d-9a61-0d2e8f4b1c33", "Demo: list files, read README, add a test"),
        ("7f3c2a10-5b4e-4c2d-9a61-0d2e8f4b1c33", "Start"),
    ]
    config = tmp_path / "cfg"
    place(config / "projects" / "-x" / "s.jsonl", CLAUDE / "compact.jsonl", 1)
    assert [g.folder for g in list_claude_sessions(tmp_path, env={"CLAUDE_CONFIG_DIR": str(config)})] == [
        config / "projects" / "-x"
    ]


def test_browse_lists_both_and_an_empty_home_lists_nothing(tmp_path: Path) -> None:
    assert browse(tmp_path, env={}) == []
    place(tmp_path / ".pi/agent/sessions/--w--/a.jsonl", PI / "v2_tree.jsonl", 1)
    place(tmp_path / ".claude/projects/-w/b.jsonl", CLAUDE / "compact.jsonl", 5)
    assert [g.format for g in browse(tmp_path, env={})] == ["pi", "claude-code"]
