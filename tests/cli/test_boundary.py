"""One error boundary: one line, a documented exit code, and reading never writes (design D6)."""

from __future__ import annotations

import os
from pathlib import Path

import keyring
import pytest

from desktop.cli._args import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_LOCAL, EXIT_USAGE
from desktop.cli._credentials import missing_credential
from desktop.pi.routes import route_from_string
from tests.cli.helpers import (
    EMULATOR_MODEL,
    KEY_VARIABLES,
    assert_one_line_error,
    lines_of,
    make_session,
    run_main,
    run_process,
    snapshot,
    write_lines,
)

BAD_FILES = {
    "empty": b"",
    "nul-bytes": b"\x00\x00{\x00}\n",
    "random-bytes": bytes(range(256)) * 4,
    "not-json": b"hello world\n",
    "array-header": b"[1,2,3]\n",
    "object-without-header": b'{"type":"user","v":1,"id":"u1"}\n',
    "newer-header-version-zero": b'{"type":"session","v":0,"id":"x"}\n',
    "huge-line": b'{"type":"session","v":1,"id":"' + b"x" * 2_000_000 + b"\n",
}


def _bad(tmp_path: Path, kind: str) -> Path:
    target = tmp_path / "bad.jsonl"
    if kind in BAD_FILES:
        target.write_bytes(BAD_FILES[kind])
    elif kind == "directory":
        target.mkdir()
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind == "symlink-to-passwd":
        target.symlink_to("/etc/passwd")
    elif kind == "dangling-symlink":
        target.symlink_to(tmp_path / "nowhere.jsonl")
    elif kind == "device":
        target.symlink_to("/dev/zero")
    else:
        raise AssertionError(kind)
    return target


KINDS = [*BAD_FILES, "directory", "fifo", "symlink-to-passwd", "dangling-symlink", "device"]


@pytest.mark.parametrize("command", ["status", "payload"])
@pytest.mark.parametrize("kind", KINDS)
def test_read_only_commands_refuse_bad_files_in_one_line_and_write_nothing(
    tmp_path: Path, command: str, kind: str
) -> None:
    path = _bad(tmp_path, kind)
    before = snapshot(tmp_path)
    run = run_main(command, str(path), "--model", EMULATOR_MODEL, "--workspace", str(tmp_path))
    assert_one_line_error(run, command, EXIT_USAGE, "bad.jsonl")
    assert run.stdout == ""
    assert snapshot(tmp_path) == before


def test_a_fifo_is_refused_by_a_real_process_without_hanging(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "s.jsonl")
    for command, extra in (("status", []), ("payload", []), ("prompt", ["hi"])):
        run = run_process(command, "s.jsonl", "--model", EMULATOR_MODEL, *extra, cwd=tmp_path, timeout=60)
        assert_one_line_error(run, command, EXIT_USAGE, "s.jsonl is a FIFO")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]


@pytest.mark.parametrize("command", ["status", "payload", "compact"])
def test_a_missing_file_is_named_and_nothing_is_created(tmp_path: Path, command: str) -> None:
    path = tmp_path / "typo.jsonl"
    run = run_main(command, str(path), "--model", EMULATOR_MODEL, "--workspace", str(tmp_path))
    assert_one_line_error(run, command, EXIT_USAGE, f"no such session file: {path}")
    assert list(tmp_path.iterdir()) == []


