"""`pi-desktop export`: Desktop, pi and Claude Code sessions as Markdown and standalone HTML (design X6)."""

from __future__ import annotations

import shutil
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from desktop.host.journal import JournalWriter
from tests.cli.helpers import run_main
from tests.ui.synthetic import system_row, tool_row, user_row

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
HOSTILE = '<script>alert(1)</script><img src="/dev/zero"> & `` ``` fence'
#: Elements HTML defines without an end tag.
VOID = {"meta", "br", "hr", "img", "input", "link", "wbr", "col", "area", "base", "source"}


class Balanced(HTMLParser):
    """Checks that every element is closed in order and records what could load or run anything."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.problems: list[str] = []
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for name, _value in attrs:
            if name in ("src", "href", "action", "srcset") or name.startswith("on"):
                self.problems.append(f"{tag} has {name}")
        if tag in ("script", "link", "iframe", "object", "embed", "img"):
            self.problems.append(f"element {tag}")
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.stack[-1] if self.stack else 'nothing'}")
            return
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def check_html(page: str) -> Balanced:
    parser = Balanced()
    parser.feed(page)
    parser.close()
    assert page.startswith("<!DOCTYPE html>")
    assert parser.problems == [] and parser.stack == []
    return parser


def _desktop_session(folder: Path) -> Path:
    path = folder / "s.jsonl"
    ts = 1_700_000_000_000
    usage = {"input": 40, "output": 30, "cacheRead": 1000, "cacheWrite": 60, "cost": {"total": 0.29}}
    rows: list[dict[str, Any]] = [
        system_row("s1", {"guidance": "SECRET-SECTION"}),
        user_row("u1", f"Fix it {HOSTILE}"),
        {
            "type": "assistant",
            "id": "a1",
            "ts": ts + 1,
            "route": {
                "provider": "anthropic",
                "model": "claude-opus-5-5",
                "api": "anthropic-messages",
                "baseUrl": "https://api.anthropic.com",
            },
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Reading the file."},
                    {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "m.py"}},
                ],
                "api": "anthropic-messages",
                "provider": "anthropic",
                "model": "claude-opus-5-5",
                "usage": usage,
                "stopReason": "toolUse",
                "timestamp": ts + 1,
            },
        },
        tool_row("r1", "read", "def f():\n    return 1  # RESULT-LINE\n"),
    ]
    with JournalWriter.create(path, cwd="/w", app_version="test") as writer:
        writer.append(rows)
    (folder / "s.jsonl.lock").unlink(missing_ok=True)
    return path


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir()}


def test_desktop_session_as_markdown_and_html(tmp_path: Path) -> None:
    path = _desktop_session(tmp_path)
    before = _snapshot(tmp_path)

    md = run_main("export", str(path))
    assert md.code == 0, md.stderr
    assert "## You" in md.stdout and "Fix it" in md.stdout and "Reading the file." in md.stdout
    assert "<details><summary>Tool call: read m.py</summary>" in md.stdout
    assert (
        "<details><summary>Tool result: read · 3 lines</summary>" in md.stdout and "RESULT-LINE" in md.stdout
    )
    # Input is every prompt token, with cached and uncached beside it; the total row sums them.
    assert "1,100 input tokens (1,000 cached, 100 uncached) · 30 output · $0.29" in md.stdout
    assert "| **total** | 1 requests | 1,100 | 1,000 | 100 | 30 | $0.29 |" in md.stdout
    assert "SECRET-SECTION" not in md.stdout
    assert "SECRET-SECTION" in run_main("export", str(path), "--system").stdout

    page = run_main("export", str(path), "--format", "html")
    assert page.code == 0, page.stderr
    parsed = check_html(page.stdout)
    assert "<script>" not in page.stdout and "&lt;script&gt;" in page.stdout
    assert HOSTILE in "".join(parsed.text)  # shown as text, whole
    assert parsed.tags.count("details") == 2 and "RESULT-LINE" in page.stdout
    assert "SECRET-SECTION" not in page.stdout
    assert _snapshot(tmp_path) == before  # reading only: nothing written beside the session


@pytest.mark.parametrize(
    ("fixture", "words"),
    [
        ("pi_sessions/v3_branches.jsonl", "pi-coding-agent session"),
        ("claude_code/basic.jsonl", "Claude Code transcript"),
        ("codex/rollout-2026-10-06T10-00-00-0199b1c2-7d4e-7a10-9c3f-2e5d8a6b4f01.jsonl", "Codex CLI session"),
    ],
)
def test_foreign_sessions_export_their_current_branch(tmp_path: Path, fixture: str, words: str) -> None:
    source = tmp_path / "in.jsonl"
    shutil.copyfile(FIXTURES / fixture, source)
    before = _snapshot(tmp_path)
    for fmt in ("md", "html"):
        run = run_main("export", str(source), "--format", fmt)
        assert run.code == 0, run.stderr
        assert words in run.stdout and "Tool call:" in run.stdout
        if fmt == "html":
            check_html(run.stdout)
    plain = run_main("export", str(source)).stdout
    if fixture.startswith("claude_code"):
        # The reminder Claude Code put inside the user's message is a system row of its own.
        assert "<system-reminder>" not in plain
        assert "system-reminder" in run_main("export", str(source), "--system").stdout
    assert _snapshot(tmp_path) == before


def test_output_file_and_refusals(tmp_path: Path) -> None:
    path = _desktop_session(tmp_path)
    out = tmp_path / "out" / "page.html"
    out.parent.mkdir()
    run = run_main("export", str(path), "--format", "html", "-o", str(out))
    assert run.code == 0 and run.stdout == ""
    check_html(out.read_text(encoding="utf-8"))

    session_bytes = path.read_bytes()
    same = run_main("export", str(path), "-o", str(path))
    assert same.code == 2 and "replace the session itself" in same.stderr
    assert path.read_bytes() == session_bytes

    (tmp_path / "notes.txt").write_text("hello\n")
    wrong = run_main("export", str(tmp_path / "notes.txt"))
    assert wrong.code == 2 and len(wrong.err_lines) == 1 and "notes.txt" in wrong.stderr
    missing = run_main("export", str(tmp_path / "none.jsonl"))
    assert missing.code == 2 and "no such session file" in missing.stderr
