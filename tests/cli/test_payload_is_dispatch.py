"""`pi-desktop payload SESSION --message TEXT` prints the body `prompt SESSION TEXT` then sends (design P4, P5).

Both commands run as real processes against one loopback emulator (``--emulator``), so the
body compared is the one the emulator received over a real socket. The session has a
pending system update (a skill added to the workspace after the last turn) and the preview
carries the draft, so the runtime's next request (system update anchored before the new user
message, request options, route) is exercised end to end for every API family.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from desktop.emulator import Emulator
from tests.cli.helpers import run_process

REPO = Path(__file__).resolve().parents[2]

#: One published route per API family the emulator speaks (openai-codex-responses needs a ChatGPT
#: sign-in token even to project a request, so it cannot run keyless on the emulator).
ROUTES = [
    "anthropic/claude-opus-5-5",  # anthropic-messages
    "openai/gpt-4.1",  # openai-responses
    "deepseek/deepseek-flash",  # openai-completions
    "mistral/mistral-medium-latest",  # mistral-conversations
    "google/gemini-3.5-flash",  # google-generative-ai
    "azure/gpt-4.1",  # azure-openai-responses
    "google-vertex/gemini-2.5-flash",  # google-vertex
    "amazon-bedrock/amazon.nova-lite-v1:0",  # bedrock-converse-stream
]


#: Vertex needs a project and a location to build its URL, as pi-ai reads them from the environment.
VERTEX_ENV = {"GOOGLE_CLOUD_PROJECT": "demo-project", "GOOGLE_CLOUD_LOCATION": "us-central1"}


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "PI_DESKTOP_OFFLINE": "1", **VERTEX_ENV}
    return subprocess.run(
        [sys.executable, "-m", "desktop", *args], cwd=cwd, env=env, capture_output=True, timeout=120
    )


def write_skill(workspace: Path, name: str) -> None:
    path = workspace / ".pi" / "skills" / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"---\nname: {name}\ndescription: Use {name} for tests.\n---\n\nSteps.\n", encoding="utf-8"
    )


@pytest.fixture(scope="module")
def emulator() -> object:
    with Emulator() as emu:
        yield emu


@pytest.mark.parametrize("route", ROUTES)
def test_payload_message_is_the_first_body_prompt_sends(
    route: str, emulator: Emulator, tmp_path: Path
) -> None:
    model = ["--model", f"emulator/{route}", "--emulator", emulator.url]
    first = cli("prompt", "s.jsonl", *model, "hello there", cwd=tmp_path)
    assert first.returncode == 0, first.stderr.decode()
    write_skill(tmp_path, "release-notes")  # a pending system update for the next turn
    draft = "and now the release notes [[words:5]]"

    preview = cli("payload", "s.jsonl", *model, "--message", draft, cwd=tmp_path)
    assert preview.returncode == 0, preview.stderr.decode()
    before = len(emulator.requests)
    turn = cli("prompt", "s.jsonl", *model, draft, cwd=tmp_path)
    assert turn.returncode == 0, turn.stderr.decode()

    sent = emulator.requests[before]
    assert preview.stdout == sent.body + b"\n"
    assert b"release-notes" in sent.body and draft.encode() in sent.body


def test_payload_headers_are_the_dispatch_headers_redacted(emulator: Emulator, tmp_path: Path) -> None:
    model = ["--model", "emulator/anthropic/claude-opus-5-5", "--emulator", emulator.url]
    assert cli("prompt", "s.jsonl", *model, "hi", cwd=tmp_path).returncode == 0
    preview = cli("payload", "s.jsonl", *model, "--message", "again", "--headers", cwd=tmp_path)
    head, body = preview.stdout.decode().split("\n\n", 1)
    before = len(emulator.requests)
    assert cli("prompt", "s.jsonl", *model, "again", cwd=tmp_path).returncode == 0
    sent = emulator.requests[before]
    request_line, *header_lines = head.splitlines()
    assert request_line == f"POST {emulator.url}{sent.path}" + (f"?{sent.query}" if sent.query else "")
    shown = dict(line.split(": ", 1) for line in header_lines)
    received = {k.lower(): v for k, v in sent.headers.items()}
    for name, value in shown.items():
        assert received.get(name.lower()) == value, name
    # The keyless emulator gets no credential header, and the preview shows none.
    assert "x-api-key" not in received and "x-api-key" not in shown
    assert body.encode() == sent.body + b"\n"


def test_payload_shows_the_credential_header_redacted_on_a_real_route(tmp_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    with Emulator() as emu:
        model = ["--model", "emulator/anthropic/claude-opus-5-5", "--emulator", emu.url]
        assert cli("prompt", "s.jsonl", *model, "hi", cwd=tmp_path).returncode == 0
    out = cli("payload", str(session), "--model", "anthropic/claude-opus-5-5", "--headers", cwd=tmp_path)
    assert out.returncode == 0, out.stderr.decode()
    head = out.stdout.decode().split("\n\n", 1)[0]
    assert head.startswith("POST https://api.anthropic.com/v1/messages")
    assert "x-api-key: <redacted>" in head.splitlines()


def test_payload_says_when_it_assumes_the_credential_kind(tmp_path: Path) -> None:
    """No credential anywhere: the body is built for the route's kind (an API key) and the
    command says it assumed it; with an OAuth token in the environment the body is built for
    that kind, silently (design P5)."""
    with Emulator() as emu:
        model = ["--model", "emulator/anthropic/claude-opus-5-5", "--emulator", emu.url]
        assert cli("prompt", "s.jsonl", *model, "hi", cwd=tmp_path).returncode == 0
    real = ["payload", "s.jsonl", "--model", "anthropic/claude-opus-5-5", "--headers"]
    assumed = run_process(*real, cwd=tmp_path)
    assert assumed.code == 0, assumed.stderr
    assert "assumes an API key" in assumed.stderr
    head = assumed.stdout.split("\n\n", 1)[0].splitlines()
    assert head[1].startswith("# note: no credential found") and "x-api-key: <redacted>" in head
    oauth = run_process(*real, cwd=tmp_path, env={"ANTHROPIC_OAUTH_TOKEN": "sk-ant-oat01-not-a-real-token"})
    assert oauth.code == 0, oauth.stderr
    assert "note" not in oauth.stderr and "not-a-real-token" not in oauth.stdout
    assert "anthropic-beta: " in oauth.stdout and "oauth-2025-04-20" in oauth.stdout
    assert '"You are Claude Code' in oauth.stdout.split("\n\n", 1)[1]
