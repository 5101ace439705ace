"""The root, the home folder and system folders are never a workspace (design A10).

Real command-line processes: ``--workspace /`` (or running in the home folder) would confine the
file tools to everything the user can read, so each command refuses it in one line with exit 2
and writes nothing.
"""

from __future__ import annotations

import sys
from pathlib import Path, PurePosixPath, PureWindowsPath

import pytest

from desktop.host.workspace_choice import choose_workspace, refused_workspace
from tests.cli.helpers import EMULATOR_MODEL, assert_one_line_error, run_process, snapshot


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX folders")
@pytest.mark.parametrize("folder", ["/", "/etc", "/usr", "/proc", "HOME"])
def test_prompt_refuses_a_system_folder_as_its_workspace(tmp_path: Path, folder: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    data = tmp_path / "data"
    session = tmp_path / "s.jsonl"
    workspace = str(home) if folder == "HOME" else folder
    env = {"HOME": str(home), "PI_DESKTOP_DATA_DIR": str(data)}

    run = run_process(
        "prompt", str(session), "--model", EMULATOR_MODEL, "--workspace", workspace, "hello",
        cwd=tmp_path, env=env,
    )  # fmt: skip

    assert_one_line_error(run, "prompt", 2, "cannot be a workspace", "--workspace")
    assert not session.exists() and not data.exists()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX folders")
def test_status_run_in_the_home_folder_refuses_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    project = home / "project"
    project.mkdir(parents=True)
    session = project / "s.jsonl"
    made = run_process(
        "prompt", str(session), "--model", EMULATOR_MODEL, "hello", cwd=project, env={"HOME": str(home)}
    )
    assert made.code == 0, made.stderr
    before = snapshot(home)

    run = run_process("status", str(session), cwd=home, env={"HOME": str(home)})

    assert_one_line_error(run, "status", 2, "is your home folder")
    assert snapshot(home) == before


def test_the_rule_on_windows_folders() -> None:
    home = PureWindowsPath("C:/Users/me")
    assert refused_workspace(PureWindowsPath("C:/"), home) is not None
    assert refused_workspace(PureWindowsPath("C:/Windows/System32"), home) is not None
    assert refused_workspace(PureWindowsPath("C:/Program Files"), home) is not None
    assert refused_workspace(PureWindowsPath("C:/Users"), home) is not None
    assert refused_workspace(home, home) is not None
    assert refused_workspace(PureWindowsPath("C:/Users/me/code/app"), home) is None
    assert refused_workspace(PureWindowsPath("D:/work/app"), home) is None


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX folders")
def test_a_recorded_folder_is_a_suggestion() -> None:
    home = Path(PurePosixPath("/home/me"))
    opened = home / "code" / "app"
    other = home / "code" / "other"
    assert choose_workspace(Path("/"), opened, set(), home).folder == opened
    assert choose_workspace(home, opened, set(), home).refused is not None
    assert choose_workspace(opened, opened, set(), home) == (opened, False, None, None)
    assert choose_workspace(other, opened, set(), home) == (opened, True, other, None)
    assert choose_workspace(other, opened, {other}, home) == (other, False, None, None)
    # Opened from home (a menu launch): nothing to fall back on without asking.
    assert choose_workspace(other, home, set(), home) == (None, True, other, None)
