"""The runtime's next request is incremental and byte-equal to a full rebuild (design P7).

Real turns on the loopback emulator, through the journal on disk: plain turns, tool turns, a
compaction, a route change and a fallback change, each followed by the request the runtime
would send next (with and without a draft) compared with a full projection of the same
messages.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from desktop.emulator import Emulator
from desktop.pi.delivery import deliver
from desktop.pi.projection import ProviderRequest, project
from desktop.pi.routes import emulator_route, resolve_model
from desktop.session.assembly import OpenSession, route_binding
from desktop.session.runtime import SessionRuntime
from tests.session.support import config, open_


def _open(tmp_path: Path, emu: Emulator, model: str) -> OpenSession:
    cfg = config(emu, tmp_path / "ws", model)
    (cfg.workspace / "notes.txt").write_text("remember the milk", encoding="utf-8")
    return open_(tmp_path / "s.jsonl", cfg)


def _full(runtime: SessionRuntime, messages: list[Any]) -> ProviderRequest:
    route = runtime.route
    return project(route.model, deliver(messages, route.model, route.fallback), route.options)


def _check(runtime: SessionRuntime) -> None:
    messages: list[Any] = list(runtime.view().messages)
    pending = runtime.pending_system_fields()
    extra = [pending["modelSystem"]["message"]] if pending else []
    assert runtime.next_request().body_bytes == _full(runtime, [*messages, *extra]).body_bytes
    draft = runtime.draft_message("what next?")
    assert (
        runtime.next_request("what next?").body_bytes == _full(runtime, [*messages, *extra, draft]).body_bytes
    )


@pytest.mark.parametrize(
    "model",
    ["anthropic/claude-opus-5-5", "openai/gpt-5.5", "deepseek/deepseek-flash", "google/gemini-2.5-pro"],
)
def test_next_request_equals_full_rebuild_through_turns(
    tmp_path: Path, emulator: Emulator, model: str
) -> None:
    call = json.dumps({"path": "notes.txt"})
    with _open(tmp_path, emulator, model) as session:
        runtime = session.runtime
        for turn in range(6):
            text = f"turn {turn} [[tool:read {call}]]" if turn % 2 else f"turn {turn} " + "pad " * 50
            assert runtime.run_turn(text).stopped == "stop"
            _check(runtime)
        engine = runtime._projections[-1][1]
        rebuilds = engine.rebuilds
        runtime.run_turn("one more [[words:16000]]")  # past the retained tail: something to compact
        _check(runtime)
        assert engine.rebuilds == rebuilds  # the turn's requests were spliced, not rebuilt

        runtime.compact()
        _check(runtime)
        runtime.run_turn("after the compaction")
        _check(runtime)

        runtime.route = runtime.route._replace(fallback="attributed")  # a fallback change
        _check(runtime)
        runtime.run_turn("attributed now")
        _check(runtime)

        other = resolve_model(emulator_route("mistral/devstral-latest", emulator.url, emulated=True))
        runtime.route = route_binding(other, "folded", session.writer.session_id)  # a route change
        _check(runtime)
