"""Running a conversation through the real runtime and measuring it: conversation x route x strategy."""

from __future__ import annotations

import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from desktop.bench.accounting import RequestFigures, Summary, figures, new_tokens, summarize
from desktop.bench.cache_model import prompt_shape
from desktop.bench.chart import chart
from desktop.bench.report import CHART, write_report
from desktop.bench.scenario import Step, conversations
from desktop.bench.sending import measure, send
from desktop.bench.strategies import ROUTE_CLASSES, RouteClass, Strategy, strategy_request
from desktop.bench.workspace import make_workspace, write_skill
from desktop.emulator import Emulator
from desktop.host.permissions import headless_bridge
from desktop.host.settings import Settings
from desktop.pi.projection import ProviderRequest, RequestOptions, project
from desktop.pi.routes import emulator_route
from desktop.pi.types import Message, Model
from desktop.session.assembly import OpenSession, SessionConfig, open_session
from desktop.session.compaction import CompactionSettings
from desktop.session.whatif import append_only


@dataclass
class Dispatch:
    """One request the runtime sent: its transcript (None for a summary request), bytes and usage."""

    request: ProviderRequest
    messages: Sequence[Message] | None
    usage: Mapping[str, Any]


@dataclass
class Recording:
    route: RouteClass
    model: Model
    options: RequestOptions
    declaration_mode: str
    dispatches: list[Dispatch] = field(default_factory=list)


class RecordingDispatcher:
    """The runtime's dispatcher (as ``HttpDispatcher``, over one shared client), keeping what
    each request was projected from.

    At dispatch the runtime's view is exactly the transcript it projected (nothing is
    journaled between projection and dispatch), so the other strategies can re-project it.
    """

    def __init__(self) -> None:
        self.view: Callable[[], Sequence[Message]] | None = None
        self.summarizing = False
        self.dispatches: list[Dispatch] = []

    def __call__(
        self, request: ProviderRequest, model: Model, *, on_event: Any, cancel: threading.Event
    ) -> Any:
        assert self.view is not None
        messages = None if self.summarizing else self.view()
        message = send(request, model, lambda event: on_event({"type": "stream", "event": event}))
        self.dispatches.append(Dispatch(request, messages, message["usage"]))
        return message


#: The scripted conversations stay below the product's 20,000-token retained tail, where manual
#: compaction has nothing to compact yet (design C1); a smaller tail gives the scripted
#: ``compact`` step older turns to summarize.
BENCH_KEEP_RECENT_TOKENS = 4_000


@contextmanager
def _session(
    emu: Emulator, route: RouteClass, root: Path
) -> Iterator[tuple[OpenSession, RecordingDispatcher, Path]]:
    workspace, user_skills, extension = make_workspace(root)
    settings = Settings.model_validate(
        {"extensions": [str(extension)], "tools": {"declarations": route.declarations}}
    )
    config = SessionConfig(
        route=emulator_route(route.published, emu.url, emulated=route.emulated),
        workspace=workspace,
        settings=settings,
        user_skills=user_skills,
        compaction=CompactionSettings(keep_recent_tokens=BENCH_KEEP_RECENT_TOKENS),
    )
    recorder = RecordingDispatcher()
    session = open_session(
        root / "session.jsonl", config, bridge=headless_bridge(yes=True, no=False), dispatcher=recorder
    )
    recorder.view = lambda: session.runtime.view().messages
    with session:
        yield session, recorder, workspace


