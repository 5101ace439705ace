"""A network lost mid-turn leaves the session consistent, and the next send works (design W5).

The whole runtime turn runs against a loopback server, through the session's pooled client
and a real journal: the first answer breaks off after its first words (the connection is
dropped, or goes silent until the read timeout the settings give), the second is complete.
Afterwards the file, read back from disk, holds everything that was acknowledged, the partial
reply as an assistant row that says it was interrupted, and the second exchange.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from desktop.host.journal import JournalWriter
from desktop.host.permissions import headless_bridge
from desktop.host.settings import Settings
from desktop.pi.routes import Account, Route
from desktop.session.assembly import SessionConfig, open_session
from tests.wire.loopback import ANTHROPIC, After, Reply, ScriptedServer, Seen


class TwoAnswers:
    """The first request gets the answer's first three events and then ``after``; the rest
    get the whole answer."""

    def __init__(self, after: After) -> None:
        self.after = after
        self.lock = threading.Lock()
        self.count = 0

    def __call__(self, seen: Seen) -> Reply:
        with self.lock:
            self.count += 1
            first = self.count == 1
        return Reply(chunks=ANTHROPIC[:3], after=self.after) if first else Reply(chunks=ANTHROPIC)


@pytest.fixture
def data(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    yield Path(os.environ["PI_DESKTOP_DATA_DIR"])


def _turns(
    tmp_path: Path, data: Path, after: After, network: dict[str, Any]
) -> tuple[list[Any], list[dict[str, Any]], list[Seen]]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    path = data / "sessions" / "lost.jsonl"
    with ScriptedServer(respond=TwoAnswers(after)) as server:
        route = Route("anthropic", "claude-opus-5-5", account=Account.make(base_url=server.base_url))
        config = SessionConfig(
            route=route,
            workspace=workspace,
            settings=Settings.model_validate({"network": network}),
            user_skills=tmp_path / "none",
        )
        with open_session(path, config, bridge=headless_bridge(yes=True, no=False)) as session:
            results = [
                session.runtime.run_turn("first question"),
                session.runtime.run_turn("second question"),
            ]
        seen = list(server.seen)
    reader = JournalWriter.open(path, read_only=True)
    try:
        rows = [dict(row) for row in reader.rows]
    finally:
        reader.close()
    return results, rows, seen


@pytest.mark.parametrize(
    ("after", "network", "error"),
    [
        ("drop", {}, "was lost mid-stream"),
        ("hold", {"readTimeout": 0.5}, "did not respond within 0.5s (read timeout) mid-stream"),
    ],
    ids=["connection-dropped", "network-silent"],
)
def test_a_lost_network_keeps_the_session_consistent_and_the_next_send_works(
    tmp_path: Path, data: Path, after: After, network: dict[str, Any], error: str
) -> None:
    results, rows, seen = _turns(tmp_path, data, after, network)
    first, second = results
    assert first.stopped == "error" and error in (first.error or "")
    assert second.stopped == "stop", second.error

    talk = [row for row in rows if row["type"] in ("user", "assistant")]
    assert [row["type"] for row in talk] == ["user", "assistant", "user", "assistant"]
    interrupted = talk[1]["message"]
    assert interrupted["stopReason"] == "error" and error in interrupted["errorMessage"]
    assert [block.get("text") for block in interrupted["content"]] == ["Hello"]  # the partial reply
    assert talk[3]["message"]["stopReason"] == "stop"

    # Two requests, not three: the broken answer was not sent again behind the user's back.
    assert len(seen) == 2
    resent = orjson.loads(seen[1].body)
    said = orjson.dumps(resent["messages"]).decode()
    assert "first question" in said and "second question" in said  # nothing acknowledged is lost
    # The interrupted reply is not presented to the model as something it said (as in pi-ai).
    assert [m["role"] for m in resent["messages"] if m["role"] != "system"] == ["user", "user"]
