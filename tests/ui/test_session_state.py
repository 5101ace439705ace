"""A session keeps its own state (design G12), shown through the real window, the real worker
thread and one emulator over loopback sockets that outlives each window, as a provider does.

A session is made on route X, mode M and fallback F, used and closed; the window is then
started with other values for new sessions and reopens it three ways (the last session, as
``pi-desktop PATH`` does, and handed over by a second launch). Each time the toolbar shows
X/M/F, opening leaves the file byte for byte as it was, and the first request afterwards
starts with the bytes of the last request before quitting, which the emulator reads from its
cache. The command line continues on the same values.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson

from desktop.emulator import Emulator
from desktop.pi.cache_view import predict
from desktop.session.foreign.request import route_model
from desktop.ui.single_instance import InstanceServer
from tests.cli.helpers import REPO, run_main
from tests.ui.conftest import TURN_TIMEOUT, Harness

ROUTE_X = "emulator/openai/gpt-5.5"
MODE_M = "accept-edits"
FALLBACK_F = "attributed"
SEED = {"route": "emulator/deepseek/deepseek-flash", "mode": "ask", "fallback": "folded"}
PADDING = "the quick brown fox jumps over the lazy dog " * 150  # past the 1,024-token minimum


def _messages_end(body: bytes) -> int:
    """Where the last request's conversation ends: the byte before its closing ``]``."""
    data = orjson.loads(body)
    key = "input" if "input" in data else "messages"
    start = body.index(f'"{key}":['.encode())
    depth, index = 0, start + len(key) + 4
    while True:  # walk to the array's closing bracket, skipping strings
        char = body[index : index + 1]
        if char == b'"':
            index += 1
            while body[index : index + 1] != b'"':
                index += 2 if body[index : index + 1] == b"\\" else 1
        elif char in b"[{":
            depth += 1
        elif char in b"]}":
            if depth == 0:
                return index
            depth -= 1
        index += 1


def _continues(before: bytes, after: bytes) -> None:
    end = _messages_end(before)
    assert after[:end] == before[:end], "the request after reopening does not start with the last one"


def test_a_reopened_session_continues_on_its_own_route_mode_and_fallback(
    qtbot: Any, qsettings_isolated: Path, workspace: Path, emulator: Emulator
) -> None:
    first = Harness(qtbot, workspace, emulator=emulator)
    first.launch(route=ROUTE_X, mode=MODE_M, fallback=FALLBACK_F)
    path = Path(first.window.session.path)
    assert first.send("first " + PADDING).error is None
    last = emulator.requests[-1].body
    first.close()
    rows = [orjson.loads(line) for line in path.read_bytes().splitlines()[1:]]
    recorded = [r for r in rows if r.get("data", {}).get("kind") == "session-settings"]
    assert len(recorded) == 1 and recorded[0]["data"]["settings"]["route"] == ROUTE_X
    assert recorded[0]["data"]["by"] == "the window"
    snapshot = path.read_bytes()

    # Reopened as the last session by a window whose settings for new sessions differ.
    second = Harness(qtbot, workspace, emulator=emulator)
    second.launch(session=str(path), **SEED)
    assert second.toolbar() == (ROUTE_X, MODE_M, FALLBACK_F)
    second.settle()
    assert path.read_bytes() == snapshot  # looking writes nothing
    reads = len(emulator.requests)
    assert second.send("second").error is None
    after = emulator.requests[reads]
    _continues(last, after.body)
    answered = [r for r in second.worker.writer.rows if r["type"] == "assistant"]
    cached = answered[-1]["message"]["usage"]["cacheRead"]
    # The emulator read the whole earlier request from its cache: as much as the provider's rules
    # allow for that prefix (whole 128-token steps), the same figure the cache view predicts.
    expected = predict(route_model(ROUTE_X.split("/", 1)[1]), after.body, [last])
    assert cached == expected.cached > 0
    assert cached >= predict(route_model(ROUTE_X.split("/", 1)[1]), last, [last]).cached - 128
    last = emulator.requests[-1].body
    snapshot = path.read_bytes()

    # Handed over by a second launch to a window showing another session.
    second.client.new_session.emit(str(workspace))
    qtbot.waitUntil(lambda: Path(second.window.session.path) != path, timeout=TURN_TIMEOUT)
    second.wait_open()
    assert second.toolbar() == (SEED["route"], SEED["mode"], SEED["fallback"])  # a new one is seeded
    server = InstanceServer(f"pi-desktop-test-{os.getpid()}")
    assert server.listen()
    server.open_requested.connect(second.window.open_paths)
    code = f"import sys; from desktop.ui.single_instance import hand_over; sys.exit(0 if hand_over({server.name!r}, [{str(path)!r}]) else 1)"
    try:  # a second launch: another process, answered by this window's event loop
        launch = subprocess.Popen([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(REPO)})
        qtbot.waitUntil(lambda: launch.poll() is not None, timeout=TURN_TIMEOUT)
        assert launch.returncode == 0
        second.wait_open(path)
    finally:
        server.close()
    assert second.toolbar() == (ROUTE_X, MODE_M, FALLBACK_F)
    second.settle()
    assert path.read_bytes() == snapshot
    reads = len(emulator.requests)
    assert second.send("third").error is None
    _continues(last, emulator.requests[reads].body)
    last = emulator.requests[-1].body
    second.close()

    # The command line continues on the same values, without flags.
    shown = run_main("status", str(path), "--json")
    assert shown.code == 0, shown.stderr
    assert orjson.loads(shown.stdout)["route"].startswith("emulator/openai/gpt-5.5")
    reads = len(emulator.requests)
    ran = run_main("prompt", str(path), "--emulator", emulator.url, "--yes", "fourth")
    assert ran.code == 0, ran.stderr
    _continues(last, emulator.requests[reads].body)
    rows = [orjson.loads(line) for line in path.read_bytes().splitlines()[1:]]
    assert len([r for r in rows if r.get("data", {}).get("kind") == "session-settings"]) == 1
