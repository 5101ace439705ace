"""pi files as found on machines: glued lines, bare tool names, terminal escapes (design X1).

The fixtures (tests/fixtures/pi_quirks/, README there) are written by hand in pi's format with
the shapes damaged files and other pi versions leave. Each opens, names what it set aside or
read differently with its line and field, and projects on every route.
"""

from __future__ import annotations

import json

from desktop.pi.transcript import current_tools
from desktop.session.foreign import TimelineRow, kinds, next_request
from tests.cli.helpers import run_main
from tests.foreign.support import FIXTURES
from tests.foreign.support import pi_session as session

QUIRKS = FIXTURES / "pi_quirks"
GLUED = QUIRKS / "v1_glued.jsonl"
STRING_TOOLS = QUIRKS / "v3_string_tools.jsonl"


def test_two_entries_glued_on_one_line_are_both_read() -> None:
    opened = session(GLUED)
    assert [(d.line, d.code) for d in opened.diagnostics] == [(5, "glued-objects")]
    assert [e["id"] for e in opened.entries] == ["L2", "L3", "L4", "L5", "L5.2", "L6", "L7"]
    roles = [m["role"] for m in opened.context().messages]
    assert roles == ["user", "assistant", "toolResult", "assistant", "user", "assistant"]
    assert len(opened.branches()) == 1


def test_bare_tool_names_in_tools_removed_mean_the_named_tools() -> None:
    opened = session(STRING_TOOLS)
    assert [(d.line, d.code, "toolsAdded[1]" in d.message) for d in opened.diagnostics] == [
        (6, "bad-field", True)
    ]
    context = opened.context()
    assert [t["name"] for t in current_tools(context.messages)] == ["read", "write"]
    diff = opened.system_diffs().get("s2")
    assert diff is not None and diff.tools_removed == ["bash"] and diff.tools_added == ["write"]
    for route in ("anthropic/claude-opus-5-5", "openai/gpt-5.5", "deepseek/deepseek-flash"):
        next_request(opened, route)  # projects (a bare name raised TypeError in the projection)
    tools = next_request(opened, "deepseek/deepseek-flash").body["tools"]
    assert [t["function"]["name"] for t in tools] == ["read", "write"]
    row = next(r for r in opened.timeline() if r.id == "s2")
    assert "tools removed: bash" in row.summary
    assert opened.entries[4]["message"]["toolsRemoved"] == [{"name": "bash"}]
    assert b'"toolsRemoved":["bash"]' in STRING_TOOLS.read_bytes()  # the file itself is only read


def test_terminal_escapes_and_escaped_newlines_read_as_written() -> None:
    rows: dict[str, TimelineRow] = {}
    for row in session(GLUED).timeline():
        rows.setdefault(row.kind, row)
    result = rows[kinds.TOOL].summary
    assert "\x1b" not in result and "[32m" not in result and "3 passed in 0.10s" in result
    assert result.endswith("\u2407")  # the bell as its control picture, not a box
    call = rows[kinds.ASSISTANT].summary
    assert "printf 'ok\\n'" in call and "\\\\n" not in call  # one backslash, as in the command
    assert rows[kinds.TOOL].message is not None
    assert "\x1b[32m" in rows[kinds.TOOL].message["content"][0]["text"]  # the model got the bytes


def test_whatif_reads_both_through_the_command() -> None:
    for path, requests in ((GLUED, 3), (STRING_TOOLS, 2)):
        done = run_main("whatif", str(path), "--routes", "openai/gpt-5.5", "--json")
        assert done.code == 0, done.stderr
        assert json.loads(done.stdout)["requests"] == requests
        assert f"{path.name}:" in done.stderr  # the line read differently is named
