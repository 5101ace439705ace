"""Turn benchmark (design P7): CPU to prepare the next request after a turn, by session size.

A session of N rows is written to a real journal (the projection benchmark's tool-heavy
transcripts, one per API) and opened by a ``SessionRuntime``. Each measured turn is
``run_turn("...")`` exactly as the window or ``pi-desktop chat`` runs it: the user row is
appended and fsynced, the system state diffed, the compaction estimate taken, the request
built and its body bytes encoded (what the dispatcher sends); the thread CPU time from the call
to those bytes is the turn's time. The dispatcher then answers at once (a finished assistant
message, no network), so the next turn starts from a session one turn longer. The first turn
after the session is built is reported on its own (``first``: it commits the whole history, see
``first_request_bench.py`` for it against pi-ai from a fresh process); ``encode`` is the part of
a turn spent encoding.

The anchor is the same session at 1,000 rows, measured in the same run, interleaved round by
round with the large one; min and median over all measured turns. Only the history's length
differs between the sizes: the transcripts add a tool every 100 turns, so a 50,000-row session
would otherwise declare 83 tools against 7 at 1,000 rows, and the per-turn cost of rendering
the request's tool list would be counted as growth with history. Every smaller session is
therefore given the largest one's tool additions, in the same order, compressed into its own
section updates (``_same_tools``): at the measured turn every size declares the same tools in
the same order, with the same system prompt and sections, through the same kind of rows. Target: prepare at 50,000
rows within 2x of prepare at 1,000 rows for every API, and under 20 ms on anthropic-messages,
openai-completions and openai-responses. ``full`` is what a from-scratch projection of the
same messages costs (the previous behaviour), for scale.

Run: ``PYTHONPATH=. python benchmarks/turn_bench.py [--sizes 1000,50000] [--rounds 5]
[--turns 4] [--apis anthropic-messages,...]``.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import interleave, load_average, min_median, ratio
from projection_bench import ROUTES, _catalog_model, _options, transcript

from desktop.host.journal import JournalWriter
from desktop.host.journal.rows import new_row_id
from desktop.pi.delivery import deliver
from desktop.pi.projection import ProviderRequest, project
from desktop.pi.types import AssistantMessage, Message, Model, Tool, ToolCall, ToolResultMessage
from desktop.session.runtime import EventSink, SessionRoute, SessionRuntime
from desktop.session.state import effective_state


class _Tools:
    """The session's current declarations, unchanged (a turn without tool traffic)."""

    def __init__(self, tools: list[Tool]) -> None:
        self._tools = tools

    def declarations(self) -> list[Tool]:
        return self._tools

    def activation_section(self, *, for_comparison: bool = False) -> str | None:
        return None

    def execute(self, call: ToolCall, *, cancel: threading.Event) -> ToolResultMessage:
        raise AssertionError("the benchmark's answers call no tools")

    def take_update(self, timestamp: int) -> Mapping[str, Any] | None:
        return None

    def take_notes(self) -> list[tuple[str, str, dict[str, Any]]]:
        return []


class _Prompt:
    def __init__(self, sections: dict[str, str]) -> None:
        self._sections = sections

    def sections(self) -> dict[str, str]:
        return self._sections