def test_an_unreadable_file_is_a_local_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = make_session(tmp_path)
    real_open = os.open

    def refuse(target: object, flags: int, *args: object) -> int:
        if Path(str(target)) == path:  # what chmod 000 does for anyone but root
            raise PermissionError(13, "Permission denied", str(target))
        return real_open(target, flags, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", refuse)
    run = run_main("status", str(path), "--workspace", str(tmp_path))
    assert_one_line_error(run, "status", EXIT_LOCAL, f"cannot read {path}: permission denied")


def test_an_unknown_emulator_route_creates_nothing(tmp_path: Path) -> None:
    run = run_process("prompt", "s.jsonl", "--model", "emulator/foo/bar", "hi", cwd=tmp_path)
    assert_one_line_error(run, "prompt", EXIT_USAGE, "unknown model foo/bar")
    assert list(tmp_path.iterdir()) == []


def test_prompt_creates_a_session_only_in_an_existing_folder_and_says_so(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such" / "s.jsonl"
    run = run_main("prompt", str(missing), "--model", EMULATOR_MODEL, "--workspace", str(tmp_path), "hi")
    assert_one_line_error(run, "prompt", EXIT_USAGE, f"no such folder for a new session: {missing.parent}")
    assert list(tmp_path.iterdir()) == []

    path = tmp_path / "s.jsonl"
    run = run_main("prompt", str(path), "--model", EMULATOR_MODEL, "--workspace", str(tmp_path), "hi")
    assert run.code == 0, run.stderr
    assert run.err_lines[0] == f"pi-desktop prompt: created a new session {path}"
    again = run_main("prompt", str(path), "--model", EMULATOR_MODEL, "--workspace", str(tmp_path), "hi")
    assert again.code == 0 and "created" not in again.stderr


def test_a_route_without_a_key_names_the_key_and_where_to_put_it(tmp_path: Path) -> None:
    run = run_process("prompt", "s.jsonl", "--model", "anthropic/claude-opus-5-5", "hi", cwd=tmp_path)
    assert_one_line_error(
        run, "prompt", EXIT_USAGE, "$ANTHROPIC_API_KEY", "entry 'anthropic/default'", "service 'pi-desktop'"
    )
    assert list(tmp_path.iterdir()) == []


def test_a_route_no_stream_reader_speaks_is_refused_before_anything_is_created(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pi-messages route (the Radius gateway) can be previewed but not sent: refuse it up front
    (design D6) instead of creating a session and failing inside the turn."""
    monkeypatch.setenv("RADIUS_API_KEY", "rk-test")  # the key is there; the API is what is missing
    path = tmp_path / "s.jsonl"
    run = run_main("prompt", str(path), "--model", "radius/cheap", "--workspace", str(tmp_path), "hi")
    assert_one_line_error(run, "prompt", EXIT_USAGE, "radius/cheap speaks pi-messages", "openai-responses")
    assert list(tmp_path.iterdir()) == []


def test_a_key_in_the_environment_passes_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    route = route_from_string("deepseek/deepseek-flash")
    assert missing_credential(route) is not None
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-test")
    assert missing_credential(route) is None


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["status"], "the following arguments are required: session"),
        (["--bogus"], "unrecognized arguments: --bogus"),
        (["prompt", "s.jsonl", "hi", "--mode", "wild"], "invalid choice: 'wild'"),
        (["prompt", "s.jsonl", "hi", "--yes", "--no", "--model", EMULATOR_MODEL], "contradict"),
    ],
)
def test_usage_errors_are_one_line(tmp_path: Path, argv: list[str], needle: str) -> None:
    run = run_main(*argv)
    assert run.code == EXIT_USAGE
    assert len(run.err_lines) == 1 and needle in run.stderr, run.stderr
    assert list(tmp_path.iterdir()) == []


def test_an_unexpected_error_is_one_line_and_the_traceback_goes_to_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, _private_data_dir: Path
) -> None:
    path = make_session(tmp_path)

    def broken(session: object) -> dict[str, object]:
        raise KeyError("name")

    monkeypatch.setattr("desktop.cli.status.collect", broken)
    run = run_main("status", str(path), "--workspace", str(tmp_path))
    assert_one_line_error(
        run, "status", EXIT_INTERNAL, "internal error (KeyError: 'name')", "desktop/cli/status.py:"
    )
    log = _private_data_dir / "logs" / "pi-desktop.log"
    assert str(log) in run.stderr
    text = log.read_text()
    assert "Traceback (most recent call last)" in text and "KeyError: 'name'" in text


def test_ctrl_c_is_exit_130(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = make_session(tmp_path)

    def interrupted(session: object) -> dict[str, object]:
        raise KeyboardInterrupt

    monkeypatch.setattr("desktop.cli.status.collect", interrupted)
    run = run_main("status", str(path), "--workspace", str(tmp_path))
    assert_one_line_error(run, "status", EXIT_INTERRUPTED, "interrupted")


def test_set_aside_lines_are_reported_with_file_and_line_by_every_command(tmp_path: Path) -> None:
    path = make_session(tmp_path)
    lines = lines_of(path)
    duplicate = lines[2]
    garbage_at, duplicate_at = len(lines) + 1, len(lines) + 2
    write_lines(path, [*lines, b"garbage {\n", duplicate])
    for command in ("status", "payload"):
        run = run_main(command, str(path), "--workspace", str(tmp_path))
        assert run.code == 0, run.stderr
        assert any(f"({path}:{garbage_at})" in line and "not valid JSON" in line for line in run.err_lines)
        assert any(f"({path}:{duplicate_at})" in line and "appears again" in line for line in run.err_lines)
    run = run_main("prompt", str(path), "--workspace", str(tmp_path), "more")
    assert run.code == 0, run.stderr
    assert any(f"({path}:{garbage_at})" in line for line in run.err_lines)


def test_status_and_payload_leave_a_real_session_byte_for_byte_alone(tmp_path: Path) -> None:
    path = make_session(tmp_path, "s.jsonl", "one", "two")
    (tmp_path / "s.jsonl.lock").unlink(missing_ok=True)
    before = snapshot(tmp_path)
    for argv in (["status"], ["status", "--json"], ["payload"], ["payload", "--message", "x", "--headers"]):
        run = run_main(argv[0], str(path), *argv[1:], "--workspace", str(tmp_path))
        assert run.code == 0, run.stderr
    assert snapshot(tmp_path) == before


def test_a_missing_key_on_an_existing_session_locks_and_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = make_session(tmp_path)
    with path.open("ab") as handle:
        handle.write(b'{"type": "note", "v": 1, "id": "torn')  # a torn tail a writable open would move
    (tmp_path / "s.jsonl.lock").unlink(missing_ok=True)
    for name in KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(keyring, "get_password", lambda service, account: None)
    before = snapshot(tmp_path)
    run = run_main(
        "prompt", str(path), "--model", "anthropic/claude-opus-5-5", "--workspace", str(tmp_path), "hi"
    )
    assert_one_line_error(run, "prompt", EXIT_USAGE, "no API key for anthropic")
    assert snapshot(tmp_path) == before
