"""What the composer's text is: a message, a command or a mistake (design G8), and /compact's focus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop.session.commands import (
    COMMANDS,
    Command,
    Message,
    Problem,
    completions,
    help_text,
    match_route,
    parse,
)
from desktop.session.compaction import CompactionPlan, summary_request_context
from tests.cli.helpers import EMULATOR_MODEL, make_session, run_main


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("hello", Message("hello")),
        ("  see /etc/hosts", Message("  see /etc/hosts")),
        ("//etc/hosts", Message("/etc/hosts")),
        ("  //compact now", Message("/compact now")),
        ("/capability status", Command("capability")),
        ("/Capability STATUS", Command("capability")),
        ("/payload next", Command("payload")),
        ("/payload next fix the bug  ", Command("payload", "fix the bug")),
        ("/compact", Command("compact")),
        ("/compact keep the test names", Command("compact", "keep the test names")),
        ("/model openai/gpt-5.5", Command("model", "openai/gpt-5.5")),
        ("/model", Command("model", "")),  # lists the routes
        ("/mode read-only", Command("mode", "read-only")),
        ("/help", Command("help")),
        ("/forge payload next", Command("payload")),
        ("/forge capability status", Command("capability")),
    ],
)
def test_parse(text: str, parsed: object) -> None:
    assert parse(text) == parsed


@pytest.mark.parametrize(
    ("text", "starts"),
    [
        (
            "/frobnicate",
            "Unknown command /frobnicate. Known commands: /capability status, /payload next [draft],",
        ),
        ("/forge", "Unknown command /forge."),
        ("/forge launch", "Unknown command /launch."),
        ("/", "Unknown command /. Known commands:"),
        ("/capability", "Usage: /capability status"),
        ("/capability everything", "Usage: /capability status"),
        ("/payload previous", "Usage: /payload next [draft]"),
        ("/mode   ", "Usage: /mode NAME"),
        ("/help me", "Usage: /help"),
        ("/compact\nand a second line", "/compact is a one-line command"),
    ],
)
def test_mistakes_say_what_is_known(text: str, starts: str) -> None:
    parsed = parse(text)
    assert isinstance(parsed, Problem) and parsed.text.startswith(starts), parsed


def test_every_command_is_offered_and_helped() -> None:
    offered = completions()
    assert offered == ["/capability status", "/payload next", "/compact", "/model", "/mode", "/help"]
    for spec in COMMANDS:
        assert spec.usage in help_text()
        assert isinstance(
            parse(spec.usage.replace("[", "").replace("]", "").replace("PROVIDER/ID", "a/b")), Command
        )


def test_model_names_the_route_as_typed_or_its_offline_stand_in() -> None:
    keys = ["emulator/openai/gpt-5.5", "openai/gpt-5.5", "emulator/deepseek/deepseek-flash"]
    assert match_route("openai/gpt-5.5", keys) == "openai/gpt-5.5"
    assert match_route("emulator/openai/gpt-5.5", keys) == "emulator/openai/gpt-5.5"
    assert match_route("DeepSeek/deepseek-flash", keys) == "emulator/deepseek/deepseek-flash"
    assert match_route("google/gemini-2.5-flash", keys) is None


def _plan() -> CompactionPlan:
    message = {"role": "user", "content": "earlier work", "timestamp": 1}
    return CompactionPlan(
        summarized=[message],  # type: ignore[list-item]
        first_kept_index=1,
        first_kept_id="r2",
        previous_summary=None,
        checkpoint={"role": "system", "content": "", "timestamp": 1},  # type: ignore[typeddict-item]
        tokens_before=10,
    )


def test_compact_focus_goes_into_the_summary_request() -> None:
    plain = json.dumps(summary_request_context(_plan(), timestamp=1))
    focused = json.dumps(summary_request_context(_plan(), timestamp=1, focus=" the failing test "))
    assert "Additional focus" not in plain
    assert "Additional focus: the failing test" in focused


def test_the_compact_command_takes_a_focus(tmp_path: Path) -> None:
    """``pi-desktop compact --focus TEXT`` asks the model for that focus (seen by the emulator)."""
    from desktop.emulator import Emulator

    path = make_session(tmp_path, "s.jsonl", "hello", "more words here [[words:16000]]")
    with Emulator() as emulator:
        run = run_main(
            "compact",
            str(path),
            "--model",
            EMULATOR_MODEL,
            "--emulator",
            emulator.url,
            "--focus",
            "the parser",
        )
        assert run.code == 0, run.stderr
        sent = emulator.requests
    assert len(sent) == 1 and b"Additional focus: the parser" in sent[0].body
    assert json.loads(path.read_text().splitlines()[-1])["type"] == "compaction"
    assert "--focus TEXT" in run_main("compact", "--help").stdout
