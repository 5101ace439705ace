"""Cache economics: what chronological system state costs against the alternatives (issue 9).

The design record's acceptance test: "compare cold and subsequent uncached tokens and
cumulative input cost across both short and longer synthetic conversations; no universal
savings or hit-rate guarantee is made." This benchmark runs two synthetic conversations
(short: 6 requests; long: about 80 requests with one manual compaction) through the real
session runtime (journal, prompt sections, tool gate, projections, HTTP dispatch) against
the loopback emulator, on six route classes, and then re-projects the very same journaled
transcripts with the alternative strategies and sends those bodies to a cold emulator cache
of their own:

* ``chronological`` — this design: what the runtime sent (system updates in place where the
  route is verified for them; Pi's folding where it is not).
* ``folded`` — Pi's fallback: the same transcript projected with the model's transport flags
  removed, so every system update folds into the leading system prompt and the current tool
  list is sent at request level.
* ``snapshot`` — the rejected alternative: the current effective system state (prompt
  sections *and* tool list) rebuilt as the one leading system message, later system messages
  dropped, projected with the route's own flags. The report says per route whether its bytes
  differ from ``folded``.

The two declaration policies on the verified deepseek-flash binding (fixed complete catalog
vs on-demand schemas, the ``tools.declarations`` setting) are two route classes run on the
same conversations.

Token figures are the emulator's (4 characters per token, each provider's documented prefix
rules); costs are ``calculate_cost`` at the published model's catalog prices, input side only
(fresh input, cache reads and cache writes; output is the same across strategies). The
theoretical minimum counts each distinct prompt token once: the same transcripts are projected
append-only (every transport flag of the API on, so updates and tool changes are appended in
place), and every request counts only the tokens past the longest prefix it shares with any
earlier request — what a perfect cache would still have to process.

    python benchmarks/cache_economics.py [--out docs] [--quick]
    pi-desktop bench cache [--out docs] [--quick]
"""

from __future__ import annotations

import argparse
import atexit
import hashlib
import json
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import httpx  # noqa: E402
import orjson  # noqa: E402

from desktop.emulator import Emulator  # noqa: E402
from desktop.emulator.conversation import read_anthropic, read_chat, read_responses  # noqa: E402
from desktop.emulator.tokens import CHARS_PER_TOKEN, estimate_tokens  # noqa: E402
from desktop.host.permissions import headless_bridge  # noqa: E402
from desktop.host.providers.client import send_streaming  # noqa: E402
from desktop.host.providers.request import WireRequest  # noqa: E402
from desktop.host.settings import Settings  # noqa: E402
from desktop.pi.catalog.transport import TRANSPORT_FLAGS, without_transport_flags  # noqa: E402
from desktop.pi.cost import calculate_cost  # noqa: E402
from desktop.pi.projection import ProviderRequest, RequestOptions, project  # noqa: E402
from desktop.pi.routes import emulator_route  # noqa: E402
from desktop.pi.transcript import collapse_system_messages  # noqa: E402
from desktop.pi.types import AssistantMessage, Message, Model  # noqa: E402
from desktop.session.assembly import OpenSession, SessionConfig, open_session  # noqa: E402
from desktop.session.dispatch import with_credential  # noqa: E402

Strategy = Literal["chronological", "folded", "snapshot"]
STRATEGIES: tuple[Strategy, ...] = ("chronological", "folded", "snapshot")

# ---------------------------------------------------------------------------------------------
# Accounting (pure): one request's figures, a run's summary, the theoretical minimum
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RequestFigures:
    """Input-side figures of one request, as the provider reports them and the catalog prices them."""

    total: int  # every prompt token: fresh + cache reads + cache writes
    cached: int  # served from the prompt cache
    written: int  # written to the cache (Anthropic; billed at the cache-write price)
    cost: float  # input-side dollars: fresh + reads + writes

    @property
    def uncached(self) -> int:
        """Tokens the provider processed without the cache (fresh input and cache writes)."""
        return self.total - self.cached


