"""Instruction files are read only as regular files inside the workspace root (design S7).

A repository is untrusted: its AGENTS.md goes into the system prompt, the session file and
every request without a tool call or an approval. Each attack here is a real repository on
disk (real symlinks, a real FIFO) read through the real command line.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from desktop.host.guidance import MAX_GUIDANCE_BYTES, scan_guidance, workspace_root
from tests.cli.helpers import EMULATOR_MODEL, run_process

SECRET = "sk-ant-guidance-canary-0123456789"


def _status_json(session: Path, workspace: Path, env: dict[str, str] | None = None) -> dict[str, object]:
    run = run_process("status", str(session), "--workspace", str(workspace), "--json", cwd=workspace, env=env)
    assert run.code == 0, run.stderr
    info = json.loads(run.stdout)
    assert isinstance(info, dict)
    return info


def _new_session(tmp_path: Path, workspace: Path, env: dict[str, str]) -> Path:
    session = tmp_path / "sessions" / "s.jsonl"
    session.parent.mkdir(exist_ok=True)
    run = run_process(
        "prompt", str(session), "--model", EMULATOR_MODEL, "--workspace", str(workspace), "hello",
        cwd=workspace, env=env,
    )  # fmt: skip
    assert run.code == 0, run.stderr
    return session


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc")
def test_a_link_to_proc_environ_never_puts_the_key_into_the_prompt(tmp_path: Path) -> None:
    workspace = tmp_path / "repo"
    workspace.mkdir()
    (workspace / "AGENTS.md").symlink_to("/proc/self/environ")
    env = {"ANTHROPIC_API_KEY": SECRET, "PI_DESKTOP_DATA_DIR": str(tmp_path / "data")}

    session = _new_session(tmp_path, workspace, env)
    payload = run_process(
        "payload",
        str(session),
        "--model",
        EMULATOR_MODEL,
        "--workspace",
        str(workspace),
        cwd=workspace,
        env=env,
    )
    info = _status_json(session, workspace, env)

    assert payload.code == 0, payload.stderr
    assert SECRET not in session.read_text(encoding="utf-8")
    assert SECRET not in payload.stdout
    guidance = info["guidance"]
    assert isinstance(guidance, dict) and guidance["read"] == []
    (skipped,) = guidance["skipped"]
    assert skipped["path"] == str(workspace / "AGENTS.md")
    assert "outside the workspace root" in skipped["reason"]


def test_a_link_out_of_the_repository_is_skipped_and_one_inside_is_read(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "credentials").write_text(f"aws_secret_access_key = {SECRET}\n", encoding="utf-8")
    repo = home / "project"
    (repo / "docs").mkdir(parents=True)
    (repo / ".git").mkdir()
    (repo / "docs" / "agents.md").write_text("Use tabs.", encoding="utf-8")
    (repo / "AGENTS.md").symlink_to("docs/agents.md")
    (repo / "CLAUDE.md").symlink_to("../.aws/credentials")

    scan = scan_guidance(repo, home=home)

    assert scan.files() == [(str(repo / "AGENTS.md"), "Use tabs.")]
    assert [s.path for s in scan.skipped] == [str(repo / "CLAUDE.md")]
    assert SECRET not in repr(scan)


def test_outside_home_the_walk_never_climbs_above_the_workspace(tmp_path: Path) -> None:
    """``/tmp/AGENTS.md`` written by anyone is not read for a workspace under ``/tmp``."""
    (tmp_path / "AGENTS.md").write_text("Planted above the workspace.", encoding="utf-8")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    session = _new_session(tmp_path, workspace, {"PI_DESKTOP_DATA_DIR": str(tmp_path / "data")})

    assert "Planted above the workspace." not in session.read_text(encoding="utf-8")
    assert _status_json(session, workspace)["guidance"] == {
        "root": str(workspace.resolve()),
        "read": [],
        "skipped": [],
    }


def test_the_walk_stops_at_the_git_root_and_never_reads_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    repo = home / "code" / "repo"
    sub = repo / "pkg"
    sub.mkdir(parents=True)
    (repo / ".git").mkdir()
    (home / "AGENTS.md").write_text("home", encoding="utf-8")
    (home / "code" / "AGENTS.md").write_text("above the repository", encoding="utf-8")
    (repo / "AGENTS.md").write_text("repo", encoding="utf-8")
    (sub / "CLAUDE.md").write_text("package", encoding="utf-8")

    assert workspace_root(sub, home=home) == repo
    assert [text for _path, text in scan_guidance(sub, home=home).files()] == ["repo", "package"]
    # No repository: the workspace alone, not the folders up to home.
    plain = home / "notes" / "week"
    plain.mkdir(parents=True)
    (home / "notes" / "AGENTS.md").write_text("above", encoding="utf-8")
    assert scan_guidance(plain, home=home).files() == []


def test_a_fifo_is_refused_without_waiting_and_listed(tmp_path: Path) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "AGENTS.md").symlink_to("fifo")
    os.mkfifo(tmp_path / "CLAUDE.md")

    scan = scan_guidance(tmp_path, home=tmp_path / "elsewhere")

    assert scan.read == ()
    assert {s.path: "not a regular file" in s.reason for s in scan.skipped} == {
        str(tmp_path / "AGENTS.md"): True,
        str(tmp_path / "CLAUDE.md"): True,
    }


def test_a_large_file_is_cut_and_says_so(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_bytes(b"x" * (MAX_GUIDANCE_BYTES * 4))

    (read,) = scan_guidance(tmp_path, home=tmp_path / "elsewhere").read

    assert read.cut and read.size == MAX_GUIDANCE_BYTES * 4
    assert read.text.count("x") == MAX_GUIDANCE_BYTES
    assert f"[cut: only the first {MAX_GUIDANCE_BYTES} of {MAX_GUIDANCE_BYTES * 4} bytes" in read.text
