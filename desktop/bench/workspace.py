"""The benchmark's workspace: files of varied size, skills, guidance, and an extension with
deferred tools whose results have a chosen, deterministic size."""

from __future__ import annotations

import json
from pathlib import Path

EXTENSION = '''
"""Deferred tools for the cache economics benchmark: deterministic results of chosen size."""


def _lines(prefix, count, width=72):
    out = []
    for i in range(count):
        line = f"{prefix} {i:04d} " + ("status=ok " if i % 7 else "status=FAIL ") * 6
        out.append(line[:width])
    return "\\n".join(out)


TOOLS = {
    "issue_search": ("Search the issue tracker by keywords; returns matching issue ids and titles.",
                     {"query": {"type": "string"}, "limit": {"type": "integer"}}, ["query"],
                     lambda a: _lines("ISSUE-" + a["query"].replace(" ", "-"), int(a.get("limit", 10)))),
    "issue_get": ("Fetch one issue with its description, comments and linked commits.",
                  {"id": {"type": "integer"}}, ["id"],
                  lambda a: f"Issue {a['id']}\\n" + _lines("comment", 24, 96)),
    "ci_runs": ("List recent CI runs of a branch with their status and duration.",
                {"branch": {"type": "string"}}, ["branch"],
                lambda a: _lines("run@" + a["branch"], 10)),
    "ci_log": ("Fetch the log of one CI run, optionally only the last N lines.",
               {"run": {"type": "integer"}, "lines": {"type": "integer"}}, ["run"],
               lambda a: _lines(f"[run {a['run']}]", int(a.get("lines", 50)), 110)),
    "metrics_query": ("Query a time series from the metrics store (PromQL-like expression).",
                      {"expr": {"type": "string"}, "points": {"type": "integer"}}, ["expr"],
                      lambda a: _lines(a["expr"], int(a.get("points", 30)), 48)),
    "deploy_status": ("Current deployment of an environment: version, time, health checks.",
                      {"env": {"type": "string", "enum": ["staging", "production"]}}, ["env"],
                      lambda a: f"{a['env']}: v2.4.1 healthy (3/3 checks)"),
    "release_notes": ("Draft release notes from merged pull requests since a tag.",
                      {"since": {"type": "string"}}, ["since"],
                      lambda a: _lines("PR", 30)),
    "docs_lookup": ("Look up a topic in the internal engineering handbook.",
                    {"topic": {"type": "string"}}, ["topic"],
                    lambda a: _lines("handbook:" + a["topic"], 15, 90)),
}


def register(api):
    for name, (description, properties, required, handler) in TOOLS.items():
        schema = {"type": "object", "properties": properties, "required": required}
        api.register_tool(name, description, schema, handler, read_only=True)
'''


def _text_file(title: str, lines: int, width: int) -> str:
    body = [f"# {title}"]
    for i in range(lines):
        body.append(f"line {i:04d}: " + ("lorem ipsum dolor sit amet " * 8)[: width - 11])
    return "\n".join(body) + "\n"


def _python_file(name: str, functions: int) -> str:
    out = [f'"""{name}: synthetic module for the benchmark."""', ""]
    for i in range(functions):
        out += [
            f"def step_{i:03d}(session, timeout=30):",
            f'    """Handle step {i} of the login flow; retries on session timeout."""',
            f"    value = session.get('k{i}', {i})",
            "    return value * 2 if value else None",
            "",
        ]
    return "\n".join(out)


def make_workspace(root: Path) -> tuple[Path, Path, Path]:
    """(workspace, user skills dir, extension file) with deterministic contents."""
    workspace = root / "ws"
    (workspace / "src").mkdir(parents=True)
    (workspace / "docs").mkdir()
    (workspace / "data").mkdir()
    (workspace / "README.md").write_text(_text_file("Project README", 30, 70), encoding="utf-8")
    (workspace / "docs" / "notes.md").write_text(_text_file("Design notes", 60, 80), encoding="utf-8")
    (workspace / "src" / "app.py").write_text(_python_file("app", 40), encoding="utf-8")
    (workspace / "src" / "big_module.py").write_text(_python_file("big_module", 160), encoding="utf-8")
    (workspace / "data" / "config.json").write_text(
        json.dumps({"timeout": 30, "retries": 3, "flags": {"new_login": False}}, indent=2), encoding="utf-8"
    )
    (workspace / "AGENTS.md").write_text(
        "# Guidance\n\n- Run the tests before proposing a change.\n- Keep diffs small.\n", encoding="utf-8"
    )
    write_skill(workspace, "code-review", "Review a change for correctness, tests and readability.")
    write_skill(workspace, "debugging", "Reproduce, bisect and explain a failure before fixing it.")
    user_skills = root / "user-skills"
    user_skills.mkdir()
    extension = root / "ext" / "tracker.py"
    extension.parent.mkdir()
    extension.write_text(EXTENSION, encoding="utf-8")
    return workspace, user_skills, extension


def write_skill(workspace: Path, name: str, description: str | None) -> None:
    path = workspace / ".pi" / "skills" / name / "SKILL.md"
    if description is None:
        path.unlink()
        path.parent.rmdir()
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"---\nname: {name}\ndescription: {description}\n---\n\nSteps for {name}.\n", encoding="utf-8"
    )
