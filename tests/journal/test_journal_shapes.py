"""No stored row can brick a session (design T9).

A real session (user turns, a tool call and its result, a skill, a compaction with its
checkpoint) is damaged one field at a time, then given to the real ``status``, ``payload`` and
``prompt`` commands. Each must finish normally with no traceback, name the file, the line and
the field on stderr, leave the file alone (the read commands) or append a complete turn that
reads back with the same single problem (``prompt``).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from desktop.host.journal import Diagnostic, JournalWriter, format_diagnostic, read_session
from tests.cli.helpers import EMULATOR_MODEL, lines_of, run_main, snapshot, write_lines

Row = dict[str, Any]
Edit = Callable[[Row], None]


@pytest.fixture(scope="module")
def base_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One real session, made once: three turns (one with a tool), a skill, a compaction, one more."""
    root = tmp_path_factory.mktemp("shapes-base")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PI_DESKTOP_DATA_DIR", str(root / "data"))
        workspace = root / "workspace"
        workspace.mkdir()
        (workspace / "notes.txt").write_text("the notes\n")
        path = root / "s.jsonl"

        def run(*args: str) -> None:
            done = run_main(*args[:1], str(path), "--workspace", str(workspace), *args[1:])
            assert done.code == 0, done.stderr

        run("prompt", "--model", EMULATOR_MODEL, "hello")
        run("prompt", '[[tool:read {"path": "notes.txt"}]]')
        skill = workspace / ".pi" / "skills" / "demo" / "SKILL.md"
        skill.parent.mkdir(parents=True)
        skill.write_text("---\nname: demo\ndescription: Use for demos.\n---\n\nSteps.\n")
        # A long answer puts the context past the retained tail, so there is something to compact.
        run("prompt", "after a skill appeared [[words:16000]]")
        run("compact")
        run("prompt", "after compaction")
        session = read_session(path)
        assert session.diagnostics == [], "the app's own rows must all pass the shape checks"
        assert any(row.get("type") == "compaction" for row in session.rows), "the base must hold a compaction"
        yield path


def first_line(path: Path, wanted: Callable[[Row], bool]) -> int:
    """The 1-based line number of the first row ``wanted`` accepts."""
    for number, raw in enumerate(lines_of(path), start=1):
        row = orjson.loads(raw)
        if wanted(row):
            return number
    raise AssertionError("no such row in the base session")


def is_type(kind: str) -> Callable[[Row], bool]:
    return lambda row: row.get("type") == kind


def has_checkpoint_tools(row: Row) -> bool:
    return row.get("type") == "compaction" and bool(row["checkpoint"]["message"].get("toolsAdded"))


def has_tools_added(row: Row) -> bool:
    meta = row.get("modelSystem") or {}
    return row.get("type") == "system" and bool((meta.get("message") or {}).get("toolsAdded"))


def has_sections(row: Row) -> bool:
    meta = row.get("modelSystem") or {}
    return row.get("type") == "system" and bool((meta.get("message") or {}).get("sections"))


def has_tool_call(row: Row) -> bool:
    content = row.get("message", {}).get("content") if row.get("type") == "assistant" else None
    return isinstance(content, list) and any(block.get("type") == "toolCall" for block in content)


def rename(key: str, new: str) -> Callable[[dict[str, Any]], None]:
    def edit(obj: dict[str, Any]) -> None:
        obj[new] = obj.pop(key)

    return edit


def tool_call(row: Row) -> dict[str, Any]:
    return next(block for block in row["message"]["content"] if block["type"] == "toolCall")


