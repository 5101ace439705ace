"""`pi-desktop chat`: a headless multi-turn session, one user message per line of standard input
(design D7, X5).

Each line runs as one turn through the same runtime as ``prompt`` and the window; the session
stays open between turns, so the journal is parsed once and the route, tools and catalog are
set up once. The answer streams to standard output; with ``--jsonl`` standard output carries
only JSON lines instead (``session``, ``turn_start``, ``tool``, ``turn_end``, ``end``), with per
turn timing (wall, process CPU, this thread's CPU, and the CPU spent preparing the first
request), rows appended and usage. That is how long sessions are scripted and how the cost of a
turn is measured from outside. A failed turn is reported and the next line still runs; the exit
code is then 1.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Mapping
from typing import Any

from desktop.cli._args import EXIT_LOCAL, EXIT_TURN_FAILED, CliError, add_session_arguments
from desktop.cli._boundary import say
from desktop.cli.prompt import stream_text, usage_line, usage_totals


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "chat",
        help="run one turn per line of standard input (headless multi-turn)",
        description="Read one user message per line from standard input and run each as a turn of "
        "the session, printing the answers. Empty lines are skipped. Creates the session file when "
        "it is missing and its folder exists.",
    )
    add_session_arguments(parser, thresholds=True)
    parser.add_argument(
        "--jsonl",
        action="store_true",
        help="print events as JSON lines instead of the answers: turn start and end with timing "
        "(wallMs, cpuMs, threadCpuMs, prepareCpuMs), rows appended and usage",
    )
    parser.set_defaults(handler=run)


def _ms(seconds: float) -> float:
    return round(seconds * 1000.0, 3)


class _Emitter:
    """Writes one JSON object per line on standard output (orjson, flushed per event)."""

    def __init__(self) -> None:
        # Lazy: the --help budget.
        import orjson

        self._dumps = orjson.dumps

    def __call__(self, event: str, **fields: Any) -> None:
        sys.stdout.buffer.write(self._dumps({"event": event, **fields}) + b"\n")
        sys.stdout.flush()


class _TurnWatch:
    """The event sink of one turn: streams the answer (plain mode), collects tool results and
    times the turn, including the CPU spent until the first request was ready to send."""

    def __init__(self, *, stream: bool) -> None:

        self._stream = stream_text if stream else None
        self.tools: list[Mapping[str, Any]] = []
        self._prepared: float | None = None
        self._wall, self._cpu, self._thread = time.perf_counter(), time.process_time(), time.thread_time()

    def __call__(self, event: Mapping[str, Any]) -> None:
        if event.get("type") == "request" and self._prepared is None:
            self._prepared = time.thread_time() - self._thread
        if self._stream is not None:
            self._stream(event)
        elif event.get("type") == "row" and event["row"].get("type") == "toolResult":
            self.tools.append(event["row"]["message"])

    def timing(self) -> dict[str, float | None]:
        return {
            "wallMs": _ms(time.perf_counter() - self._wall),
            "cpuMs": _ms(time.process_time() - self._cpu),
            "threadCpuMs": _ms(time.thread_time() - self._thread),
            "prepareCpuMs": _ms(self._prepared) if self._prepared is not None else None,
        }


def _answer(messages: list[Mapping[str, Any]]) -> str:
    return "".join(
        block.get("text", "")
        for message in messages
        for block in message.get("content") or []
        if isinstance(block, dict) and block.get("type") == "text"
    )


def run(args: argparse.Namespace) -> int:
    # Lazy: the --help budget.
    from desktop.cli._session import opened, require_writable
    from desktop.host.journal import LocalPreparationFailure
    from desktop.host.journal.lines import keeping_decoded

    reconfigure = getattr(sys.stdin, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(errors="replace")  # a stray invalid byte becomes U+FFFD, not a crash
    emit = _Emitter() if args.jsonl else None
    failed = 0
    turns = 0
    # The first turn reads every message right after the open: the rows the reader decoded
    # are kept for it rather than decoded twice, then let go (design P7).
    with keeping_decoded(), opened(args) as (session, _emulator):
        require_writable(session)
        runtime = session.runtime
        route = session.config.route.label()
        warm_ms = _warm(runtime)
        if emit is not None:
            rows = len(session.writer.rows)
            emit("session", path=str(session.writer.path), route=route, rows=rows, warmCpuMs=warm_ms)
        else:
            print(f"# route: {route} — {session.capability().summary()}", file=sys.stderr)
        for raw in sys.stdin:
            text = raw.rstrip("\r\n")
            if not text.strip():
                continue
            turns += 1
            rows_before = len(session.writer.rows)
            watch = _TurnWatch(stream=emit is None)
            if emit is not None:
                emit("turn_start", turn=turns, text=text, rows=rows_before)
            try:
                result = runtime.run_turn(text, on_event=watch)
            except LocalPreparationFailure as error:
                raise CliError(
                    f"local preparation failure in turn {turns}: {error}", code=EXIT_LOCAL, path=error.path
                ) from error
            timing = watch.timing()
            totals = usage_totals(result.assistant)
            if result.error:
                failed += 1
            if emit is not None:
                for message in watch.tools:
                    emit(
                        "tool", turn=turns, name=message.get("toolName"), isError=bool(message.get("isError"))
                    )
                emit(
                    "turn_end",
                    turn=turns,
                    stop=result.stopped,
                    error=result.error,
                    requests=result.requests,
                    rowsAppended=len(session.writer.rows) - rows_before,
                    answer=_answer(list(result.assistant)),
                    usage=totals,
                    cache=_cache_summary(runtime),
                    **timing,
                )
            else:
                print()
                print(usage_line(result.requests, result.stopped, totals), file=sys.stderr)
                if result.error:
                    say(str(args.command), f"turn {turns} failed: {result.error}")
    if emit is not None:
        emit("end", turns=turns, failed=failed)
    return EXIT_TURN_FAILED if failed else 0


def _warm(runtime: Any) -> float:
    """Project the history before the first line is read, as the window does while the user
    writes (design X31): the first turn then builds only what it adds. This thread's CPU ms for
    it. A problem is left to the first turn, which meets it and reports it."""
    start = time.thread_time()
    with contextlib.suppress(Exception):
        runtime.warm("")
    return _ms(time.thread_time() - start)


def _cache_summary(runtime: Any) -> dict[str, Any]:
    """The session's cache hit ratio, misses (with causes) and re-cached tokens so far, from
    the replies' reported usage (design P10)."""
    # Lazy: the --help budget.
    from desktop.pi.cache_misses import transcript_summary

    summary = transcript_summary(runtime.view().messages).to_json()
    summary["missList"] = summary["missList"][-5:]  # the latest few, each with its cause and place
    return summary
