"""Turn benchmark (design P7): CPU of a turn, by session size, the way a user meets it.

A session of N rows is written to a real journal (the projection benchmark's tool-heavy
transcripts, one per API). Every round opens it again as ``chat`` does (``JournalWriter.open``
and a new ``SessionRuntime``) and runs ``--turns`` turns; each turn is ``run_turn("...")``
exactly as the window or ``pi-desktop chat`` runs it: the user row appended and fsynced, the
system state diffed, the compaction estimate taken, the request built, its body bytes encoded
and sent (over a real local socket to a thread that reads them), the answer journalled. The
turn's time is this thread's CPU for the whole ``run_turn`` call. The dispatcher answers at once
(a finished assistant message, no network), so the next turn starts from a session one turn
longer. The figures per size:

* ``first turn``, on two paths, each committing the history before the first turn (design
  X31), so the first turn pays for what it adds; each warm-up's own CPU is reported beside it.
  ``chat``'s: it commits the history before it reads its first line, with no draft yet. The
  window's: the worker commits it while the user writes the first message, the draft included,
  its objects kept out of the collector's walks (``bulk_load``). A first turn with nothing
  committed before it (``prompt``, a piped ``payload``) is ``first_request_bench.py``'s, against
  pi-ai from a fresh process;
* ``steady turn``: every later turn;
* ``per turn, first counted``: the mean cost of a turn over the round's ``--turns`` turns, the
  first included (what a user pays per turn over a short resumed conversation), on each path.

Budgets apply to sessions a user can have: a history past the model's window is measured (the
code's own growth with history) but the app would have compacted it, so no budget is set on it.

The largest size is measured twice. As generated, its history was never compacted: at 100,000
rows its body is 80 MB and more, far beyond any model's context window, a request no provider
accepts (labelled so in the report, and kept: it is the worst case of the code's own growth).
``compacted`` is the realistic long session: the same rows written in the same order, compacted
wherever the app compacts automatically, by the runtime's own ``compact(reason="automatic")``
(its cut, its summary request through the dispatcher, its compaction row with the checkpoint)
once the context the next request would carry passes the model's window less the reserve
(``should_compact``). The generated transcripts' usage figures are synthetic and do not track
their length, so the context is measured by the app's own four-characters-per-token estimate of
the view the next request carries. The journal then holds all the rows (plus one compaction row
per compaction) and the body stays within the window, as it does for a user.

The anchor is the same session at the smallest size, measured in the same run, interleaved
round by round with the others; min and median. Budgets: per turn with the first counted at
50,000 rows <= 2x at 1,000; the steady turn at 100,000 rows <= 2x at 1,000 (compacted). Only the history's
length differs between the sizes: the transcripts add a tool every 100 turns, so a 50,000-row
session would otherwise declare 83 tools against 7 at 1,000 rows, and the per-turn cost of
rendering the request's tool list would be counted as growth with history. Every smaller
session is therefore given the largest one's tool additions, in the same order, compressed into
its own section updates (``_same_tools``): at the measured turn every size declares the same
tools in the same order, with the same system prompt and sections, through the same kind of
rows. ``full`` is what a from-scratch projection of the same messages costs, for scale.

Run: ``PYTHONPATH=. python benchmarks/turn_bench.py [--sizes 1000,50000,100000] [--rounds 5]
[--turns 4] [--apis anthropic-messages,...] [--no-compacted]``.
"""

from __future__ import annotations

import argparse
import functools
import socket
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import interleave, load_average, report
from projection_bench import ROUTES, _catalog_model, _options, transcript

from desktop.host.journal import JournalWriter
from desktop.host.journal.rows import new_row_id
from desktop.pi.delivery import deliver
from desktop.pi.projection import ProviderRequest, project
from desktop.pi.types import AssistantMessage, Message, Model, Tool, ToolCall, ToolResultMessage
from desktop.session.compaction import estimate_tokens
from desktop.session.compaction_settings import CompactionSettings, should_compact
from desktop.session.runtime import EventSink, SessionRoute, SessionRuntime
from desktop.session.state import effective_state
from desktop.ui.row_index import bulk_load

#: What the user sends each turn.
TEXT = "Now run the tests and tell me what failed."


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


