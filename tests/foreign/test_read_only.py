"""Reading never writes: opening a foreign session locks, repairs and creates nothing (X1, D6).

pi's own loader appends a missing final newline when it opens a file; Desktop's journal writer
takes a lock file and moves a torn tail into a sidecar. Neither may happen to a foreign file:
every read path is exercised on a copy and the bytes, the stat and the folder listing compared.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from desktop.host.foreign import browse, detect_format
from desktop.session.foreign import fork_to_desktop, next_request, open_foreign
from tests.foreign.support import CLAUDE, FIXTURES, PI


def snapshot(folder: Path) -> dict[str, tuple[str, int, int]]:
    return {
        p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns, p.stat().st_mode)
        for p in sorted(folder.iterdir())
    }


def exercise(path: Path, home: Path, data: Path) -> None:
    assert detect_format(path).known
    session = open_foreign(path)
    for branch in session.branches():
        for row in session.timeline(branch.leaf):
            assert row.summary is not None
        session.system_diffs(branch.leaf)
        session.context(branch.leaf)
        session.usage(branch.leaf)
        session.request_contexts(branch.leaf)
    next_request(session, "anthropic/claude-opus-5-5")
    next_request(session, "openai/gpt-5.5")
    assert browse(home, env={})
    fork_to_desktop(session, workspace=home / "ws", data_dir=str(data))


@pytest.mark.parametrize(
    "source",
    [
        PI / "v3_branches.jsonl",
        PI / "v3_compaction.jsonl",
        PI / "v2_tree.jsonl",
        PI / "v1_linear.jsonl",
        CLAUDE / "basic.jsonl",
        CLAUDE / "compact.jsonl",
        CLAUDE / "parallel.jsonl",
        CLAUDE / "compact_orphan.jsonl",
        CLAUDE / "null_parents.jsonl",
        CLAUDE / "legacy.jsonl",
        FIXTURES / "pi_quirks" / "v1_glued.jsonl",
        FIXTURES / "pi_quirks" / "v3_string_tools.jsonl",
        *sorted((FIXTURES / "codex").glob("*.jsonl")),
    ],
    ids=lambda p: p.name,
)
@pytest.mark.parametrize("torn", [False, True], ids=["whole", "no-final-newline"])
def test_every_read_path_leaves_the_file_and_its_folder_untouched(
    source: Path, torn: bool, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    folder = home / {CLAUDE: ".claude/projects/-w", FIXTURES / "codex": ".codex/sessions/2026/10/06"}.get(
        source.parent, ".pi/agent/sessions/--w--"
    )
    folder.mkdir(parents=True)
    path = folder / source.name
    data = source.read_bytes()
    path.write_bytes(data[:-1] if torn else data)  # pi's loader would append the newline back
    path.chmod(0o444)
    before = snapshot(folder)
    exercise(path, home, tmp_path / "data")
    assert snapshot(folder) == before
    assert os.listdir(folder) == [source.name]  # no lock, no sidecar, no temp file
    forks = list((tmp_path / "data" / "sessions").rglob("*.jsonl"))
    assert len(forks) == 1 and folder not in forks[0].parents  # the fork went to Desktop's data dir
