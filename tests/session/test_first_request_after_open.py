"""The first request after an open reads the history once (design P7).

A resumed ``chat``, ``pi-desktop payload`` and the Payload tab all start with the request of a
session just read from its file: every message is decoded from its journal line and committed
by the incremental projection. These tests open a real journal and count what that request
reads and projects: each row's line decoded once (not once per boundary check and once more
for the commit), and the history projected once (not again for the Responses position).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson
import pytest

import desktop.host.journal.lines as journal_lines
import desktop.pi.projection.incremental as incremental
from desktop.host.journal import JournalWriter
from desktop.host.journal.lines import keeping_decoded
from desktop.host.journal.rows import new_row_id
from desktop.pi.catalog.catalog import bundled_pi
from desktop.pi.delivery import deliver
from desktop.pi.projection import ProviderRequest, RequestOptions, project
from desktop.pi.types import Model, Tool, ToolCall, ToolResultMessage
from desktop.session.runtime import SessionRoute, SessionRuntime
from desktop.session.state import effective_state
from tests.session.support import reply, tool_result

TURNS = 120
ROUTES = {"anthropic-messages": ("anthropic", "claude-opus-5"), "openai-responses": ("openai", "gpt-5.5")}
#: A session opened on its journal: its runtime, its row count and the messages it holds.
Opened = tuple[SessionRuntime, int, list[dict[str, Any]]]


class _Tools:
    def __init__(self, tools: list[Tool]) -> None:
        self._tools = tools

    def declarations(self) -> list[Tool]:
        return self._tools

    def activation_section(self, *, for_comparison: bool = False) -> str | None:
        return None

    def execute(self, call: ToolCall, *, cancel: threading.Event) -> ToolResultMessage:
        raise AssertionError("no tool runs here")

    def take_update(self, timestamp: int) -> Mapping[str, Any] | None:
        return None

    def take_notes(self) -> list[tuple[str, str, dict[str, Any]]]:
        return []


class _Prompt:
    def __init__(self, sections: dict[str, str]) -> None:
        self._sections = sections

    def sections(self) -> dict[str, str]:
        return self._sections


def _model(api: str) -> Model:
    provider, model_id = ROUTES[api]
    found = next(m for m in bundled_pi().models if m["provider"] == provider and m["id"] == model_id)
    return dict(found)  # type: ignore[return-value]


def _messages(model: Model) -> list[dict[str, Any]]:
    route = {"provider": model["provider"], "model": model["id"], "api": model["api"]}
    tool = {"name": "read", "description": "Read a file", "parameters": {"type": "object", "properties": {}}}
    out: list[dict[str, Any]] = [
        {"role": "system", "content": "You are careful.", "toolsAdded": [tool], "timestamp": 1}
    ]
    for turn in range(TURNS):
        ts = 1000 + turn
        call = {"type": "toolCall", "id": f"call_{turn}", "name": "read", "arguments": {"path": f"f{turn}"}}
        out += [
            {"role": "user", "content": f"question {turn}", "timestamp": ts},
            reply([call], ts, route=route, input=10, output=5),
            tool_result(call["id"], "read", f"contents {turn}", ts),
            reply(
                [{"type": "text", "text": f"answer {turn}"}], ts, stop="stop", route=route, input=10, output=5
            ),
        ]
    return out


def _row(message: dict[str, Any], model: Model) -> dict[str, Any]:
    base = {"v": 1, "id": new_row_id(), "ts": message["timestamp"]}
    role = message["role"]
    if role == "system":
        return {**base, "type": "system", "modelSystem": {"v": 1, "message": message}, "label": "test"}
    if role == "assistant":
        route = {
            "provider": model["provider"],
            "model": model["id"],
            "api": model["api"],
            "baseUrl": model["baseUrl"],
        }
        return {**base, "type": role, "message": message, "route": route}
    return {**base, "type": role, "message": message}


def _open(tmp_path: Path, api: str, keep: bool) -> Iterator[Opened]:
    model = _model(api)
    messages = _messages(model)
    path = tmp_path / "session.jsonl"
    writer = JournalWriter.create(path, cwd=tmp_path, app_version="test")
    writer.append([_row(m, model) for m in messages])
    writer.close()
    if keep:
        with keeping_decoded():  # as ``payload`` and ``chat`` open it
            reopened = JournalWriter.open(path)
    else:
        reopened = JournalWriter.open(path)  # a fresh open: every row is a line, none decoded
    state = effective_state(messages)  # type: ignore[arg-type]
    identity = {"provider": model["provider"], "model": model["id"], "api": model["api"]}
    options = RequestOptions.from_pi({"apiKey": "sk-test", "sessionId": "s1"}, env={})
    runtime = SessionRuntime(
        reopened,
        SessionRoute(model, identity, options),
        lambda *a, **k: None,  # type: ignore[arg-type,return-value]
        _Tools(state.tools),
        _Prompt(state.sections),
        new_id=new_row_id,
    )
    try:
        yield runtime, len(reopened.rows), messages
    finally:
        reopened.close()


@pytest.fixture
def opened(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Opened]:
    yield from _open(tmp_path, request.param, keep=False)


@pytest.fixture
def opened_keeping(tmp_path: Path) -> Iterator[Opened]:
    yield from _open(tmp_path, "openai-responses", keep=True)


def _first_request_decoding(
    runtime: SessionRuntime, monkeypatch: pytest.MonkeyPatch
) -> tuple[ProviderRequest, int]:
    """The next request with a draft, and how many journal lines building it decoded."""
    decoded = 0
    real = orjson.loads

    def counting(data: Any) -> Any:
        nonlocal decoded
        decoded += 1
        return real(data)

    class _Orjson:
        loads = staticmethod(counting)
        dumps = staticmethod(orjson.dumps)

    monkeypatch.setattr(journal_lines, "orjson", _Orjson)
    request = runtime.next_request(draft="and now?")
    monkeypatch.undo()
    return request, decoded


def _full_request(runtime: SessionRuntime, messages: list[dict[str, Any]]) -> bytes:
    """The body of a full projection of ``messages`` and the draft (what the request must equal)."""
    draft = {"role": "user", "content": "and now?", "timestamp": 10**13}
    model = runtime.route.model
    return project(model, deliver([*messages, draft], model, "folded"), runtime.route.options).body_bytes  # type: ignore[list-item]


@pytest.mark.parametrize("opened", list(ROUTES), indirect=True)
def test_the_first_request_decodes_each_row_once(opened: Opened, monkeypatch: pytest.MonkeyPatch) -> None:
    runtime, rows, messages = opened
    request, decoded = _first_request_decoding(runtime, monkeypatch)
    # Before, each boundary check decoded a message and the one before it, and the commit
    # decoded them all again: about three decodes per row.
    assert decoded <= rows + 8, (decoded, rows)
    assert request.body_bytes == _full_request(runtime, messages)


def _count_projected(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The length of every transcript the incremental projection hands a projector from now on."""
    projected: list[int] = []
    real = incremental.projector_for

    def counting_projector(api: str) -> Any:
        project_api = real(api)

        def counted(model: Model, transcript: Any, options: Any) -> Any:
            projected.append(len(transcript))
            return project_api(model, transcript, options)

        return counted

    monkeypatch.setattr(incremental, "projector_for", counting_projector)
    return projected