#: A structured summary of the size the app assumes before one exists (about 1,200 tokens).
_SUMMARY = "## Goal\n" + "Keep the module's tests passing while the loop is rewritten. " * 80


class _Summarizer:
    """Answers a compaction's summary request with a summary of the usual size, at once."""

    def __call__(
        self, request: ProviderRequest, model: Model, *, on_event: EventSink, cancel: threading.Event
    ) -> AssistantMessage:
        usage = {"input": 20000, "output": 1200, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 21200}
        return {  # type: ignore[return-value]
            "role": "assistant",
            "content": [{"type": "text", "text": _SUMMARY}],
            "api": model["api"],
            "provider": model["provider"],
            "model": model["id"],
            "usage": {
                **usage,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
            },
            "stopReason": "stop",
            "timestamp": int(time.time() * 1000),
        }


class _Answer:
    """Sends the request's body over a local socket (as the dispatcher sends it) and answers at
    once; a thread on the other end reads and drops what it is sent."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.turn = 0
        #: This thread's CPU clock when the request reached the dispatcher (prepared, not encoded).
        self.prepared: float | None = None
        #: This thread's CPU seconds encoding that request's body.
        self.encode = 0.0
        #: The size of the last body sent.
        self.body_mb = 0.0
        self._out, inbound = socket.socketpair()
        threading.Thread(target=self._drain, args=(inbound,), daemon=True).start()

    @staticmethod
    def _drain(inbound: socket.socket) -> None:
        with inbound:
            while inbound.recv(1 << 20):
                pass

    def close(self) -> None:
        self._out.close()

    def __call__(
        self, request: ProviderRequest, model: Model, *, on_event: EventSink, cancel: threading.Event
    ) -> AssistantMessage:
        self.prepared = time.thread_time()
        body = request.body_bytes
        self.encode = time.thread_time() - self.prepared
        self.body_mb = len(body) / 1e6
        self._out.sendall(body)
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
        self,
        folder: Path,
        api: str,
        size: int,
        additions: list[list[dict[str, Any]]] | None = None,
        *,
        compacted: bool = False,
        full: bool = False,
    ) -> None:
        provider, model_id, pi_options, env = ROUTES[api]
        self.model = _catalog_model(provider, model_id)
        self.options = _options(pi_options, env)
        # ``full``: written on past ``size`` rows (a fifth more at most) to its last turn
        # before the next automatic compaction: the largest body the compacted session sends.
        messages = transcript(self.model, size + (size // 5 if full else 0))[
            :-1
        ]  # the turn brings its own user message
        if additions is not None:
            messages = _same_tools(messages, additions)
        self.path = folder / f"{api}-{size}{'-compacted' if compacted else ''}{'-full' if full else ''}.jsonl"
        rows = [_row(m, _identity(self.model)) for m in messages]
        self.compactions = 0
        with JournalWriter.create(self.path, cwd=folder, app_version="bench") as writer:
            if compacted:
                self.compactions, written = self._write_compacted(writer, messages, rows, size, full=full)
                messages = messages[:written]
            else:
                for start in range(0, len(rows), 2000):
                    writer.append(rows[start : start + 2000])
        self.additions = _added(messages)
        state = effective_state(messages)
        self.size = len(messages) + 1 if full else size  # the rows with the turn's own message
        self.compacted = compacted
        self.full = full
        self.nominal = size  # the size asked for (budgets are set by it)
        self.context = estimate_tokens(messages) if not compacted else self._last_context
        self.tools = _Tools(state.tools)
        self.sections = state.sections
        self.answer = _Answer(self.model)
        #: Each path's warm-up, CPU ms per round (``resumed(path)``).
        self.warm_ms: dict[str, list[float]] = {"chat": [], "window": []}

    def _write_compacted(
        self,
        writer: JournalWriter,
        messages: Sequence[Message],
        rows: list[dict[str, Any]],
        size: int,
        *,
        full: bool,
    ) -> tuple[int, int]:
        """Journal ``rows`` a turn's worth at a time, compacting as the app does automatically:
        after each turn's rows, when the context the next request would carry passes the window
        less the reserve, the runtime's own automatic compaction runs. The runtime is given the
        state in effect at that point, so it journals no update of its own. Stops at ``size``
        rows, or with ``full`` at the last turn after them that needs no compaction; returns how
        many compactions ran and how many of ``rows`` were written."""
        state_now = effective_state(messages[:1])
        tools = _Tools(state_now.tools)
        prompt = _Prompt(state_now.sections)
        runtime = SessionRuntime(
            writer,
            SessionRoute(self.model, _identity(self.model), self.options),
            _Summarizer(),
            tools,
            prompt,
            new_id=new_row_id,
        )
        settings = CompactionSettings()
        window = self.model["contextWindow"]
        systems = [i for i, m in enumerate(messages) if m["role"] == "system"]
        compactions = 0
        start = 0
        written = 0  # rows journaled (in batches: each append is a durable write)
        context = 0  # the app's estimate of the view, kept up to date turn by turn
        last = len(rows) if full else min(size, len(rows))
        self._before_next = False
        for end in range(1, last + 1):
            if end < last and messages[end]["role"] != "user":
                continue  # a turn ends before the next user message
            turn = estimate_tokens(messages[start:end])
            if full and start >= size and should_compact(context + turn, window, settings):
                self._before_next = True
                break  # this turn would bring the next compaction: the session ends before it
            context += turn
            start = end
            due = should_compact(context, window, settings)
            if due or end - written >= 2000:
                writer.append(rows[written:end])
                written = end
            if not due:
                continue
            state_now = effective_state([messages[i] for i in systems if i < end])
            tools._tools, prompt._sections = state_now.tools, state_now.sections
            runtime.compact(reason="automatic")
            compactions += 1
            context = estimate_tokens(runtime.view().messages)
        writer.append(rows[written:start])
        self._last_context = context
        return compactions, start

    def resumed(self, turns: int, path: str = "chat") -> list[tuple[float, float, float]]:
        """Open the session as ``chat`` opens it and run ``turns`` turns: each one's thread CPU ms
        for the whole ``run_turn``, for its preparation alone (to the request reaching the
        dispatcher) and for encoding its body, the first turn first. The history is projected
        first (design X31) as ``path`` does it: ``chat`` before it reads its first line, the
        ``window`` while the user writes the first message; that warm-up's CPU ms is kept in
        ``warm_ms[path]``."""
        with JournalWriter.open(self.path) as writer:
            runtime = SessionRuntime(
                writer,
                SessionRoute(self.model, _identity(self.model), self.options),
                self.answer,
                self.tools,
                _Prompt(self.sections),
                new_id=new_row_id,
            )
            out = []
            start = time.thread_time()
            if path == "window":
                with bulk_load():  # as the worker warms it
                    runtime.warm(TEXT)
            else:
                runtime.warm("")  # as ``chat`` warms it: no draft yet
            self.warm_ms[path].append((time.thread_time() - start) * 1000)
            for _ in range(turns):
                start = time.thread_time()
                result = runtime.run_turn(TEXT)
                end = time.thread_time()
                assert self.answer.prepared is not None
                out.append(
                    ((end - start) * 1000, (self.answer.prepared - start) * 1000, self.answer.encode * 1000)
                )
                assert result.stopped == "stop", result
            self.messages = runtime.view().messages
        return out

    def full_ms(self) -> float:
        start = time.thread_time()
        project(self.model, deliver(self.messages, self.model, "folded"), self.options).body_bytes  # noqa: B018
        return (time.thread_time() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,50000,100000")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--turns", type=int, default=4, help="turns per session per round, the first included"
    )
    parser.add_argument("--apis", default=",".join(ROUTES))
    parser.add_argument(
        "--no-compacted",
        action="store_true",
        help="skip the largest size compacted as the app compacts automatically",
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    small = sizes[0]
    budgets = {50_000: 2.0}  # per turn, the first counted
    steady_budgets = {100_000: 2.0}
    with tempfile.TemporaryDirectory() as tmp:
        for api in args.apis.split(","):
            largest = Session(Path(tmp), api, max(sizes))
            sessions = {
                str(size): largest
                if size == largest.size
                else Session(Path(tmp), api, size, largest.additions)
                for size in sizes
            }
            if not args.no_compacted:
                # Each history longer than the model's window also as the app keeps it
                # (compacted automatically), the largest also at its last turn before the next.
                for size in sizes[1:]:
                    if sessions[str(size)].context > sessions[str(size)].model["contextWindow"]:
                        sessions[f"{size}c"] = Session(
                            Path(tmp), api, size, largest.additions, compacted=True
                        )
                sessions[f"{largest.size}cf"] = Session(
                    Path(tmp), api, largest.size, largest.additions, compacted=True, full=True
                )
            declared = {key: [t["name"] for t in s.tools.declarations()] for key, s in sessions.items()}
            assert all(names == declared[str(largest.size)] for names in declared.values()), (
                "tool sets differ"
            )
            paths = {
                **{key: functools.partial(session.resumed, args.turns) for key, session in sessions.items()},
                **{
                    f"{key}w": functools.partial(session.resumed, args.turns, "window")
                    for key, session in sessions.items()
                },
            }
            measured = interleave(paths, args.rounds)
            first = {key: [turns[0][0] for turns in measured[key]] for key in paths}
            steady = {key: [turn[0] for turns in measured[key] for turn in turns[1:]] for key in sessions}
            prepare = {key: [turn[1] for turns in measured[key] for turn in turns[1:]] for key in sessions}
            encode = {key: [turn[2] for turns in measured[key] for turn in turns[1:]] for key in sessions}
            per_turn = {
                key: [statistics.fmean(turn[0] for turn in turns) for turns in measured[key]] for key in paths
            }
            anchor = f"the same at {small:,} rows"
            base = str(small)
            for key, session in sessions.items():
                size = session.size
                budget, steady_budget = budgets.get(session.nominal), steady_budgets.get(session.nominal)
                window = session.model["contextWindow"]
                if session.compacted:
                    where = f"context {session.context:,} tokens of the window's {window:,}"
                    if session.full:
                        where += (
                            ", its last turn before the next compaction"
                            if session._before_next
                            else ", written on to the end of its transcript"
                        )
                    label = (
                        f"{api} {size:,} rows, compacted automatically {session.compactions} times ({where})"
                    )
                elif session.context > window:
                    # A history the app would have compacted long before: a body no provider
                    # accepts, measured as the code's own growth with history.
                    label = (
                        f"{api} {size:,} rows, never compacted (context {session.context:,} tokens,"
                        f" beyond the window's {window:,}: a body no provider accepts)"
                    )
                else:
                    label = f"{api} {size:,} rows"
                realistic = session.compacted or session.context <= window
                per = f"per turn over {args.turns}, first counted"
                window_path = "the window's path (warmed while the message is written)"
                chat_path = "chat's path (warmed before the first line is read)"
                # (figure, its values, the anchor's, budget, whether the budget is a headline)
                figures: list[tuple[str, list[float], list[float], float | None, bool]] = [
                    (f"{chat_path}, first turn", first[key], first[base], None, False),
                    (f"chat's path, {per}", per_turn[key], per_turn[base], budget, True),
                    ("chat's warm-up", session.warm_ms["chat"], sessions[base].warm_ms["chat"], None, False),
                    (f"{window_path}, first turn", first[f"{key}w"], first[f"{base}w"], None, False),
                    (f"the window's path, {per}", per_turn[f"{key}w"], per_turn[f"{base}w"], budget, True),
                    (
                        "the window's warm-up",
                        session.warm_ms["window"],
                        sessions[base].warm_ms["window"],
                        None,
                        False,
                    ),
                ]
                if steady[key]:
                    figures += [
                        ("steady turn", steady[key], steady[base], steady_budget, True),
                        ("steady turn, preparation alone", prepare[key], prepare[base], None, False),
                        ("steady turn, encoding the body alone", encode[key], encode[base], None, False),
                    ]
                for name, values, anchor_values, limit, headline in figures:
                    limit = limit if realistic else None
                    report(
                        f"{label}: {name}",
                        values,
                        anchor_values,
                        anchor_name=anchor,
                        unit="ms CPU",
                        budget=limit,
                        headline=headline and limit is not None,
                    )
                print(f"  {label}: the last body sent was {session.answer.body_mb:.1f} MB")
                print(f"  {label}: a from-scratch projection {session.full_ms():.1f} ms CPU")
            for session in sessions.values():
                session.answer.close()
            del sessions, largest
    print(
        "ms of this thread's CPU for the whole run_turn (prepare, encode, send over a local socket,"
        f" journal the answer); {load_average()}"
    )


if __name__ == "__main__":
    main()
