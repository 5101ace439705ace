"""The incremental next request equals a full rebuild, byte for byte (design P7).

Random sessions over every model the pi-ai fixtures use (all ten APIs, with and without
native system messages and tool changes), grown turn by turn with tool calls, failed turns,
system updates that change sections and tools, drafts and pending updates, rewritten
histories (what a compaction or a reordered row does), route changes and both fallbacks.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desktop.pi.delivery import FALLBACKS, deliver
from desktop.pi.projection import ProviderRequest, RequestOptions, project
from desktop.pi.projection.incremental import WIRE_PATHS, IncrementalProjection
from tests.session.support import reply

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "pi_ai"


def _routes() -> list[tuple[dict[str, Any], RequestOptions]]:
    """Each distinct model of the fixtures with the options its first case used (the key, the
    endpoint and project settings some APIs require), plus a reasoning variant."""
    seen: dict[bytes, tuple[dict[str, Any], RequestOptions]] = {}
    for path in sorted(FIXTURES.glob("*.json")):
        for case in json.loads(path.read_text(encoding="utf-8")):
            if "error" in case:
                continue
            model = case["model"]
            pi_options = {"apiKey": "sk-oracle-test-key", **case.get("options", {}), "sessionId": "s-1"}
            options = RequestOptions.from_pi(pi_options, env=case.get("env"))
            seen.setdefault(orjson.dumps(model, option=orjson.OPT_SORT_KEYS), (model, options))
    return list(seen.values())


ROUTES = _routes()
MODELS = [model for model, _ in ROUTES]
TOOLS = [
    {
        "name": name,
        "description": f"{name} tool",
        "parameters": {"type": "object", "properties": {"x": {"type": "string"}}},
    }
    for name in ("read", "bash", "grep", "mcp_search")
]


class Session:
    """Builds neutral messages from a stream of random choices."""

    def __init__(self, rng: random.Random, model: dict[str, Any]) -> None:
        self.rng = rng
        self.model = model
        self.clock = 1_000
        self.calls = 0

    def stamp(self) -> int:
        self.clock += self.rng.randint(0, 3) * 1000
        return self.clock

    def system(self, first: bool = False) -> dict[str, Any]:
        rng = self.rng
        message: dict[str, Any] = {"role": "system", "content": "You are helpful." if first else ""}
        sections = {
            rng.choice(["runtime", "env", "skill:a"]): rng.choice([None, "", "on", "x\ny"])
            for _ in range(rng.randint(0, 2))
        }
        if sections and not first:
            message["sections"] = sections
        if first or rng.random() < 0.5:
            added = rng.sample(TOOLS, rng.randint(0, 2))
            if first:
                added = TOOLS[:2]
            if added:
                message["toolsAdded"] = added
            if not first and rng.random() < 0.3:
                message["toolsRemoved"] = [{"name": rng.choice(TOOLS)["name"]}]
        message["timestamp"] = self.stamp()
        return message

    def user(self) -> dict[str, Any]:
        text = self.rng.choice(["hello", "fix the test", " ", "é ☃ \u2028"])
        content: Any = text if self.rng.random() < 0.5 else [{"type": "text", "text": text}]
        return {"role": "user", "content": content, "timestamp": self.stamp()}

    def assistant(self, tools: bool) -> dict[str, Any]:
        rng = self.rng
        other = rng.randint(0, 5) == 0
        content: list[dict[str, Any]] = []
        if rng.random() < 0.5:
            content.append({"type": "thinking", "thinking": "hmm", "thinkingSignature": ""})
        if rng.random() < 0.5 or not tools:
            content.append({"type": "text", "text": rng.choice(["ok", "done.", ""])})
        calls = []
        if tools:
            for _ in range(rng.randint(1, 2)):
                self.calls += 1
                call = {
                    "type": "toolCall",
                    "id": f"call|{self.calls}",
                    "name": rng.choice(TOOLS)["name"],
                    "arguments": {"x": "a"},
                }
                content.append(call)
                calls.append(call)
        stop = "toolUse" if tools else rng.choice(["stop", "stop", "stop", "length", "error", "aborted"])
        usage_total = rng.randint(0, 3) * 50
        message = {
            "role": "assistant",
            "content": content,
            "api": "openai-completions" if other else self.model["api"],
            "provider": "other" if other else self.model["provider"],
            "model": "other-model" if other else self.model["id"],
            "usage": {
                "input": usage_total,
                "output": 3,
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": usage_total + 3 if usage_total else 0,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
            },
            "stopReason": stop,
            "timestamp": self.stamp(),
        }
        if stop == "error":
            message["errorMessage"] = "boom"
        return message

    def turn(self) -> list[dict[str, Any]]:
        rng = self.rng
        out: list[dict[str, Any]] = []
        if rng.randint(0, 3) == 0:
            out.append(self.system())
        out.append(self.user())
        for _ in range(rng.randint(0, 2)):
            assistant = self.assistant(tools=True)
            out.append(assistant)
            for block in assistant["content"]:
                if block.get("type") == "toolCall" and rng.randint(0, 6):
                    out.append(
                        {
                            "role": "toolResult",
                            "toolCallId": block["id"],
                            "toolName": block["name"],
                            "content": [{"type": "text", "text": "result"}],
                            "isError": False,
                            "timestamp": self.stamp(),
                        }
                    )
            if rng.randint(0, 4) == 0:
                out.append(self.system())
        out.append(self.assistant(tools=False))
        return out


def _full(
    model: dict[str, Any], options: RequestOptions, fallback: str, messages: list[dict[str, Any]]
) -> bytes:
    return project(model, deliver(messages, model, fallback), options).body_bytes  # type: ignore[arg-type]


def check_session(rng: random.Random) -> None:
    model, options = rng.choice(ROUTES)
    fallback = rng.choice(FALLBACKS)
    session = Session(rng, model)
    # An engine that keeps no bytes (the what-if's) still encodes what a full projection does.
    keep = rng.random() < 0.7
    engine = IncrementalProjection(model, options, fallback, keep_bytes=keep)
    messages: list[dict[str, Any]] = [session.system(first=True), *session.turn()]
    stable = 0
    deferred: list[tuple[ProviderRequest, bytes]] = []
    for _step in range(rng.randint(3, 12)):
        action = rng.randint(0, 9)
        if action == 0 and len(messages) > 2:
            # A rewritten history (compaction, a row moved by its anchor): a new prefix.
            cut = rng.randint(1, len(messages) - 1)
            messages = [*messages[:cut], session.user(), *messages[cut:]]
            stable = min(stable, cut)
        elif action == 1:
            model, options = rng.choice(ROUTES)  # a route or fallback change: a new engine
            fallback = rng.choice(FALLBACKS)
            session.model = model
            engine = IncrementalProjection(model, options, fallback, keep_bytes=keep)
        else:
            messages = [*messages, *session.turn()]
        extra = []
        if rng.random() < 0.5:
            extra.append(session.system())
        if rng.random() < 0.5:
            extra.append(session.user())
        request = engine.request(messages, stable, extra)
        # A request keeps its bytes whatever the engine does next (commits, a rewritten
        # history): some are read only after the following request is made.
        for earlier, bytes_then in deferred:
            assert earlier.body_bytes == bytes_then, (model["api"], model["id"])
            assert orjson.dumps(earlier.body) == bytes_then
        deferred.clear()
        expected = _full(model, options, fallback, [*messages, *extra])
        if rng.random() < 0.5:
            deferred.append((request, expected))
        else:
            assert request.body_bytes == expected, (model["api"], model["id"])
            assert orjson.dumps(request.body) == expected
        stable = len(messages)
    for earlier, bytes_then in deferred:
        assert earlier.body_bytes == bytes_then


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.randoms(use_true_random=False))
def test_incremental_bytes_equal_full_rebuild(rng: random.Random) -> None:
    check_session(rng)


def test_every_api_is_covered() -> None:
    assert {m["api"] for m in MODELS} == set(WIRE_PATHS)


def _exchange(index: int, model: dict[str, Any]) -> list[dict[str, Any]]:
    """One finished turn: a question and a plain answer."""
    stamp = 10_000 + index * 10
    route = {"api": model["api"], "provider": model["provider"], "model": model["id"]}
    answer = reply(
        [{"type": "text", "text": f"answer {index}"}], stamp + 1, stop="stop", route=route, input=10, output=3
    )
    return [{"role": "user", "content": f"question {index}", "timestamp": stamp}, answer]


def _history(model: dict[str, Any]) -> list[dict[str, Any]]:
    """A system prompt declaring two tools, then eight finished turns."""
    system = {"role": "system", "content": "You are helpful.", "toolsAdded": TOOLS[:2], "timestamp": 1_000}
    return [system, *(message for index in range(8) for message in _exchange(index, model))]


FIRST_ROUTE_PER_API = list({model["api"]: (model, options) for model, options in reversed(ROUTES)}.values())


def _items(body: dict[str, Any], api: str) -> list[Any]:
    wire: Any = body
    for key in WIRE_PATHS[api]:
        wire = wire[key]
    return list(wire)


@pytest.mark.parametrize(
    ("model", "options"), FIRST_ROUTE_PER_API, ids=[m["api"] for m, _ in FIRST_ROUTE_PER_API]
)
def test_a_turn_shares_the_committed_history(model: dict[str, Any], options: RequestOptions) -> None:
    """A turn's request refers to the committed items; it does not copy them (design P7).

    Copying the committed items into each request's list costs a reference per committed
    item, which grows with the session. The reference count of a committed item shows it:
    unchanged by making (and encoding) the next request, one more once its body is read.
    """
    api = model["api"]
    messages = _history(model)
    engine = IncrementalProjection(model, options)
    first = engine.request(messages, 0, [_exchange(8, model)[0]])
    shown = _items(first.body, api)
    committed = shown[len(shown) // 2]  # the middle of the history is committed
    rebuilds = engine.rebuilds

    longer = [*messages, *_exchange(8, model)]
    draft = [_exchange(9, model)[0]]
    before = sys.getrefcount(committed)
    second = engine.request(longer, len(messages), draft)
    made = sys.getrefcount(committed)
    sent = second.body_bytes
    encoded = sys.getrefcount(committed)
    assert engine.rebuilds == rebuilds  # spliced, not projected in full
    assert sent == _full(model, options, "folded", [*longer, *draft])
    assert (made, encoded) == (before, before)
    items = _items(second.body, api)
    assert any(item is committed for item in items)
    assert sys.getrefcount(committed) > before  # the body read as a value holds it once more


#: APIs whose committed items depend on the tool declarations and are made anew on a restart
#: (Anthropic's do not depend on them; pi-messages' items are the messages themselves).
TOOL_SENSITIVE = [
    (m, o) for m, o in FIRST_ROUTE_PER_API if m["api"] not in ("anthropic-messages", "pi-messages")
]


@pytest.mark.parametrize(("model", "options"), TOOL_SENSITIVE, ids=[m["api"] for m, _ in TOOL_SENSITIVE])
def test_a_new_tool_extends_the_committed_history(model: dict[str, Any], options: RequestOptions) -> None:
    """A tool change that only declares a new name, uncalled so far, keeps the committed items
    (design X10); one that declares a name again starts over. Both stay byte-equal."""
    api = model["api"]
    messages = _history(model)
    engine = IncrementalProjection(model, options)
    first = engine.request(messages, 0)
    shown = _items(first.body, api)
    committed = shown[len(shown) // 2]

    added = {"role": "system", "content": "", "toolsAdded": [TOOLS[2]], "timestamp": 20_000}
    longer = [*messages, added, *_exchange(8, model)]
    second = engine.request(longer, len(messages))
    assert second.body_bytes == _full(model, options, "folded", longer)
    assert any(item is committed for item in _items(second.body, api))

    again = {"role": "system", "content": "", "toolsAdded": [TOOLS[0]], "timestamp": 30_000}
    last = [*longer, again, *_exchange(9, model)]
    third = engine.request(last, len(longer))
    assert third.body_bytes == _full(model, options, "folded", last)
    assert not any(item is committed for item in _items(third.body, api))
