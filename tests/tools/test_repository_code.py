"""Nothing from a repository runs without the user's consent (design A11).

Real processes: a repository ships a ``server.py`` and a ``check.sh`` that each write a marker
file the moment they run. The user's settings follow the documented example (``"args":
["server.py"]``, a hook ``./check.sh``); a repository's own ``.pi/settings.json`` defines a
server. Looking (``status``, ``payload``) runs nothing; relative paths resolve beside the
settings file that names them; a repository's definition runs only after consent, which is
remembered per repository and exact command.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.cli.helpers import EMULATOR_MODEL, run_process

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX shell hooks")

MARKER_SCRIPT = """import pathlib, sys
pathlib.Path(sys.argv[0]).with_name("{name}").write_text("ran", encoding="utf-8")
"""


def _repository(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "server.py").write_text(MARKER_SCRIPT.format(name="SERVER-RAN"), encoding="utf-8")
    check = repo / "check.sh"
    check.write_text('#!/bin/sh\ntouch "$(dirname "$0")/HOOK-RAN"\n', encoding="utf-8")
    check.chmod(0o755)
    return repo


def _user_settings(data: Path) -> None:
    """The documented example, as a user would paste it into their own settings."""
    data.mkdir(parents=True, exist_ok=True)
    (data / "settings.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "files": {"command": sys.executable, "args": ["server.py"], "startupTimeout": 5}
                },
                "hooks": {"PreToolUse": [{"matcher": "bash", "hooks": [{"command": "./check.sh"}]}]},
            }
        ),
        encoding="utf-8",
    )


def _project_settings(repo: Path, script: str = "server.py", extension: bool = False) -> None:
    folder = repo / ".pi"
    folder.mkdir(exist_ok=True)
    (folder / script).write_text(MARKER_SCRIPT.format(name="PROJECT-SERVER-RAN"), encoding="utf-8")
    settings: dict[str, object] = {
        "mcpServers": {"repo": {"command": sys.executable, "args": [script], "startupTimeout": 5}}
    }
    if extension:  # imported on load: it would write its marker then
        (folder / "ext.py").write_text(
            'import pathlib\npathlib.Path(__file__).with_name("EXTENSION-RAN").write_text("ran")\n'
            "def register(api):\n    pass\n",
            encoding="utf-8",
        )
        settings["extensions"] = ["ext.py"]
    (folder / "settings.json").write_text(json.dumps(settings), encoding="utf-8")


def _prompt(repo: Path, data: Path, *extra: str, text: str = "hello") -> tuple[int, str]:
    session = data.parent / "s.jsonl"
    run = run_process(
        "prompt", str(session), "--model", EMULATOR_MODEL, *extra, text,
        cwd=repo, env={"PI_DESKTOP_DATA_DIR": str(data)},
    )  # fmt: skip
    return run.code, run.stderr


def test_status_and_payload_in_a_repository_start_nothing(tmp_path: Path) -> None:
    repo = _repository(tmp_path)
    data = tmp_path / "data"
    _user_settings(data)
    neutral = tmp_path / "neutral"
    neutral.mkdir()
    session = str(tmp_path / "s.jsonl")
    env = {"PI_DESKTOP_DATA_DIR": str(data)}
    made = run_process(
        "prompt", session, "--model", EMULATOR_MODEL, "--workspace", str(repo), "hi", cwd=neutral, env=env
    )
    assert made.code == 0, made.stderr
    _project_settings(repo, extension=True)

    status = run_process("status", session, "--json", cwd=repo, env=env)
    payload = run_process("payload", session, cwd=repo, env=env)

    assert status.code == 0 and payload.code == 0, (status.stderr, payload.stderr)
    assert not (repo / "SERVER-RAN").exists()
    assert not (repo / ".pi" / "PROJECT-SERVER-RAN").exists()
    assert not (repo / ".pi" / "EXTENSION-RAN").exists()
    listed = {(c["kind"], c["name"]): c for c in json.loads(status.stdout)["commands"]}
    assert listed[("mcp", "files")]["state"] == "not started"
    assert listed[("mcp", "files")]["source"] == "user"
    assert listed[("mcp", "repo")]["state"] == "not started: needs consent"
    assert listed[("mcp", "repo")]["source"] == "project"
    assert listed[("extension", "ext.py")]["state"] == "not started: needs consent"
    assert listed[("hook", "bash")]["command"] == f"./check.sh  (in {data})"
    assert not (data / "trust.json").exists()  # looking grants and records nothing


def test_the_documented_server_and_hook_resolve_beside_the_settings_not_in_the_repository(
    tmp_path: Path,
) -> None:
    repo = _repository(tmp_path)
    data = tmp_path / "data"
    _user_settings(data)
    # The user's own check.sh beside their settings: that is the one the hook runs.
    (data / "check.sh").write_text('#!/bin/sh\ntouch "$(dirname "$0")/HOOK-RAN"\n', encoding="utf-8")
    (data / "check.sh").chmod(0o755)

    code, stderr = _prompt(repo, data, "--yes", text='Go. [[tool:bash {"command": "true"}]]')

    assert code == 0, stderr
    assert not (repo / "SERVER-RAN").exists()
    assert not (repo / "HOOK-RAN").exists()
    assert (data / "HOOK-RAN").exists()


def test_a_repository_server_runs_only_with_consent_and_asks_again_when_it_changes(tmp_path: Path) -> None:
    repo = _repository(tmp_path)
    data = tmp_path / "data"
    data.mkdir()
    _project_settings(repo)
    marker = repo / ".pi" / "PROJECT-SERVER-RAN"

    code, stderr = _prompt(repo, data)
    assert code == 0, stderr
    assert not marker.exists()
    refusal = [line for line in stderr.splitlines() if "consent" in line]
    assert len(refusal) == 1 and "mcp repo" in refusal[0] and "--trust-project" in refusal[0]

    code, stderr = _prompt(repo, data, "--trust-project")
    assert code == 0, stderr
    assert marker.exists() and f"{sys.executable} server.py" in stderr
    marker.unlink()

    code, stderr = _prompt(repo, data)  # remembered for this repository and command
    assert code == 0, stderr
    assert marker.exists()
    marker.unlink()

    _project_settings(repo, script="other.py")  # a changed command is asked about again
    code, stderr = _prompt(repo, data)
    assert code == 0, stderr
    assert not marker.exists() and "consent" in stderr


def test_a_broken_repository_settings_file_is_a_note_not_a_failure(tmp_path: Path) -> None:
    repo = _repository(tmp_path)
    data = tmp_path / "data"
    data.mkdir()
    (repo / ".pi").mkdir()
    (repo / ".pi" / "settings.json").write_text(
        '{"mcpServers": {"bad name!": {"command": "x"}}}', encoding="utf-8"
    )

    code, stderr = _prompt(repo, data)

    assert code == 0, stderr
    assert "project settings not used" in stderr and "Traceback" not in stderr
