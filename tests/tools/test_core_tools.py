"""The core tools on real files and real processes, run through the Host executor."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from desktop.host.skills import discover_skills
from desktop.host.tools import bash as bash_tool
from desktop.host.tools.catalog import CORE_TOOLS
from desktop.host.tools.executor import HostExecutor, ToolCallRequest
from desktop.host.tools.truncate import DEFAULT_MAX_BYTES, truncate_head, truncate_tail
from desktop.host.tools.types import SkillIndex
from tests.tools.conftest import SPECS, run_tool, text_of


def test_core_declarations_match_pi_names_and_required_fields() -> None:
    assert sorted(SPECS) == ["ToolSearch", "bash", "edit", "find", "grep", "ls", "read", "skill", "write"]
    assert SPECS["read"].parameters["required"] == ["path"]
    assert set(SPECS["grep"].parameters["properties"]) == {
        "pattern",
        "path",
        "glob",
        "ignoreCase",
        "literal",
        "context",
        "limit",
    }
    assert SPECS["edit"].parameters["properties"]["edits"]["items"]["required"] == ["oldText", "newText"]
    for spec in CORE_TOOLS:
        assert spec.declaration() == {
            "name": spec.name,
            "description": spec.description,
            "parameters": spec.parameters,
        }


def test_read_with_offset_limit_and_truncation(host: HostExecutor, workspace: Path) -> None:
    (workspace / "big.txt").write_text("\n".join(f"line {i}" for i in range(1, 3001)))
    out = run_tool(host, "read", path="big.txt")
    assert text_of(out).startswith("line 1\n") and "Use offset=2001 to continue." in text_of(out)
    part = run_tool(host, "read", path="big.txt", offset=10, limit=2)
    assert text_of(part) == "line 10\nline 11\n\n[2989 more lines in file. Use offset=12 to continue.]"
    assert run_tool(host, "read", path="missing.txt").is_error
    beyond = run_tool(host, "read", path="big.txt", offset=99999)
    assert beyond.is_error and "beyond end of file" in text_of(beyond)


def test_read_image_is_an_attachment(host: HostExecutor, workspace: Path) -> None:
    (workspace / "dot.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 20)
    out = run_tool(host, "read", path="dot.png")
    assert out.content[1]["type"] == "image" and out.content[1]["mimeType"] == "image/png"


def test_write_creates_parents_and_reports(host: HostExecutor, workspace: Path) -> None:
    out = run_tool(host, "write", path="a/b/c.txt", content="héllo")
    assert not out.is_error and text_of(out) == "Successfully wrote 5 bytes to a/b/c.txt"
    assert (workspace / "a/b/c.txt").read_text(encoding="utf-8") == "héllo"


def test_edit_exact_fuzzy_crlf_and_errors(host: HostExecutor, workspace: Path) -> None:
    target = workspace / "code.py"
    target.write_bytes(b"\xef\xbb\xbfdef f():\r\n    return \xe2\x80\x9cx\xe2\x80\x9d\r\n\r\nvalue = 1\r\n")
    out = run_tool(
        host,
        "edit",
        path="code.py",
        edits=[
            {"oldText": 'return "x"', "newText": 'return "y"'},
            {"oldText": "value = 1", "newText": "value = 2"},
        ],
    )
    assert not out.is_error, text_of(out)
    assert text_of(out) == "Successfully replaced 2 block(s) in code.py."
    data = target.read_bytes()
    assert (
        data.startswith(b"\xef\xbb\xbf")
        and b"\r\n" in data
        and b"value = 2" in data
        and b'return "y"' in data
    )
    assert "-value = 1" in out.details["diff"]  # type: ignore[index]

    before = target.read_bytes()
    missing = run_tool(host, "edit", path="code.py", edits=[{"oldText": "nope", "newText": "x"}])
    assert missing.is_error and "Could not find" in text_of(missing)
    (workspace / "dup.txt").write_text("a\na\n")
    dup = run_tool(host, "edit", path="dup.txt", edits=[{"oldText": "a", "newText": "b"}])
    assert dup.is_error and "Found 2 occurrences" in text_of(dup)
    assert target.read_bytes() == before


def test_edit_accepts_legacy_and_stringified_arguments(host: HostExecutor, workspace: Path) -> None:
    (workspace / "f.txt").write_text("one two")
    assert not run_tool(host, "edit", path="f.txt", oldText="one", newText="1").is_error
    assert not run_tool(host, "edit", path="f.txt", edits='[{"oldText": "two", "newText": "2"}]').is_error
    assert (workspace / "f.txt").read_text() == "1 2"


def test_bash_output_exit_code_and_cwd(host: HostExecutor, workspace: Path) -> None:
    out = run_tool(host, "bash", command="pwd; echo err >&2")
    assert not out.is_error and text_of(out) == f"{workspace}\nerr\n"
    failed = run_tool(host, "bash", command="echo partial; exit 7")
    assert failed.is_error and text_of(failed) == "partial\n\n\nCommand exited with code 7"


@pytest.mark.skipif(sys.platform == "win32", reason="process groups")
def test_bash_timeout_kills_the_whole_process_group(host: HostExecutor, workspace: Path) -> None:
    out = run_tool(host, "bash", command="(sleep 1; touch late.txt) & echo started; sleep 30", timeout=0.5)
    assert out.is_error and "Command timed out after 0.5 seconds" in text_of(out)
    assert "started" in text_of(out)
    time.sleep(1.5)  # the background child would have written late.txt by now had it survived
    assert not (workspace / "late.txt").exists()


def test_bash_background_child_holding_the_pipe_does_not_hang(host: HostExecutor) -> None:
    # Waiting on the pipe would hit the 10 s timeout and report an error instead of "done".
    out = run_tool(host, "bash", command="sleep 30 & echo done", timeout=10)
    assert not out.is_error and text_of(out).strip() == "done"


def test_bash_large_output_keeps_tail_and_spills_full_output(host: HostExecutor) -> None:
    out = run_tool(host, "bash", command="seq 1 30000")
    assert not out.is_error
    assert text_of(out).split("\n\n[")[0].rstrip().endswith("30000")
    details = out.details or {}
    full = Path(details["fullOutputPath"])
    assert full.read_text().splitlines()[0] == "1" and full.read_text().splitlines()[-1] == "30000"
    assert len(text_of(out).encode()) < DEFAULT_MAX_BYTES + 500


def test_bash_cancel(host: HostExecutor) -> None:
    import threading

    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    out = host.run(SPECS["bash"], ToolCallRequest("c", "bash", {"command": "sleep 30"}), cancel=cancel)
    assert out.is_error and "Command aborted" in text_of(out)


def test_ls_grep_find_respect_ignores(host: HostExecutor, workspace: Path) -> None:
    (workspace / ".gitignore").write_text("build/\n*.log\n!keep.log\n")
    (workspace / "src" / "pkg").mkdir(parents=True)
    (workspace / "src" / "pkg" / "mod.py").write_text("import os\nTOKEN = 'needle'\n")
    (workspace / "src" / "main.ts").write_text("const needle = 1;\n")
    (workspace / "build").mkdir()
    (workspace / "build" / "out.py").write_text("needle\n")
    (workspace / "debug.log").write_text("needle\n")
    (workspace / "keep.log").write_text("needle\n")
    (workspace / ".git").mkdir()
    (workspace / ".git" / "HEAD").write_text("needle\n")

    listing = text_of(run_tool(host, "ls")).splitlines()
    assert listing == [".git/", ".gitignore", "build/", "debug.log", "hello.txt", "keep.log", "src/"]

    found = text_of(run_tool(host, "grep", pattern="needle")).splitlines()
    assert found == [
        "keep.log:1: needle",
        "src/main.ts:1: const needle = 1;",
        "src/pkg/mod.py:2: TOKEN = 'needle'",
    ]
    only_py = text_of(run_tool(host, "grep", pattern="NEEDLE", ignoreCase=True, glob="*.py"))
    assert only_py == "src/pkg/mod.py:2: TOKEN = 'needle'"
    ctx = text_of(run_tool(host, "grep", pattern="TOKEN", context=1, path="src"))
    assert ctx == "pkg/mod.py-1- import os\npkg/mod.py:2: TOKEN = 'needle'"
    assert run_tool(host, "grep", pattern="(", literal=False).is_error
    assert text_of(run_tool(host, "grep", pattern="zzz_absent")) == "No matches found"

    assert text_of(run_tool(host, "find", pattern="*.py")) == "src/pkg/mod.py"
    assert text_of(run_tool(host, "find", pattern="src/**/*.{py,ts}")).splitlines() == [
        "src/main.ts",
        "src/pkg/mod.py",
    ]


def test_skill_loads_registered_bodies_only(host: HostExecutor, tmp_path: Path) -> None:
    skills = tmp_path / "skills" / "pdf-tools"
    skills.mkdir(parents=True)
    (skills / "SKILL.md").write_text(
        "---\nname: pdf-tools\ndescription: Work with PDFs\n---\n# PDF\nUse pdftotext.\n"
    )
    catalog = discover_skills([(tmp_path / "skills", "user")])
    host.skills = SkillIndex({skill.id: skill.path for skill in catalog.skills})
    out = run_tool(host, "skill", name="pdf-tools")
    assert not out.is_error and "Use pdftotext." in text_of(out) and str(skills) in text_of(out)
    unknown = run_tool(host, "skill", name="../../etc/passwd")
    assert unknown.is_error and "Unknown skill" in text_of(unknown) and "pdf-tools" in text_of(unknown)


def test_truncation_helpers() -> None:
    head = truncate_head("a\nb\nc", max_lines=2)
    assert (head.content, head.truncated_by, head.output_lines) == ("a\nb", "lines", 2)
    tail = truncate_tail("a\nb\nc", max_lines=2)
    assert (tail.content, tail.truncated_by) == ("b\nc", "lines")
    partial = truncate_tail("x" * 100, max_bytes=10)
    assert partial.content == "x" * 10 and partial.last_line_partial
    assert truncate_head("y" * 100, max_bytes=10).first_line_exceeds_limit


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX shell")
def test_shell_is_bash() -> None:
    assert os.path.basename(bash_tool.shell_argv("true")[0]) in ("bash", "sh")
