"""The preview is the dispatch, byte for byte, on every API family (design P4, P5).

For each of the ten pi-ai APIs a session runs a first turn against the loopback emulator, then a
skill is added to the workspace (a pending system update) and the user types a draft. The
preview is the runtime's one next-request function, ``SessionRuntime.next_request(draft)``: the
function ``pi-desktop payload`` and the window's Payload tab call. Sending the draft must put
exactly those bytes on the wire: the body the emulator received is compared with the preview.

``pi-messages`` (pi's own protocol, spoken by the Radius gateway) has neither an emulator
endpoint nor a stream parser in Desktop yet, so nothing can be sent on it: there the preview is
compared with the request the runtime hands its dispatcher, which records the bytes it was given
and refuses (the HTTP dispatcher would refuse the same way, before sending anything). It is
the one family whose body differs: pi-messages sends the transcript as pi-ai holds it, message
timestamps included, and a preview cannot know the time at which the turn will journal its rows
(the test is a strict expected failure until the draft's time is fixed at preview time).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop.emulator import Emulator
from desktop.pi.projection import ProviderRequest
from desktop.pi.routes import emulator_route, resolve_model
from tests.session.support import config, open_

ROUTES = {
    "anthropic-messages": "anthropic/claude-opus-5-5",
    "openai-responses": "openai/gpt-4.1",
    "openai-codex-responses": "openai-codex/gpt-5.5",
    "azure-openai-responses": "azure/gpt-4.1",
    "openai-completions": "deepseek/deepseek-flash",
    "mistral-conversations": "mistral/mistral-medium-latest",
    "google-generative-ai": "google/gemini-3.5-flash",
    "google-vertex": "google-vertex/gemini-2.5-flash",
    "bedrock-converse-stream": "amazon-bedrock/amazon.nova-lite-v1:0",
    "pi-messages": "radius/balanced",
}


@pytest.fixture(scope="module")
def emulator() -> Iterator[Emulator]:
    with Emulator() as emu:
        yield emu


def test_the_routes_cover_all_ten_apis(emulator: Emulator) -> None:
    apis = {
        api: resolve_model(emulator_route(r, emulator.url, emulated=True)).model["api"]
        for api, r in ROUTES.items()
    }
    assert all(api == found for api, found in apis.items()), apis
    assert len(ROUTES) == 10


PI_MESSAGES_TIMESTAMPS = pytest.mark.xfail(
    strict=True, reason="pi-messages bodies carry the message timestamps of the turn, unknown to a preview"
)


@pytest.mark.parametrize(
    "api",
    [pytest.param(api, marks=PI_MESSAGES_TIMESTAMPS) if api == "pi-messages" else api for api in ROUTES],
)
def test_preview_with_pending_skill_and_draft_is_what_the_emulator_receives(
    api: str, emulator: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "demo-project")  # Vertex builds its URL from these
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "us-central1")
    workspace = tmp_path / "ws"
    dispatched: list[bytes] = []

    def no_stream_parser(
        request: ProviderRequest, model: Any, *, on_event: Any, cancel: threading.Event
    ) -> Any:
        dispatched.append(request.body_bytes)
        raise RuntimeError("no pi-messages stream parser")

    dispatcher = no_stream_parser if api == "pi-messages" else None
    cfg = config(emulator, workspace, ROUTES[api])
    with open_(tmp_path / "s.jsonl", cfg, dispatcher=dispatcher) as session:
        assert session.runtime.route.model["api"] == api
        if dispatcher is None:
            first = session.runtime.run_turn("hello there")
            assert first.stopped == "stop", first.error
        skill = workspace / ".pi" / "skills" / "release-notes" / "SKILL.md"
        skill.parent.mkdir(parents=True)
        skill.write_text("---\nname: release-notes\ndescription: Draft release notes.\n---\nSteps.\n")
        draft = "and now the release notes [[words:5]]"
        assert session.runtime.pending_system_fields() is not None  # the skill is a pending update

        preview = session.runtime.next_request(draft=draft).body_bytes
        before = len(emulator.requests)
        if dispatcher is None:
            session.runtime.run_turn(draft)
            received = emulator.requests[before].body
        else:
            with pytest.raises(RuntimeError, match="no pi-messages stream parser"):
                session.runtime.run_turn(draft)
            received = dispatched[0]

    assert received == preview
    assert b"release-notes" in received and draft.encode() in received
