"""Secrets stay out of the journal (design A9): canary keys in the environment and in the keyring,
printed by real ``bash`` commands over a real turn, appear nowhere in the data dir, the journal or
any request body the emulator received."""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any

import pytest

from desktop.emulator import Emulator
from desktop.host import accounts
from desktop.host.accounts import keyring_username
from desktop.host.permissions import headless_bridge
from desktop.host.redaction import redact_named
from desktop.host.settings import Settings
from desktop.pi.routes import emulator_route
from desktop.session.assembly import SessionConfig, open_session
from tests.keyrings import MemoryKeyring
from tests.tools.conftest import text_of

ENV_CANARY = "envcanary" + secrets.token_hex(12)
OPENAI_CANARY = "oaicanary" + secrets.token_hex(12)
KEYRING_CANARY = "ringcanary" + secrets.token_hex(12)
CANARIES = (ENV_CANARY, OPENAI_CANARY, KEYRING_CANARY)


@pytest.fixture
def canaries(monkeypatch: pytest.MonkeyPatch, memory_keyring: MemoryKeyring) -> MemoryKeyring:
    monkeypatch.setenv("ANTHROPIC_API_KEY", ENV_CANARY)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_CANARY)
    memory_keyring.set_password(accounts.SERVICE, keyring_username("anthropic"), KEYRING_CANARY)
    monkeypatch.setattr(accounts, "_read_from_keyring", {})
    return memory_keyring


def bash(command: str) -> str:
    return f"[[tool:bash {json.dumps({'command': command})}]]"


def run_commands(tmp_path: Path, data: Path, *, inherit: bool) -> tuple[list[dict[str, Any]], list[bytes]]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "notes.txt").write_text(f"a={ENV_CANARY}\nb={KEYRING_CANARY}\nc={OPENAI_CANARY}\n")
    settings = Settings.model_validate(
        {"permissions": {"mode": "full-access"}, "tools": {"bash": {"inheritCredentials": inherit}}}
    )
    commands = [
        "env",
        "printenv ANTHROPIC_API_KEY OPENAI_API_KEY; echo done",
        "cat notes.txt",
        # more than the 50 KB output limit: the full output spills to a file in the data dir
        "awk '{for (i = 0; i < 4000; i++) print}' notes.txt",
    ]
    with Emulator() as emu:
        config = SessionConfig(
            route=emulator_route("anthropic/claude-opus-5-5", emu.url, emulated=True),
            workspace=workspace,
            settings=settings,
            user_skills=tmp_path / "none",
        )
        path = data / "sessions" / "s.jsonl"
        with open_session(path, config, bridge=headless_bridge(yes=True, no=False)) as session:
            for command in commands:
                session.runtime.run_turn(bash(command))
            results = [dict(r["message"]) for r in session.writer.rows if r["type"] == "toolResult"]
        bodies = [request.body for request in emu.requests]
    return results, bodies


def assert_nowhere(data: Path, bodies: list[bytes]) -> None:
    files = [p for p in data.rglob("*") if p.is_file()]
    assert any(p.suffix == ".jsonl" for p in files) and any(p.name.startswith("pi-bash-") for p in files)
    for canary in CANARIES:
        raw = canary.encode()
        for path in files:
            assert raw not in path.read_bytes(), f"{canary[:12]}... found in {path}"
        assert bodies and all(raw not in body for body in bodies), "a canary reached the provider"


def test_bash_runs_without_credential_variables_and_output_is_redacted(
    tmp_path: Path, _private_data_dir: Path, canaries: MemoryKeyring
) -> None:
    results, bodies = run_commands(tmp_path, _private_data_dir, inherit=False)
    env, printed, cat, long = results
    assert "ANTHROPIC_API_KEY" not in text_of(env) and "OPENAI_API_KEY" not in text_of(env)
    assert "PATH=" in text_of(env)  # the rest of the environment is there
    assert text_of(printed).strip() == "done"
    assert f"a=<redacted:ANTHROPIC_API_KEY>\nb=<redacted:keyring:{keyring_username('anthropic')}>" in text_of(
        cat
    )
    assert "c=<redacted:OPENAI_API_KEY>" in text_of(cat)
    spill = Path(long["details"]["fullOutputPath"])
    assert spill.read_text().count("<redacted:ANTHROPIC_API_KEY>") == 4000
    assert_nowhere(_private_data_dir, bodies)


def test_inherited_credentials_are_still_redacted(
    tmp_path: Path, _private_data_dir: Path, canaries: MemoryKeyring
) -> None:
    results, bodies = run_commands(tmp_path, _private_data_dir, inherit=True)
    env, printed = results[0], results[1]
    assert "ANTHROPIC_API_KEY=<redacted:ANTHROPIC_API_KEY>" in text_of(env)
    assert text_of(printed).split() == ["<redacted:ANTHROPIC_API_KEY>", "<redacted:OPENAI_API_KEY>", "done"]
    assert_nowhere(_private_data_dir, bodies)


def test_named_redaction_prefers_the_longest_value_and_skips_short_ones() -> None:
    named = redact_named(
        "k=abcdefgh-long tail abcdefgh x=abc", {"SHORT": "abcdefgh", "LONG": "abcdefgh-long", "T": "abc"}
    )
    assert named == "k=<redacted:LONG> tail <redacted:SHORT> x=abc"
