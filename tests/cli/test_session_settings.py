"""The command line continues a session on its own settings (design G12): the route, fallback
and compaction thresholds a run set are what the next run uses without flags, each change is a
settings note, a permission mode in a file this installation did not write grants nothing,
looking writes nothing, and a corrupt cached catalog is reported by every command."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson

from desktop import __version__
from desktop.host.catalog_cache import cache_path
from desktop.host.journal import JournalWriter, new_row_id
from tests.cli.helpers import run_main

ROUTE = "emulator/google/gemini-2.5-flash"  # always folds by itself: the fallback decides


def _rows(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()[1:]]


def _settings_notes(path: Path) -> list[dict[str, Any]]:
    return [r["data"] for r in _rows(path) if r.get("data", {}).get("kind") == "session-settings"]


def _status(path: Path) -> dict[str, Any]:
    shown = run_main("status", str(path), "--json")
    assert shown.code == 0, shown.stderr
    return dict(json.loads(shown.stdout))


def test_flags_become_the_sessions_own_and_later_runs_keep_them(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    first = run_main(
        "prompt", str(path), "--model", ROUTE, "--fallback", "attributed", "--reserve-tokens", "9000",
        "--keep-recent-tokens", "700", "--yes", "hello",
    )  # fmt: skip
    assert first.code == 0, first.stderr
    notes = _settings_notes(path)
    assert len(notes) == 1 and notes[0]["by"] == "the command line"
    assert notes[0]["settings"]["compaction"] == {
        "enabled": True,
        "reserveTokens": 9000,
        "keepRecentTokens": 700,
    }

    status = _status(path)  # no flags: the session's route and fallback
    assert status["route"].startswith(ROUTE)
    assert status["capability"]["delivery"] == "attributed user updates"
    again = run_main("prompt", str(path), "--yes", "again " + "words " * 400)
    assert again.code == 0, again.stderr
    assert len(_settings_notes(path)) == 1  # nothing changed, nothing recorded
    route = [r for r in _rows(path) if r["type"] == "assistant"][-1]["route"]
    assert (route["provider"], route["model"]) == ("google", "gemini-2.5-flash")

    # compact without flags keeps 700 tokens, the session's own retained tail: with the default
    # 20,000 this short session would have "nothing to compact yet"
    compacted = run_main("compact", str(path))
    assert compacted.code == 0, compacted.stderr
    row = [r for r in _rows(path) if r["type"] == "compaction"][-1]
    assert row["rowsSummarized"] >= 1

    changed = run_main("prompt", str(path), "--fallback", "folded", "--yes", "fold now")
    assert changed.code == 0, changed.stderr
    last = _settings_notes(path)[-1]
    assert last["changed"] == ["fallback"] and "--fallback" in last["why"]
    assert _status(path)["capability"]["delivery"] == "folded"


def test_a_recorded_mode_written_elsewhere_grants_nothing(tmp_path: Path) -> None:
    """A copied or hand-written file may name full-access: without this installation's seal the
    session continues in the settings' mode, and says so."""
    path = tmp_path / "s.jsonl"
    settings = {
        "route": ROUTE,
        "account": "default",
        "endpoint": None,
        "mode": "full-access",
        "fallback": "attributed",
        "declarations": "auto",
        "compaction": {"enabled": True, "reserveTokens": 16384, "keepRecentTokens": 20000},
        "thinking": None,
    }
    note = {
        "type": "note",
        "v": 1,
        "id": new_row_id(),
        "ts": 1,
        "level": "info",
        "text": "Session settings",
        "data": {"kind": "session-settings", "v": 1, "settings": settings, "seal": "0" * 64},
    }
    with JournalWriter.create(path, cwd=str(tmp_path), app_version=__version__) as writer:
        writer.append([note])
    shown = run_main("status", str(path), "--json")
    assert shown.code == 0, shown.stderr
    status = json.loads(shown.stdout)
    assert status["activation"]["mode"] == "ask"
    assert "not written by this installation" in shown.stderr
    assert status["capability"]["delivery"] == "attributed user updates"  # the harmless rest is kept


def test_looking_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    assert run_main("prompt", str(path), "--model", ROUTE, "--yes", "hello").code == 0
    skill = tmp_path / ".pi" / "skills" / "lint" / "SKILL.md"  # a skill appears: an update is due
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: lint\ndescription: Run the linters\n---\nRun ruff.\n", encoding="utf-8")
    before = path.read_bytes()
    listing = sorted(p.name for p in tmp_path.iterdir())
    for args in (
        ("status", str(path), "--workspace", str(tmp_path)),
        ("payload", str(path), "--workspace", str(tmp_path)),
        ("compact", str(path), "--workspace", str(tmp_path)),  # nothing to compact yet
    ):
        ran = run_main(*args)
        assert ran.code == 0, (args, ran.stderr)
    chat = run_main("chat", str(path), "--workspace", str(tmp_path), stdin="")
    assert chat.code == 0, chat.stderr
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == listing
    shown = run_main("status", str(path), "--workspace", str(tmp_path))
    assert "a system update is pending" in shown.stdout


def test_a_corrupt_cached_catalog_is_reported_by_every_command(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    assert run_main("prompt", str(path), "--model", ROUTE, "--yes", "hello").code == 0
    cached = cache_path("pi")
    cached.parent.mkdir(parents=True, exist_ok=True)
    cached.write_text("{ not json", encoding="utf-8")
    for args, stdin in (
        (("status", str(path)), None),
        (("prompt", str(path), "--yes", "again"), None),
        (("chat", str(path), "--yes"), "one more\n"),
    ):
        ran = run_main(*args, stdin=stdin)
        assert ran.code == 0, ran.stderr
        assert "model catalog" in ran.stderr and str(cached) in ran.stderr, (args, ran.stderr)


def test_a_recorded_route_gone_from_the_catalog_asks_for_one(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    assert run_main("prompt", str(path), "--model", ROUTE, "--yes", "hello").code == 0
    data = path.read_bytes().replace(b"gemini-2.5-flash", b"gemini-gone-1")
    path.write_bytes(data)
    ran = run_main("prompt", str(path), "--yes", "again")
    assert ran.code == 2 and "gemini-gone-1 is no longer in the model catalog" in ran.stderr
    assert path.read_bytes() == data