def figures(model: Mapping[str, Any], usage: Mapping[str, Any]) -> RequestFigures:
    """From a pi-ai usage (``input`` = fresh, ``cacheRead``, ``cacheWrite``) at the model's prices."""
    priced = {
        "input": int(usage["input"]),
        "output": 0,
        "cacheRead": int(usage["cacheRead"]),
        "cacheWrite": int(usage["cacheWrite"]),
        "cacheWrite1h": int(usage.get("cacheWrite1h") or 0),
    }
    cost = calculate_cost(model, priced)
    return RequestFigures(
        total=priced["input"] + priced["cacheRead"] + priced["cacheWrite"],
        cached=priced["cacheRead"],
        written=priced["cacheWrite"],
        cost=cost["input"] + cost["cacheRead"] + cost["cacheWrite"],
    )


@dataclass(frozen=True)
class Summary:
    requests: int
    cold_uncached: int  # first request
    later_uncached: int  # every request after the first
    total_input: int
    cached: int
    cost: float
    minimum: int  # theoretical minimum of uncached tokens (each distinct prompt token once)

    @property
    def uncached(self) -> int:
        return self.cold_uncached + self.later_uncached

    @property
    def hit_ratio(self) -> float:
        return self.cached / self.total_input if self.total_input else 0.0

    @property
    def over_minimum(self) -> float:
        """Uncached tokens as a multiple of the theoretical minimum."""
        return self.uncached / self.minimum if self.minimum else 0.0


def summarize(rows: Sequence[RequestFigures], minimum: int) -> Summary:
    if not rows:
        raise ValueError("a run needs at least one request to summarize")
    return Summary(
        requests=len(rows),
        cold_uncached=rows[0].uncached,
        later_uncached=sum(r.uncached for r in rows[1:]),
        total_input=sum(r.total for r in rows),
        cached=sum(r.cached for r in rows),
        cost=sum(r.cost for r in rows),
        minimum=minimum,
    )


@dataclass(frozen=True)
class PromptShape:
    """A request's prompt as the emulator measures it, for the theoretical minimum.

    Anthropic caches at block boundaries (``blocks``: canonical block texts in cache order);
    the automatic-prefix providers at any point of one canonical string (``text``).
    """

    blocks: tuple[str, ...] = ()
    text: str | None = None

    @property
    def tokens(self) -> int:
        if self.text is not None:
            return max(1, estimate_tokens(self.text))
        return sum(estimate_tokens(b) for b in self.blocks)


def prompt_shape(api: str, body: bytes) -> PromptShape:
    data = orjson.loads(body)
    if api == "anthropic-messages":
        return PromptShape(blocks=tuple(b.text for b in read_anthropic(data).blocks))
    if api == "openai-completions":
        return PromptShape(text=read_chat(data).prompt)
    if api in ("openai-responses", "openai-codex-responses", "azure-openai-responses"):
        return PromptShape(text=read_responses(data).prompt)
    raise ValueError(f"the benchmark has no prompt reader for API {api!r}")