@pytest.mark.parametrize("opened", list(ROUTES), indirect=True)
def test_the_first_request_projects_the_history_once(opened: Opened, monkeypatch: pytest.MonkeyPatch) -> None:
    runtime, _rows, messages = opened
    projected = _count_projected(monkeypatch)
    runtime.next_request(draft="and now?")
    # Before, the Responses APIs projected the whole history a second time for the position
    # that names the next assistant item.
    assert sum(projected) <= len(messages) + 40, (projected, len(messages))


def test_rows_kept_from_the_open_are_not_decoded_again(
    opened_keeping: Opened, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``payload`` and ``chat`` keep the rows the reader decoded for their first request, which
    then decodes no line; the kept rows are let go once read."""
    runtime, _rows, messages = opened_keeping
    request, decoded = _first_request_decoding(runtime, monkeypatch)
    assert decoded <= 8, decoded
    assert runtime.writer.rows._kept is None  # let go once read
    assert request.body_bytes == _full_request(runtime, messages)


@pytest.mark.parametrize("opened", list(ROUTES), indirect=True)
def test_a_warmed_session_sends_its_first_message_without_projecting_the_history(
    opened: Opened, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The window warms the session while the user writes (design X31): the first request
    after it projects the new message, not the history, and is the same bytes."""
    runtime, _rows, messages = opened
    projected = _count_projected(monkeypatch)
    runtime.warm("and now")
    assert sum(projected) >= len(messages)  # the history, once
    projected.clear()
    request = runtime.next_request(draft="and now?")
    assert sum(projected) <= 40, (projected, len(messages))
    assert request.body_bytes == _full_request(runtime, messages)