#: name -> (which row, how it is damaged, the field the diagnostic must name)
CASES: dict[str, tuple[Callable[[Row], bool], Edit, str]] = {
    "checkpoint tool renamed key": (
        has_checkpoint_tools,
        lambda r: rename("name", "nom")(r["checkpoint"]["message"]["toolsAdded"][0]),
        "checkpoint.message.toolsAdded[0].name",
    ),
    "checkpoint tool without description": (
        has_checkpoint_tools,
        lambda r: r["checkpoint"]["message"]["toolsAdded"][0].pop("description"),
        "checkpoint.message.toolsAdded[0].description",
    ),
    "checkpoint tool parameters not an object": (
        has_checkpoint_tools,
        lambda r: r["checkpoint"]["message"]["toolsAdded"][0].update(parameters="{}"),
        "checkpoint.message.toolsAdded[0].parameters",
    ),
    "checkpoint sections a list": (
        is_type("compaction"),
        lambda r: r["checkpoint"]["message"].update(sections=["runtime"]),
        "checkpoint.message.sections",
    ),
    "checkpoint message without role": (
        is_type("compaction"),
        lambda r: r["checkpoint"]["message"].pop("role"),
        "checkpoint.message.role",
    ),
    "checkpoint activation not an object": (
        is_type("compaction"),
        lambda r: r["checkpoint"].update(activation="everything"),
        "checkpoint.activation",
    ),
    "compaction summary a number": (is_type("compaction"), lambda r: r.update(summary=3), "summary"),
    "compaction firstKeptId missing": (is_type("compaction"), lambda r: r.pop("firstKeptId"), "firstKeptId"),
    "system tool without name": (
        has_tools_added,
        lambda r: r["modelSystem"]["message"]["toolsAdded"][0].pop("name"),
        "modelSystem.message.toolsAdded[0].name",
    ),
    "system toolsRemoved not a list": (
        has_tools_added,
        lambda r: r["modelSystem"]["message"].update(toolsRemoved={"name": "read"}),
        "modelSystem.message.toolsRemoved",
    ),
    "system section a number": (
        has_sections,
        lambda r: r["modelSystem"]["message"]["sections"].update(runtime=7),
        "modelSystem.message.sections.runtime",
    ),
    "activation section not text": (
        has_sections,
        lambda r: r["modelSystem"]["message"]["sections"].update(tool_activation={"active": ["canary"]}),
        "modelSystem.message.sections.tool_activation",
    ),
    "system content missing": (
        has_sections,
        lambda r: r["modelSystem"]["message"].pop("content"),
        "modelSystem.message.content",
    ),
    "modelSystem version text": (has_sections, lambda r: r["modelSystem"].update(v="1"), "modelSystem.v"),
    "system anchor a list": (has_sections, lambda r: r.update(before=["x"]), "before"),
    "user content block without text": (
        is_type("user"),
        lambda r: r["message"].update(content=[{"type": "text"}]),
        "message.content[0].text",
    ),
    "assistant tool call arguments text": (
        has_tool_call,
        lambda r: tool_call(r).update(arguments="{}"),
        "message.content",
    ),
    "assistant usage text": (
        is_type("assistant"),
        lambda r: r["message"].update(usage="lots"),
        "message.usage",
    ),
    "assistant route missing": (is_type("assistant"), lambda r: r.pop("route"), "route"),
    "tool result content null": (
        is_type("toolResult"),
        lambda r: r["message"].update(content=None),
        "message.content",
    ),
    "tool result without toolName": (
        is_type("toolResult"),
        lambda r: r["message"].pop("toolName"),
        "message.toolName",
    ),
    "timestamp a list": (is_type("user"), lambda r: r.update(ts=[1]), "ts"),
    "note level a list": (is_type("note"), lambda r: r.update(level=["info"]), "level"),
}