def _common_prefix(a: str, b: str, at_least: int) -> int:
    """Length of the common prefix of ``a`` and ``b`` if longer than ``at_least``, else ``at_least``."""
    limit = min(len(a), len(b))
    if limit <= at_least or a[: at_least + 1] != b[: at_least + 1]:
        return at_least
    lo, hi = at_least + 1, limit  # a[:lo] == b[:lo]
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def new_tokens(shapes: Sequence[PromptShape]) -> list[int]:
    """Per request: tokens past the longest prefix shared with any earlier request.

    Their sum is the theoretical minimum of uncached tokens: a perfect cache (no minimum
    length, no step granularity, nothing evicted) still has to process each of them once.
    """
    out: list[int] = []
    seen_blocks: dict[bytes, int] = {}  # chained block digest -> cumulative tokens
    earlier: list[str] = []
    for shape in shapes:
        if shape.text is not None:
            shared = 0
            for previous in earlier:
                shared = _common_prefix(shape.text, previous, shared)
            earlier.append(shape.text)
            out.append(shape.tokens - shared // CHARS_PER_TOKEN)
            continue
        digest, tokens, shared_tokens = b"", 0, 0
        chain: list[tuple[bytes, int]] = []
        for block in shape.blocks:
            digest = hashlib.blake2b(digest + block.encode(), digest_size=16).digest()
            tokens += estimate_tokens(block)
            chain.append((digest, tokens))
            if digest in seen_blocks:
                shared_tokens = tokens
        seen_blocks.update(chain)
        out.append(tokens - shared_tokens)
    return out


def theoretical_minimum(shapes: Sequence[PromptShape]) -> int:
    return sum(new_tokens(shapes))


# ---------------------------------------------------------------------------------------------
# Sending requests and measuring them
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sent:
    body: bytes
    figures: RequestFigures


_HTTP: httpx.Client | None = None


def http_client() -> httpx.Client:
    """One client for the whole run: building one per request loads the CA store each time
    (about 50 ms), which would dominate a loopback benchmark. Still no connection pooling."""
    global _HTTP
    if _HTTP is None:
        _HTTP = httpx.Client(limits=httpx.Limits(max_keepalive_connections=0), follow_redirects=False)
        atexit.register(_HTTP.close)
    return _HTTP


def send(request: ProviderRequest | WireRequest, model: Model, on_event: Any = None) -> AssistantMessage:
    """Send one request over loopback with the Host client; the final message (fails loudly)."""
    wire = (
        request
        if isinstance(request, WireRequest)
        else WireRequest(
            url=request.url, body=request.body_bytes, headers=with_credential(request.headers, None)
        )
    )
    message = send_streaming(wire, model=model, on_event=on_event, client=http_client())
    if message["stopReason"] in ("error", "aborted"):
        raise RuntimeError(f"benchmark request failed: {message.get('errorMessage')}")
    return cast(AssistantMessage, message)


def measure(requests: Sequence[ProviderRequest | WireRequest], model: Model) -> list[Sent]:
    """Send requests in order (to the cache state the caller prepared) and price each one."""
    out = []
    for request in requests:
        usage = send(request, model)["usage"]
        body = request.body if isinstance(request, WireRequest) else request.body_bytes
        out.append(Sent(body, figures(model, usage)))
    return out


# ---------------------------------------------------------------------------------------------
# Route classes and strategies
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RouteClass:
    key: str
    label: str
    published: str  # "provider/model-id"
    emulated: bool  # the emulator stands in for the official endpoint (published flags kept)
    declarations: Literal["auto", "on-demand"] = "auto"


ROUTE_CLASSES: tuple[RouteClass, ...] = (
    RouteClass(
        "opus-native", "Anthropic, native tool changes (claude-opus-5-5)", "anthropic/claude-opus-5-5", True
    ),
    RouteClass(
        "sonnet-unflagged", "Anthropic, unflagged (claude-sonnet-5)", "anthropic/claude-sonnet-5", True
    ),
    RouteClass(
        "luna-responses", "Responses, additional tools (openai/gpt-5.6-luna)", "openai/gpt-5.6-luna", True
    ),
    RouteClass("flash-fixed", "deepseek-flash, fixed declarations", "deepseek/deepseek-flash", True),
    RouteClass(
        "flash-on-demand",
        "deepseek-flash, on-demand declarations",
        "deepseek/deepseek-flash",
        True,
        "on-demand",
    ),
    RouteClass(
        "relay-unverified",
        "Unverified relay of claude-opus-5-5 (conservative fallback)",
        "anthropic/claude-opus-5-5",
        False,
    ),
)


def append_only(model: Model) -> Model:
    """``model`` with every transport flag on: each system update and tool change is appended
    in place, so each request's prompt extends the previous one wherever the conversation
    allows. The theoretical minimum is measured on these bodies."""
    compat = {**(model.get("compat") or {}), **dict.fromkeys(TRANSPORT_FLAGS, True)}
    return cast(Model, {**model, "compat": compat})


def strategy_request(
    strategy: Strategy, model: Model, messages: Sequence[Message], options: RequestOptions
) -> ProviderRequest:
    """The request ``strategy`` sends for the transcript ``messages`` (the runtime's own for chronological)."""
    if strategy == "chronological":
        return project(model, list(messages), options)
    if strategy == "folded":
        return project(without_transport_flags(model), list(messages), options)  # type: ignore[arg-type]
    return project(model, collapse_system_messages(list(messages)), options)


# ---------------------------------------------------------------------------------------------
# The synthetic conversations
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One event: a user turn (``say``), or a change made between turns."""

    kind: Literal["say", "skill", "guidance", "compact"]
    text: str = ""
    name: str = ""


def say(text: str) -> Step:
    return Step("say", text)


def call(tool: str, args: Mapping[str, Any], text: str = "") -> Step:
    return Step(
        "say", f"{text or 'Please run ' + tool} [[tool:{tool} {json.dumps(dict(args), sort_keys=True)}]]"
    )


def search(names: Sequence[str], text: str = "I need more tools") -> Step:
    return Step("say", f"{text} [[search:select:{','.join(names)}]]")


def skill(name: str, description: str | None) -> Step:
    """Add or change (``description``) or remove (``None``) a workspace skill."""
    return Step("skill", description or "", name)


def guidance(text: str) -> Step:
    return Step("guidance", text)


def short_conversation() -> list[Step]:
    """Six requests: a greeting, a skill edit, a ToolSearch activation, a guidance change, a
    deferred tool with a mid-size result, and a closing question."""
    return [
        say("Hi! I'm picking this project up today. What should I look at first?"),
        skill("release-checklist", "Steps to cut a release: changelog, version bump, tag, announce."),
        search(["ci_log", "ci_runs"], "The nightly build is red; find me the CI tools."),
        guidance("Quote CI log lines verbatim when you cite them."),
        call("ci_log", {"run": 812, "lines": 60}, "Show the failing part of run 812."),
        say("Thanks. Summarize the failure in two sentences."),
    ]


def short_no_search_conversation() -> list[Step]:
    """Six requests with the same kinds of edits but no ToolSearch activation: the case where
    fixed declarations only cost (a larger first request) and never pay back."""
    return [
        say("Hi! I'm picking this project up today. What should I look at first?"),
        skill("release-checklist", "Steps to cut a release: changelog, version bump, tag, announce."),
        call("read", {"path": "README.md"}, "Read the README."),
        guidance("Quote file lines verbatim when you cite them."),
        call("ls", {"path": "src"}, "What is in src?"),
        say("Thanks. Summarize the layout in two sentences."),
    ]


def long_conversation() -> list[Step]:
    """About 80 requests: reads of varied size, greps, four ToolSearch activations, deferred
    tools with small and large results, skill additions/edits/removal, guidance changes and one
    manual compaction about two thirds in."""
    files = ["README.md", "src/app.py", "docs/notes.md", "src/big_module.py", "data/config.json"]
    steps: list[Step] = [
        say("Hi! I'm picking this project up today. Give me an orientation."),
        call("ls", {"path": "."}, "What is in the workspace?"),
        call("read", {"path": "README.md"}, "Read the README."),
        call("read", {"path": "src/app.py"}, "Now the entry point."),
        say("Which module is the riskiest to change? [[words:40]]"),
        skill("db-migrations", "How to write and test a schema migration for this project."),
        call("grep", {"pattern": "def ", "path": "src"}, "List the functions."),
        search(["issue_search", "issue_get"], "Find the issue tracker tools."),
        call("issue_search", {"query": "flaky login", "limit": 12}, "Search the tracker for flaky login."),
        call("issue_get", {"id": 4211}, "Open issue 4211."),
        guidance("Always link the issue id when you propose a fix."),
        call("read", {"path": "src/big_module.py"}, "Read the module the issue points at."),
        say("Propose a fix plan. [[words:60]]"),
        skill(
            "release-checklist", "Release steps: changelog, version bump, signed tag, announcement, rollback."
        ),
        search(["ci_log", "ci_runs"], "I need the CI tools too."),
        call("ci_runs", {"branch": "main"}, "Which runs failed on main?"),
        call("ci_log", {"run": 812, "lines": 220}, "Show the whole log of run 812."),
        say("Does the log confirm the plan? [[words:30]]"),
        call("read", {"path": "docs/notes.md"}, "Read the design notes."),
        call("grep", {"pattern": "session", "path": "."}, "Where is the session handled?"),
        call("issue_search", {"query": "session timeout", "limit": 30}, "Any related issues?"),
        skill("perf-profiling", "Profile a slow endpoint with py-spy and read the flame graph."),
        call("ci_log", {"run": 815, "lines": 25}, "And the short log of run 815."),
        say("Write the patch description. [[words:80]]"),
        guidance("Keep commit messages under 72 characters per line."),
        call("read", {"path": "data/config.json"}, "Check the config."),
        call("issue_get", {"id": 4302}, "Open issue 4302 too."),
        call("ci_runs", {"branch": "release/2.4"}, "And the release branch?"),
        say("What is left before we can merge? [[words:40]]"),
        call("read", {"path": "src/app.py"}, "Re-read the entry point after the change."),
        say("Good. Let's pause here."),
        Step("compact"),
        say("Back after the break: where were we?"),
        search(["metrics_query", "deploy_status"], "Find tools for metrics and deploys."),
        call("metrics_query", {"expr": "p95(login_latency)", "points": 90}, "Plot login latency."),
        call("deploy_status", {"env": "staging"}, "Is staging deployed?"),
        skill("perf-profiling", None),
        call("grep", {"pattern": "timeout", "path": "src"}, "Find the timeouts."),
        call("read", {"path": "src/big_module.py"}, "Read the module again."),
        guidance("Prefer feature flags over long-lived branches."),
        say("Draft the rollout plan. [[words:80]]"),
        call("metrics_query", {"expr": "error_rate(login)", "points": 40}, "Error rate?"),
        call("ci_log", {"run": 820, "lines": 120}, "Log of the new run 820."),
        skill("db-migrations", "Schema migrations: write, dry-run on a copy, then apply with a backup."),
        call("issue_search", {"query": "rollout", "limit": 8}, "Open rollout issues?"),
        call("deploy_status", {"env": "production"}, "And production?"),
        say("Summarize the state of the release. [[words:60]]"),
        search(["release_notes", "docs_lookup"], "Tools for release notes and the handbook?"),
        call("release_notes", {"since": "v2.4.0"}, "Draft the release notes since v2.4.0."),
        call("docs_lookup", {"topic": "feature flags"}, "What does the handbook say about flags?"),
        call("grep", {"pattern": "flag", "path": "."}, "Where are flags read?"),
        call("read", {"path": "README.md"}, "Does the README mention the flag?"),
        call("read", {"path": files[2]}, "One more look at the notes."),
        say("Thanks, that's all for today."),
    ]
    return steps


def quick_conversation(steps: Sequence[Step]) -> list[Step]:
    """The long conversation cut down for ``--quick`` (keeps its compaction and every event kind)."""
    cut = [s for i, s in enumerate(steps) if i < 14 or s.kind == "compact"]
    return [*cut, *[s for s in steps[-8:]]]


def requests_in(steps: Sequence[Step]) -> int:
    """Requests a script makes: one per plain turn, two per tool turn, one per compaction."""
    return sum(
        1 + ("[[tool:" in s.text or "[[search:" in s.text) if s.kind == "say" else s.kind == "compact"
        for s in steps
    )


# ---------------------------------------------------------------------------------------------
# The workspace: files of varied size, skills, guidance, and an extension with deferred tools
# ---------------------------------------------------------------------------------------------

EXTENSION = '''
"""Deferred tools for the cache economics benchmark: deterministic results of chosen size."""


def _lines(prefix, count, width=72):
    out = []
    for i in range(count):
        line = f"{prefix} {i:04d} " + ("status=ok " if i % 7 else "status=FAIL ") * 6
        out.append(line[:width])
    return "\\n".join(out)


TOOLS = {
    "issue_search": ("Search the issue tracker by keywords; returns matching issue ids and titles.",
                     {"query": {"type": "string"}, "limit": {"type": "integer"}}, ["query"],
                     lambda a: _lines("ISSUE-" + a["query"].replace(" ", "-"), int(a.get("limit", 10)))),
    "issue_get": ("Fetch one issue with its description, comments and linked commits.",
                  {"id": {"type": "integer"}}, ["id"],
                  lambda a: f"Issue {a['id']}\\n" + _lines("comment", 24, 96)),
    "ci_runs": ("List recent CI runs of a branch with their status and duration.",
                {"branch": {"type": "string"}}, ["branch"],
                lambda a: _lines("run@" + a["branch"], 10)),
    "ci_log": ("Fetch the log of one CI run, optionally only the last N lines.",
               {"run": {"type": "integer"}, "lines": {"type": "integer"}}, ["run"],
               lambda a: _lines(f"[run {a['run']}]", int(a.get("lines", 50)), 110)),
    "metrics_query": ("Query a time series from the metrics store (PromQL-like expression).",
                      {"expr": {"type": "string"}, "points": {"type": "integer"}}, ["expr"],
                      lambda a: _lines(a["expr"], int(a.get("points", 30)), 48)),
    "deploy_status": ("Current deployment of an environment: version, time, health checks.",
                      {"env": {"type": "string", "enum": ["staging", "production"]}}, ["env"],
                      lambda a: f"{a['env']}: v2.4.1 healthy (3/3 checks)"),
    "release_notes": ("Draft release notes from merged pull requests since a tag.",
                      {"since": {"type": "string"}}, ["since"],
                      lambda a: _lines("PR", 30)),
    "docs_lookup": ("Look up a topic in the internal engineering handbook.",
                    {"topic": {"type": "string"}}, ["topic"],
                    lambda a: _lines("handbook:" + a["topic"], 15, 90)),
}


def register(api):
    for name, (description, properties, required, handler) in TOOLS.items():
        schema = {"type": "object", "properties": properties, "required": required}
        api.register_tool(name, description, schema, handler, read_only=True)
'''


def _text_file(title: str, lines: int, width: int) -> str:
    body = [f"# {title}"]
    for i in range(lines):
        body.append(f"line {i:04d}: " + ("lorem ipsum dolor sit amet " * 8)[: width - 11])
    return "\n".join(body) + "\n"


def _python_file(name: str, functions: int) -> str:
    out = [f'"""{name}: synthetic module for the benchmark."""', ""]
    for i in range(functions):
        out += [
            f"def step_{i:03d}(session, timeout=30):",
            f'    """Handle step {i} of the login flow; retries on session timeout."""',
            f"    value = session.get('k{i}', {i})",
            "    return value * 2 if value else None",
            "",
        ]
    return "\n".join(out)


def make_workspace(root: Path) -> tuple[Path, Path, Path]:
    """(workspace, user skills dir, extension file) with deterministic contents."""
    workspace = root / "ws"
    (workspace / "src").mkdir(parents=True)
    (workspace / "docs").mkdir()
    (workspace / "data").mkdir()
    (workspace / "README.md").write_text(_text_file("Project README", 30, 70), encoding="utf-8")
    (workspace / "docs" / "notes.md").write_text(_text_file("Design notes", 60, 80), encoding="utf-8")
    (workspace / "src" / "app.py").write_text(_python_file("app", 40), encoding="utf-8")
    (workspace / "src" / "big_module.py").write_text(_python_file("big_module", 160), encoding="utf-8")
    (workspace / "data" / "config.json").write_text(
        json.dumps({"timeout": 30, "retries": 3, "flags": {"new_login": False}}, indent=2), encoding="utf-8"
    )
    (workspace / "AGENTS.md").write_text(
        "# Guidance\n\n- Run the tests before proposing a change.\n- Keep diffs small.\n", encoding="utf-8"
    )
    write_skill(workspace, "code-review", "Review a change for correctness, tests and readability.")
    write_skill(workspace, "debugging", "Reproduce, bisect and explain a failure before fixing it.")
    user_skills = root / "user-skills"
    user_skills.mkdir()
    extension = root / "ext" / "tracker.py"
    extension.parent.mkdir()
    extension.write_text(EXTENSION, encoding="utf-8")
    return workspace, user_skills, extension


def write_skill(workspace: Path, name: str, description: str | None) -> None:
    path = workspace / ".pi" / "skills" / name / "SKILL.md"
    if description is None:
        path.unlink()
        path.parent.rmdir()
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"---\nname: {name}\ndescription: {description}\n---\n\nSteps for {name}.\n", encoding="utf-8"
    )


# ---------------------------------------------------------------------------------------------
# Running a conversation through the real runtime
# ---------------------------------------------------------------------------------------------


@dataclass
class Dispatch:
    """One request the runtime sent: its transcript (None for a summary request), bytes and usage."""

    request: ProviderRequest
    messages: list[Message] | None
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
        self.view: Callable[[], list[Message]] | None = None
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


# ---------------------------------------------------------------------------------------------
# One measurement: conversation x route x strategy
# ---------------------------------------------------------------------------------------------


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
    results = [
        Result(
            conversation,
            recording.route,
            "chronological",
            recording.declaration_mode,
            summarize(chrono_rows, minimum),
            chrono_rows,
            floor,
        )
    ]
    bodies: dict[Strategy, list[bytes]] = {}
    for strategy in ("folded", "snapshot"):
        requests = [
            d.request
            if d.messages is None  # the summary request is the same in every strategy
            else strategy_request(strategy, model, d.messages, recording.options)
            for d in recording.dispatches
        ]
        emu.reset_cache()
        sent = measure(requests, model)
        bodies[strategy] = [s.body for s in sent]
        rows = [s.figures for s in sent]
        results.append(
            Result(
                conversation,
                recording.route,
                strategy,
                recording.declaration_mode,
                summarize(rows, minimum),
                rows,
                floor,
            )
        )
    chrono_bodies = [d.request.body_bytes for d in recording.dispatches]
    for result, own in zip(results, (chrono_bodies, bodies["folded"], bodies["snapshot"]), strict=True):
        result.same_as_folded = sum(a == b for a, b in zip(own, bodies["folded"], strict=True))
    return results


@dataclass(frozen=True)
class ConversationSpec:
    name: str
    steps: tuple[Step, ...]
    routes: tuple[str, ...] | None = None  # route class keys; None: all


FLASH_ROUTES = ("flash-fixed", "flash-on-demand")


def conversations(quick: bool = False) -> list[ConversationSpec]:
    long = long_conversation()
    return [
        ConversationSpec("short", tuple(short_conversation())),
        ConversationSpec("short-no-search", tuple(short_no_search_conversation()), FLASH_ROUTES),
        ConversationSpec("long", tuple(quick_conversation(long) if quick else long)),
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--out", default=str(REPO / "docs"), help="output folder (default: docs/)")
    parser.add_argument("--quick", action="store_true", help="a cut-down long conversation (smoke test)")
    args = parser.parse_args(argv)
    run(Path(args.out), quick=args.quick)
    return 0


def run(out: Path, *, quick: bool = False, log: Callable[[str], None] = print) -> list[Path]:
    """Measure everything and write the report into ``out``; returns the files written."""
    from benchmarks.cache_report import write_report

    started = time.perf_counter()
    results = run_all(quick, log)
    paths = write_report(results, conversations(quick), out, quick=quick)
    for path in paths:
        log(f"wrote {path}")
    log(f"done in {time.perf_counter() - started:.1f}s")
    return paths


if __name__ == "__main__":
    raise SystemExit(main())