def run_conversation(emu: Emulator, route: RouteClass, steps: Sequence[Step], root: Path) -> Recording:
    """Drive ``steps`` through a fresh session on ``route``; the emulator cache starts cold."""
    emu.reset_cache()
    with _session(emu, route, root) as (session, recorder, workspace):
        if session.tools.problems:
            raise RuntimeError("; ".join(session.tools.problems))
        expected = "fixed" if route.key == "flash-fixed" else "on-demand"
        if session.gate.policy.mode != expected:
            raise RuntimeError(
                f"{route.key} should use {expected} declarations but the gate chose "
                f"{session.gate.policy.mode}: {session.gate.policy.reason}"
            )
        recording = Recording(
            route, session.runtime.route.model, session.runtime.route.options, session.gate.policy.mode
        )
        for step in steps:
            if step.kind == "say":
                result = session.runtime.run_turn(step.text)
                if result.stopped not in ("stop", "toolUse"):
                    raise RuntimeError(
                        f"turn {step.text[:40]!r} stopped with {result.stopped}: {result.error}"
                    )
            elif step.kind == "skill":
                write_skill(workspace, step.name, step.text or None)
            elif step.kind == "guidance":
                agents = workspace / "AGENTS.md"
                agents.write_text(agents.read_text(encoding="utf-8") + f"- {step.text}\n", encoding="utf-8")
            else:
                recorder.summarizing = True
                try:
                    session.runtime.compact()
                finally:
                    recorder.summarizing = False
        refused = [
            r for r in session.writer.rows if r.get("type") == "toolResult" and r["message"].get("isError")
        ]
        if refused:
            text = refused[0]["message"]["content"][0]["text"]
            raise RuntimeError(f"a tool call of the script failed on {route.key}: {text}")
        recording.dispatches = recorder.dispatches
    return recording


@dataclass
class Result:
    conversation: str
    route: RouteClass
    strategy: Strategy
    declaration_mode: str
    summary: Summary
    per_request: list[RequestFigures]
    minimum_per_request: list[int]
    same_as_folded: int = 0  # requests whose bytes equal the folded strategy's


def evaluate(emu: Emulator, conversation: str, recording: Recording) -> list[Result]:
    model = recording.model
    api = str(model["api"])
    chrono_rows = [figures(model, d.usage) for d in recording.dispatches]
    appended = append_only(model)
    shapes = [
        prompt_shape(
            api,
            d.request.body_bytes
            if d.messages is None
            else project(appended, list(d.messages), recording.options).body_bytes,
        )
        for d in recording.dispatches
    ]
    floor = new_tokens(shapes)
    minimum = sum(floor)
    #: Each strategy's request bodies and figures; the runtime's own are the chronological ones.
    sent_by: dict[Strategy, tuple[list[bytes], list[RequestFigures]]] = {
        "chronological": ([d.request.body_bytes for d in recording.dispatches], chrono_rows)
    }
    for strategy in ("folded", "snapshot"):
        requests = [
            d.request
            if d.messages is None  # the summary request is the same in every strategy
            else strategy_request(strategy, model, d.messages, recording.options)
            for d in recording.dispatches
        ]
        emu.reset_cache()
        sent = measure(requests, model)
        sent_by[strategy] = ([s.body for s in sent], [s.figures for s in sent])
    folded = sent_by["folded"][0]
    return [
        Result(
            conversation,
            recording.route,
            strategy,
            recording.declaration_mode,
            summarize(rows, minimum),
            rows,
            floor,
            sum(a == b for a, b in zip(bodies, folded, strict=True)),
        )
        for strategy, (bodies, rows) in sent_by.items()
    ]


def run_all(quick: bool = False, log: Callable[[str], None] = print) -> list[Result]:
    results: list[Result] = []
    with Emulator() as emu, tempfile.TemporaryDirectory(prefix="pi-bench-") as tmp:
        for spec in conversations(quick):
            name, steps = spec.name, spec.steps
            for index, route in enumerate(ROUTE_CLASSES):
                if spec.routes is not None and route.key not in spec.routes:
                    continue
                started = time.perf_counter()
                recording = run_conversation(emu, route, steps, Path(tmp) / f"{name}-{index}")
                results.extend(evaluate(emu, name, recording))
                log(
                    f"{name:15s} {route.key:17s} {len(recording.dispatches):3d} requests "
                    f"({recording.declaration_mode}) in {time.perf_counter() - started:.1f}s"
                )
    return results


def run(out: Path, *, quick: bool = False, log: Callable[[str], None] = print) -> list[Path]:
    """Measure everything and write the report into ``out``; returns the files written."""
    started = time.perf_counter()
    results = run_all(quick, log)
    paths = [write_report(results, conversations(quick), out, quick=quick), out / CHART]
    chart(results, paths[1])
    for path in paths:
        log(f"wrote {path}")
    log(f"done in {time.perf_counter() - started:.1f}s")
    return paths