class _Answer:
    """Records when the request arrived (thread CPU) and answers at once."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.prepared: float | None = None
        self.encode: float = 0.0
        self.turn = 0

    def __call__(
        self, request: ProviderRequest, model: Model, *, on_event: EventSink, cancel: threading.Event
    ) -> AssistantMessage:
        self.prepared = time.thread_time()
        request.body_bytes  # noqa: B018 - what the dispatcher sends
        self.encode = time.thread_time() - self.prepared
        self.turn += 1
        usage = {
            "input": 5000 + self.turn,
            "output": 40,
            "cacheRead": 4000,
            "cacheWrite": 0,
            "totalTokens": 9040 + self.turn,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        }
        return {  # type: ignore[return-value]
            "role": "assistant",
            "content": [{"type": "text", "text": f"Answer {self.turn}: the tests pass."}],
            "api": model["api"],
            "provider": model["provider"],
            "model": model["id"],
            "usage": usage,
            "stopReason": "stop",
            "timestamp": int(time.time() * 1000),
        }


def _identity(model: Model) -> dict[str, Any]:
    return {
        "provider": model["provider"],
        "model": model["id"],
        "api": model["api"],
        "baseUrl": model["baseUrl"],
    }


def _row(message: Mapping[str, Any], identity: dict[str, Any]) -> dict[str, Any]:
    role = message["role"]
    base = {"v": 1, "id": new_row_id(), "ts": message.get("timestamp", 0)}
    if role == "system":
        return {**base, "type": "system", "modelSystem": {"v": 1, "message": dict(message)}, "label": "bench"}
    if role == "assistant":
        return {**base, "type": role, "message": dict(message), "route": identity}
    return {**base, "type": role, "message": dict(message)}


def _added(messages: Sequence[Mapping[str, Any]]) -> list[list[dict[str, Any]]]:
    """The ``toolsAdded`` of every section update after the first system message, in order."""
    return [list(m["toolsAdded"]) for m in messages[1:] if m["role"] == "system" and m.get("toolsAdded")]


def _same_tools(messages: Sequence[Message], additions: list[list[dict[str, Any]]]) -> list[Message]:
    """``messages`` with its tool additions replaced by ``additions``, spread over its own updates.

    The shorter history gets exactly the longer one's additions, in the same order, so both
    declare the same tool list at the measured turn (design P7: cost grows with the turn, not
    with the history, so only the history may differ).
    """
    flat = [tool for batch in additions for tool in batch]
    out: list[dict[str, Any]] = [dict(m) for m in messages]
    updates = [i for i, m in enumerate(out) if i > 0 and m["role"] == "system"]
    for i in updates:
        out[i].pop("toolsAdded", None)
    if flat:
        if not updates:
            raise SystemExit("the smaller session has no section update to carry the tool additions")
        per = -(-len(flat) // len(updates))  # ceiling division
        for k, i in enumerate(updates):
            chunk = flat[k * per : (k + 1) * per]
            if chunk:
                out[i]["toolsAdded"] = chunk
    return cast(list[Message], out)


class Session:
    def __init__(
        self, folder: Path, api: str, size: int, additions: list[list[dict[str, Any]]] | None = None
    ) -> None:
        provider, model_id, pi_options, env = ROUTES[api]
        self.model = _catalog_model(provider, model_id)
        self.options = _options(pi_options, env)
        messages = transcript(self.model, size)[:-1]  # the turn brings its own user message
        if additions is not None:
            messages = _same_tools(messages, additions)
        self.additions = _added(messages)
        self.writer = JournalWriter.create(folder / f"{api}-{size}.jsonl", cwd=folder, app_version="bench")
        rows = [_row(m, _identity(self.model)) for m in messages]
        for start in range(0, len(rows), 2000):
            self.writer.append(rows[start : start + 2000])
        state = effective_state(messages)
        self.size = size
        self.tools = _Tools(state.tools)
        self.answer = _Answer(self.model)
        self.runtime = SessionRuntime(
            self.writer,
            SessionRoute(self.model, _identity(self.model), self.options),
            self.answer,
            self.tools,
            _Prompt(state.sections),
            new_id=new_row_id,
        )
        #: The first turn after the open (prepare + encode, ms): it commits the whole history.
        self.first = sum(self.turn())

    def turn(self) -> tuple[float, float]:
        start = time.thread_time()
        result = self.runtime.run_turn("Now run the tests and tell me what failed.")
        assert result.stopped == "stop", result
        assert self.answer.prepared is not None
        return (self.answer.prepared - start) * 1000, self.answer.encode * 1000

    def full_ms(self) -> float:
        messages: Sequence[Message] = self.runtime.view().messages
        start = time.thread_time()
        project(self.model, deliver(messages, self.model, "folded"), self.options).body_bytes  # noqa: B018
        return (time.thread_time() - start) * 1000


def _turns(session: Session, count: int, encodes: list[float]) -> list[float]:
    """``count`` turns of one session: each to the bytes the dispatcher sends (prepare + encode)."""
    out = []
    for _ in range(count):
        prepare, encode = session.turn()
        out.append(prepare + encode)
        encodes.append(encode)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,50000")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--turns", type=int, default=4, help="measured turns per session per round")
    parser.add_argument("--apis", default=",".join(ROUTES))
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    small, large = sizes[0], sizes[-1]
    print(
        f"{'api':<26}{'rows':>7}{'first':>9}{'turn min':>13}{'median':>9}{'encode':>9}{'full':>9}"
        f"{'ratio min':>11}{'median':>8}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for api in args.apis.split(","):
            largest = Session(Path(tmp), api, max(sizes))
            additions = largest.additions
            sessions = {
                size: largest if size == largest.size else Session(Path(tmp), api, size, additions)
                for size in sizes
            }
            declared = {size: [t["name"] for t in s.tools.declarations()] for size, s in sessions.items()}
            assert all(names == declared[large] for names in declared.values()), "tool sets differ"
            encodes: dict[int, list[float]] = {size: [] for size in sizes}

            measured = interleave(
                {
                    str(size): functools.partial(_turns, sessions[size], args.turns, encodes[size])
                    for size in sizes
                },
                args.rounds,
            )
            times = {size: [t for batch in measured[str(size)] for t in batch] for size in sizes}
            for size in sizes:
                full = sessions[size].full_ms()
                ratio_min, ratio_median = ratio(times[size], times[small])
                low, mid = min_median(times[size])
                print(
                    f"{api:<26}{size:>7}{sessions[size].first:>9.1f}{low:>13.2f}{mid:>9.2f}"
                    f"{statistics.median(encodes[size]):>9.2f}{full:>9.1f}"
                    f"{ratio_min:>11.2f}{ratio_median:>8.2f}"
                )
            for session in sessions.values():
                session.writer.close()
            del sessions
    print(
        f"ms of thread CPU: first = the first turn after the open, turn = each later turn to its bytes"
        f" (prepare + encode), full = a from-scratch projection; ratio = {large} rows over {small} rows"
        f" (target <= 2.0); {load_average()}"
    )


if __name__ == "__main__":
    main()
