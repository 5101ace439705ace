"""Turn-loop safety: secrets never land on disk or in previews, a failed write stops the
dispatch as a local preparation failure, and a cancelled stream is never presented as complete."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.emulator import Emulator
from desktop.emulator.faults import Fault
from desktop.host.logging_setup import configure_logging
from desktop.host.permissions import headless_bridge
from desktop.host.settings import Settings
from desktop.pi.routes import Account, Route
from desktop.session.assembly import SessionConfig, open_session
from tests.session.support import config, open_

REPO = Path(__file__).resolve().parents[2]
SECRET = "sk-ant-api03-" + "Q7xk2" * 12


@pytest.fixture
def emulator() -> Iterator[Emulator]:
    with Emulator(require_auth=True) as emu:
        yield emu


def test_a_real_key_reaches_the_provider_and_nowhere_else(
    tmp_path: Path, emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = Path(os.environ["PI_DESKTOP_DATA_DIR"])
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    configure_logging(data / "logs")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    # A keyed account whose endpoint is the emulator: an endpoint override, so no transport flags.
    route = Route(
        "anthropic", "claude-opus-5-5", account=Account.make(base_url=emulator.base_url("anthropic"))
    )
    config = SessionConfig(
        route=route, workspace=workspace, settings=Settings(), user_skills=tmp_path / "none"
    )
    previews: list[bytes] = []
    with open_session(
        data / "sessions" / "s.jsonl", config, bridge=headless_bridge(yes=True, no=False)
    ) as session:
        for text in ("hello", 'read [[tool:read {"path": "x"}]]', "bye"):
            request = session.runtime.next_request()
            previews.append(request.body_bytes + repr(request.redacted_headers()).encode())
            result = session.runtime.run_turn(text)
            assert result.stopped == "stop", result.error
        logging.getLogger("test").info("headers were %s", {"x-api-key": SECRET})
    assert emulator.requests
    for r in emulator.requests:
        assert r.headers.get("x-api-key") == SECRET, r.headers
    for blob in previews:
        assert SECRET.encode() not in blob
    scanned = 0
    for path in data.rglob("*"):
        if path.is_file():
            scanned += 1
            assert SECRET.encode() not in path.read_bytes(), path
    assert scanned >= 2  # the session file and the log at least


def test_failed_write_stops_dispatch_and_sending_again_duplicates_nothing(tmp_path: Path) -> None:
    """A real OS refusal (file-size limit) while persisting the user row: nothing is sent, and
    the failed batch is cut off the file, so the next send stores one user row."""
    script = textwrap.dedent(
        f"""
        import resource, signal, sys
        from pathlib import Path
        from desktop.emulator import Emulator
        from desktop.host.journal import LocalPreparationFailure
        from desktop.host.permissions import headless_bridge
        from desktop.host.settings import Settings
        from desktop.pi.routes import emulator_route
        from desktop.session.assembly import SessionConfig, open_session

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        tmp = Path({str(tmp_path)!r})
        (tmp / "ws").mkdir()
        with Emulator() as emu:
            cfg = SessionConfig(route=emulator_route("anthropic/claude-opus-5-5", emu.url, emulated=True),
                                workspace=tmp / "ws", settings=Settings(), user_skills=tmp / "none")
            with open_session(tmp / "s.jsonl", cfg, bridge=headless_bridge(yes=True, no=False)) as s:
                size = (tmp / "s.jsonl").stat().st_size
                soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
                resource.setrlimit(resource.RLIMIT_FSIZE, (size + 10, hard))
                try:
                    s.runtime.run_turn("this row cannot be written " * 20)
                except LocalPreparationFailure as error:
                    print("FAILURE", error.kind, error)
                assert not emu.requests, "a request left before its rows were durable"
                unsaved = [r["id"] for r in s.runtime.unsaved]
                assert (tmp / "s.jsonl").stat().st_size == size
                resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
                result = s.runtime.run_turn("now it works")
                users = [r["id"] for r in s.writer.rows if r["type"] == "user"]
                assert len(users) == 1 and users[0] not in unsaved, users
                print("STOP", result.stopped, len(emu.requests))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert ("FAILURE" in out.stdout and "Nothing was sent" in out.stdout) or "not sent" in out.stdout.lower()
    assert "STOP stop 1" in out.stdout


def test_cancel_mid_stream_leaves_an_aborted_row(tmp_path: Path) -> None:
    with Emulator() as emu, open_(tmp_path / "s.jsonl", config(emu, tmp_path / "ws")) as session:
        emu.inject(Fault("slow_stream", at_event=2, delay=0.3))
        cancel = threading.Event()
        started = threading.Event()

        def on_event(event: dict[str, object]) -> None:
            if event.get("type") == "stream":
                started.set()

        timer = threading.Thread(target=lambda: (started.wait(5), cancel.set()))
        timer.start()
        result = session.runtime.run_turn("a long answer [[words:200]]", on_event=on_event, cancel=cancel)
        timer.join()
        assert result.stopped == "aborted"
        last = session.writer.rows[-1]
        assert last["type"] == "assistant" and last["message"]["stopReason"] == "aborted"
        # The next request does not replay the aborted turn as if it were complete.
        body = session.runtime.next_request().body
        assert all(m["role"] != "assistant" for m in body["messages"])