def damaged_copy(base: Path, folder: Path, wanted: Callable[[Row], bool], edit: Edit) -> tuple[Path, int]:
    path = folder / "s.jsonl"
    shutil.copyfile(base, path)
    number = first_line(path, wanted)
    lines = lines_of(path)
    row = orjson.loads(lines[number - 1])
    edit(row)
    lines[number - 1] = orjson.dumps(row) + b"\n"
    write_lines(path, lines)
    return path, number


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_damaged_row_is_set_aside_and_every_command_still_works(
    base_session: Path, tmp_path: Path, case: str
) -> None:
    wanted, edit, field = CASES[case]
    path, number = damaged_copy(base_session, tmp_path, wanted, edit)
    before = snapshot(tmp_path)
    where = f"({path}:{number})"

    for command in ("status", "payload"):
        run = run_main(command, str(path), "--workspace", str(tmp_path))
        assert run.code == 0, (command, run.stderr)
        assert "Traceback" not in run.stderr and "internal error" not in run.stderr
        reported = [line for line in run.err_lines if where in line]
        assert reported and field in reported[0], (command, run.err_lines)
    assert snapshot(tmp_path) == before, "a read command changed the folder"

    [problem] = read_session(path).diagnostics
    assert problem.code == "bad-shape" and problem.line == number and problem.field is not None
    assert problem.field.startswith(field), problem.field
    assert format_diagnostic(problem).startswith(f"{path}:{number}: ")
    assert format_diagnostic(problem).endswith(f" ({problem.field})")

    rows_before = len(read_session(path).rows)
    run = run_main("prompt", str(path), "--workspace", str(tmp_path), "still usable?")
    assert run.code == 0, run.stderr
    assert "Traceback" not in run.stderr and any(where in line for line in run.err_lines)
    after = read_session(path)
    assert [d.line for d in after.diagnostics] == [number]  # the new rows are all whole and valid
    assert len(after.rows) > rows_before + 1  # the user row and the answer, at least
    assert after.rows[-1]["type"] == "assistant" and after.rows[-1]["message"]["stopReason"] == "stop"


def test_problem_lines_are_on_the_opened_session_for_the_window(base_session: Path, tmp_path: Path) -> None:
    """Garbage, a duplicate id, a newer row and a wrong shape in the middle of the file are all
    listed on ``OpenSession.journal_problems`` with their lines, for the window's banner."""
    from desktop.host.permissions import headless_bridge
    from desktop.pi.routes import emulator_route
    from desktop.session.assembly import SessionConfig, open_session

    path = tmp_path / "s.jsonl"
    lines = lines_of(base_session)
    at = first_line(base_session, is_type("user"))
    user_line = lines[at - 1]
    damaged = dict(orjson.loads(user_line), id="bad-shape-row", message={"role": "user"})
    newer = {"type": "user", "v": 9, "id": "from-the-future", "ts": 1, "message": {"shape": "new"}}
    extra = [b"garbage {\n", user_line, orjson.dumps(damaged) + b"\n", orjson.dumps(newer) + b"\n"]
    write_lines(path, [*lines[:at], *extra, *lines[at:]])
    config = SessionConfig(
        route=emulator_route("anthropic/claude-opus-5-5", "http://127.0.0.1:9"), workspace=tmp_path
    )
    with open_session(path, config, bridge=headless_bridge(yes=False, no=True), read_only=True) as session:
        problems = session.journal_problems
        assert isinstance(problems, list) and all(isinstance(p, Diagnostic) for p in problems)
        assert [(p.line, p.code) for p in problems] == [
            (at + 1, "not-json"),
            (at + 2, "duplicate-id"),
            (at + 3, "bad-shape"),
            (at + 4, "newer-row"),
        ]
        assert problems[2].field == "message.content"
        # the newer row is kept in the file but never given to the model as a message
        assert all(m.get("content") != {"shape": "new"} for m in session.runtime.view().messages)
    for argv in (
        ["payload", "--workspace", str(tmp_path)],
        ["whatif", "--routes", "deepseek/deepseek-flash"],
    ):
        run = run_main(argv[0], str(path), *argv[1:])
        assert run.code == 0, run.stderr
        for number in range(at + 1, at + 5):
            assert any(f"({path}:{number})" in line for line in run.err_lines), (
                argv[0],
                number,
                run.err_lines,
            )


def test_a_header_without_an_id_is_not_a_session_rather_than_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    JournalWriter.create(path, cwd="/p", app_version="t").close()
    header = orjson.loads(path.read_bytes())
    del header["id"]
    path.write_bytes(orjson.dumps(header) + b"\n")
    for command in ("status", "payload", "prompt"):
        run = run_main(
            command, str(path), "--workspace", str(tmp_path), *(["hi"] if command == "prompt" else [])
        )
        assert run.code == 2, (command, run.stderr)
        assert "internal error" not in run.stderr and f"({path}:1)" in run.err_lines[-1]
