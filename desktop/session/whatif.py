"""What would this session have cost on other routes and delivery strategies? (design X3, P6)

A session's request sequence (one request per model call, each with the context the model was
given) is projected again for every route and strategy, read as that provider's cache reads it
and folded through a cold cache: the one prompt cache (``desktop.pi.prompt_cache``, over the
rules of ``desktop.pi.cache_rules``) the live cache view predicts with. Prices are the
catalog's (``desktop.pi.cost``). Everything here is pure but ``request_sequence``, which reads
the session file (never writing it).

Strategies (delivery of mid-conversation system state, Desktop's three):

* ``chronological``: system updates in place where the route accepts them (its published
  transport flags), else pi-ai folds them — what Pi Desktop sends;
* ``folded``: every update folded into the leading system prompt (the route's flags removed);
* ``attributed``: every update's text as a labelled user message where it happened, tool
  changes kept as system state (``desktop.pi.delivery``).

Each is also run with **fixed** declarations (every tool the session ever declared, in the
first request, never changed) when the session changed its tools after the first request;
``on-demand`` (as recorded) otherwise is the only one.

Figures per route and strategy: input tokens, uncached tokens (fresh input plus cache writes:
what the provider processed without the cache), cache writes, hit ratio, cost (input side and
output at the route's prices, the recorded output token counts), and the distance from the
theoretical minimum: each distinct prompt token uncached once, measured on the append-only
projection (every system update and tool change appended in place), at the granularity of
the prompt's parts (a tool, a system block, a message or content block).
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from desktop.host.foreign import detect_format
from desktop.host.journal import model_order, read_session
from desktop.host.journal.reader import Diagnostic
from desktop.pi.cache_rules import (
    CHARS_PER_TOKEN,
    CacheRule,
    CacheUsage,
    CanonicalMemo,
    Prompt,
    prompt_for_model,
)
from desktop.pi.catalog import default_catalog
from desktop.pi.catalog.transport import TRANSPORT_FLAGS, without_transport_flags
from desktop.pi.cost import calculate_cost, usage_count
from desktop.pi.delivery import FallbackDelivery
from desktop.pi.projection import (
    CREDENTIAL_PLACEHOLDER,
    ProjectionError,
    ProviderRequest,
    RequestOptions,
    project,
)
from desktop.pi.projection.incremental import IncrementalProjection
from desktop.pi.prompt_cache import FreshCounter, PromptCache, PromptView, view_of
from desktop.pi.routes import resolve_model, route_from_string
from desktop.pi.transcript import declared_tools
from desktop.pi.types import Message, Model, SystemMessage, Tool
from desktop.session.billed_density import MIN_STEPS, billed_density, scaled, tokenizer_of
from desktop.session.foreign import open_foreign
from desktop.session.history import context_view, row_message
from desktop.session.prefix import Prefix
from desktop.session.whatif_replay import PromptReader

Delivery = Literal["chronological", "folded", "attributed"]
DELIVERIES: tuple[Delivery, ...] = ("chronological", "folded", "attributed")
Declarations = Literal["on-demand", "fixed"]
#: Requests further apart than this would have found a short-retention cache expired.
SHORT_TTL_MS = 5 * 60 * 1000
_FORMAT_NAMES = {"claude-code": "Claude Code", "codex": "Codex CLI"}


# --- the request sequence -------------------------------------------------------------------


@dataclass(frozen=True)
class RequestSequence:
    """Every model call of one branch of a session: what it was given and what it answered."""

    path: Path
    format: str
    session_id: str | None
    #: The context of each request, in pi-ai's neutral shape.
    requests: Sequence[Sequence[Message]]
    #: Output tokens the recorded reply reported (0 when unknown).
    output_tokens: list[int]
    #: When each reply was recorded (Unix ms), when known.
    timestamps: list[int | None]
    #: The file records no system prompt and tools (Claude Code, Codex CLI): not in the replay.
    system_known: bool = True
    #: Lines the reader set aside or read as unknown, each with file, line and field (design T9).
    problems: tuple[Diagnostic, ...] = ()
    #: The recorded replies (usage as the provider billed it, provider, model), when known.
    replies: tuple[Mapping[str, Any] | None, ...] = ()
    #: A stand-in system prompt the provider already held when the file starts (the first
    #: request read it from the cache): each pass starts with it cached.
    warm_head: Message | None = None
    #: How many requests of each kind are replayed: the current branch, other branches of
    #: the file, sub-agents (sidechains and the sub-agent files) (design X9).
    replayed: Mapping[str, int] = dataclasses.field(default_factory=dict)


def request_sequence(path: str | os.PathLike[str], *, leaf: str | None = None) -> RequestSequence:
    """Read the request sequence of any session file (Desktop, pi, Claude Code, Codex); read-only.

    Raises ``ValueError`` with one line naming the file when it is not a session.
    """
    where = Path(path)
    detected = detect_format(where)
    if detected.format == "desktop":
        return _desktop_sequence(where)
    if detected.format == "unknown":
        raise ValueError(detected.description)
    session = open_foreign(where)
    calls: list[tuple[Sequence[Message], int, int | None, Any]] = []
    counts = {"currentBranch": 0, "otherBranches": 0, "subAgents": 0}
    seen: set[str] = set()
    walked = _replayed_branches(session, leaf)
    for branch, kind in walked:
        rows = {row.id: row for row in session.timeline(branch) if row.kind in ("assistant", "error")}
        for rid, messages in session.request_contexts(branch):
            if rid in seen:  # a request on the path two branches share is replayed once
                continue
            seen.add(rid)
            counts[kind] += 1
            row = rows.get(rid)
            reply = row.message if row else None
            calls.append((messages, _billed(reply, "output"), row.ts if row else None, reply))
    if len(calls) > 1 and len(walked) > 1:  # the lanes interleave in time
        calls.sort(key=lambda call: call[2] if call[2] is not None else 0)
    return RequestSequence(
        where,
        session.format,
        session.session_id,
        [call[0] for call in calls],
        [call[1] for call in calls],
        [call[2] for call in calls],
        system_known=session.format == "pi",
        problems=tuple(session.diagnostics),
        replies=tuple(call[3] for call in calls),
        replayed=counts,
    )


def _replayed_branches(session: Any, leaf: str | None) -> list[tuple[str | None, str]]:
    """Which branches a replay walks, each with its kind (design X9): a Claude Code file
    without a chosen branch is replayed whole, every request it records (the abandoned
    branches and the sub-agents were billed too); otherwise the branch and the sub-agents it
    ran."""
    if leaf is None and session.format == "claude-code":
        return [
            (b.leaf, "currentBranch" if b.current else "subAgents" if b.sidechain else "otherBranches")
            for b in session.branches()
        ]
    return [(leaf, "currentBranch"), *((lane, "subAgents") for lane in session.lanes(leaf))]


def _desktop_sequence(path: Path) -> RequestSequence:
    """A Desktop journal read without its writer (no lock): the context before each reply."""
    log = read_session(path)
    ordered = model_order(log.rows)
    requests: list[Sequence[Message]] = []
    outputs: list[int] = []
    stamps: list[int | None] = []
    current: list[Message] = []
    for index, row in enumerate(ordered):
        message = row_message(row)
        if row.get("type") == "assistant" and message is not None:
            requests.append(Prefix(current, len(current)))  # shared, not copied
            outputs.append(_billed(message, "output"))
            ts = message.get("timestamp")
            stamps.append(ts if isinstance(ts, int) else None)
        if row.get("type") == "compaction":
            current = list(context_view(ordered[: index + 1]).messages)
        elif message is not None:
            current.append(message)
    header = log.header or {}
    session_id = header.get("id")
    return RequestSequence(
        path,
        "desktop",
        session_id if isinstance(session_id, str) else None,
        requests,
        outputs,
        stamps,
        problems=tuple(log.diagnostics),
        replayed={"currentBranch": len(requests), "otherBranches": 0, "subAgents": 0},
    )


# --- strategies -----------------------------------------------------------------------------


def changes_tools_later(messages: Sequence[Message]) -> bool:
    """Whether any system message after the first message adds or removes tools."""
    return any(m["role"] == "system" and (m.get("toolsAdded") or m.get("toolsRemoved")) for m in messages[1:])


def append_only(model: Model) -> Model:
    """``model`` with every transport flag on: each update is appended in place (the minimum's bodies)."""
    compat = {**(model.get("compat") or {}), **dict.fromkeys(TRANSPORT_FLAGS, True)}
    return cast(Model, {**model, "compat": compat})


class _FixedView:
    """Each request's messages with ``tools`` declared by the leading system message and never
    changed (the fixed-declarations strategy), each made from the previous one: the messages a
    request shares with the previous one (the same objects) keep their results, in one list
    that only grows while the history does, so a request costs what it adds (the whole history
    per request made a fixed-declarations pass quadratic, design X8) and successive requests
    share their message objects (what the incremental projection needs to see an unchanged
    history)."""

    def __init__(self, tools: Sequence[Tool]) -> None:
        self.tools = tools
        #: Each system message's result by its identity (the message held, so its id names
        #: nothing else), kept when the history is rewritten: a repeated message keeps its
        #: result object.
        self._memo: dict[tuple[int, bool], tuple[Message, list[Message]]] = {}
        self._before: Sequence[Message] = ()
        self._out: list[Message] = []
        #: ``_ends[i]``: how many results the first ``i`` messages give (the head included).
        self._ends: list[int] = [0]

    def __call__(self, messages: Sequence[Message]) -> Sequence[Message]:
        kept = min(_stable(self._before, messages), len(self._ends) - 1)
        if kept == 0:
            lead = bool(self.tools) and (not messages or messages[0]["role"] != "system")
            self._out = [self._head()] if lead else []
            self._ends = [len(self._out)]
        elif kept < len(self._ends) - 1:
            # The history was rewritten: a new list (the requests made already keep the old one).
            self._out = self._out[: self._ends[kept]]
            del self._ends[kept + 1 :]
        out, ends = self._out, self._ends
        for index in range(kept, len(messages)):
            message = messages[index]
            if message["role"] == "system":
                out.extend(self._system(message, index == 0))
            else:
                out.append(message)
            ends.append(len(out))
        self._before = messages
        return Prefix(out, len(out))

    def _system(self, message: Message, first: bool) -> list[Message]:
        slot = (id(message), first)
        hit = self._memo.get(slot)
        if hit is None or hit[0] is not message:
            hit = (message, self._one(message, first))
            self._memo[slot] = hit
        return hit[1]

    def _one(self, message: Message, first: bool) -> list[Message]:
        rest = {k: v for k, v in message.items() if k not in ("toolsAdded", "toolsRemoved")}
        if first:
            return [cast(SystemMessage, {**rest, "toolsAdded": list(self.tools)})]
        return [cast(SystemMessage, rest)] if rest.get("content") or rest.get("sections") else []

    def _head(self) -> Message:
        hit = self._memo.get((0, True))
        if hit is None:
            head: SystemMessage = {
                "role": "system",
                "content": "",
                "toolsAdded": list(self.tools),
                "timestamp": 0,
            }
            hit = (head, [head])
            self._memo[(0, True)] = hit
        return hit[1][0]


def _stable(before: Sequence[Message], messages: Sequence[Message]) -> int:
    """How many leading messages are the same objects as in the previous request: all of the
    previous ones when the history only grew (checked at its ends), else counted."""
    n = len(before)
    if n and len(messages) >= n and messages[n - 1] is before[n - 1] and messages[0] is before[0]:
        return n
    pairs = zip(before, messages, strict=False)
    return next((i for i, (a, b) in enumerate(pairs) if a is not b), min(n, len(messages)))


def _engine_requests(
    model: Model,
    requests: Sequence[Sequence[Message]],
    delivery: Delivery,
    tools: Sequence[Tool] | None,
    options: RequestOptions,
) -> tuple[Model, Iterator[ProviderRequest]]:
    """Each request projected for one strategy through one incremental projection (design
    P7): each request is made from the previous one, encoding what it adds."""
    target = model if delivery == "chronological" else cast(Model, without_transport_flags(model))
    fallback: FallbackDelivery = "attributed" if delivery == "attributed" else "folded"
    # The replay reads values, never the bytes: the engine keeps no encoded history (X12).
    engine = IncrementalProjection(target, options, fallback, keep_bytes=False)
    view = _FixedView(tools) if tools is not None else None

    def run() -> Iterator[ProviderRequest]:
        before: Sequence[Message] = ()
        for messages in requests:
            transcript = view(messages) if view is not None else messages
            request = engine.request(transcript, _stable(before, transcript))
            before = transcript
            yield request

    return target, run()


def prompts_for(
    model: Model,
    requests: Sequence[Sequence[Message]],
    delivery: Delivery,
    tools: Sequence[Tool] | None,
    options: RequestOptions,
) -> Iterator[Prompt]:
    """Each request projected for one strategy and read whole as its provider caches it (the
    first request's size for the hidden prefix; a pass reads ``views_for`` instead)."""
    target, made = _engine_requests(model, requests, delivery, tools, options)
    canon = CanonicalMemo()
    for request in made:
        yield prompt_for_model(target, request.body, canon)


def views_for(
    model: Model,
    requests: Sequence[Sequence[Message]],
    delivery: Delivery,
    tools: Sequence[Tool] | None,
    options: RequestOptions,
    tick: Callable[[int], None] | None = None,
) -> Iterator[PromptView]:
    """Each request projected for one strategy and read as its provider caches it, each
    derived from the previous one (design X8): the committed history is read once, so a
    pass costs what the session adds. ``tick`` is called with each request's index first
    (progress and cancel)."""
    target, made = _engine_requests(model, requests, delivery, tools, options)
    reader = PromptReader(target)
    for index, request in enumerate(made):
        if tick is not None:
            tick(index)
        yield reader.read(request)


# --- the theoretical minimum ------------------------------------------------------------------


def fresh_tokens(views: Iterable[PromptView], warm: PromptView | None = None) -> list[int]:
    """Per request: its tokens past the longest prefix of whole parts any earlier request had.

    The sum is the theoretical minimum of uncached tokens: a perfect cache (no minimum length,
    no step, no expiry) still processes each of them once. Each request hashes what it adds
    (``FreshCounter``). ``warm`` is what an earlier session cached (the warm stand-in): no
    request of this one had to process it.
    """
    counter = FreshCounter()
    if warm is not None:
        counter.add(warm)
    return [counter.add(view) for view in views]


# --- figures ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Figures:
    """One route and strategy over the whole sequence."""

    strategy: str
    requests: int
    input_tokens: int
    cache_reads: int
    cache_writes: int
    #: Fresh input plus cache writes: what the provider processed without the cache.
    uncached_tokens: int
    input_cost: float
    output_cost: float
    minimum: int
    #: Cost after each request (the chart's line).
    cumulative_cost: list[float] = field(default_factory=list)

    @property
    def hit_ratio(self) -> float:
        return self.cache_reads / self.input_tokens if self.input_tokens else 0.0

    @property
    def cost(self) -> float:
        return self.input_cost + self.output_cost

    @property
    def over_minimum(self) -> int:
        """Uncached tokens beyond the theoretical minimum."""
        return self.uncached_tokens - self.minimum

    @property
    def minimum_ratio(self) -> float:
        """Uncached tokens as a multiple of the theoretical minimum."""
        return self.uncached_tokens / self.minimum if self.minimum else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "strategy": self.strategy,
            "requests": self.requests,
            "inputTokens": self.input_tokens,
            "uncachedTokens": self.uncached_tokens,
            "cacheReads": self.cache_reads,
            "cacheWrites": self.cache_writes,
            "hitRatio": round(self.hit_ratio, 4),
            "inputCost": round(self.input_cost, 6),
            "outputCost": round(self.output_cost, 6),
            "cost": round(self.cost, 6),
            "minimumUncachedTokens": self.minimum,
            "overMinimumTokens": self.over_minimum,
            "minimumRatio": round(self.minimum_ratio, 4),
            "cumulativeCost": [round(c, 6) for c in self.cumulative_cost],
        }


def figures(
    strategy: str, model: Model, usages: Sequence[CacheUsage], outputs: Sequence[int], minimum: int
) -> Figures:
    input_cost = output_cost = 0.0
    cumulative: list[float] = []
    for usage, output in zip(usages, outputs, strict=True):
        cost = usage.cost(model, output)
        output_cost += cost["output"]
        input_cost += cost["total"] - cost["output"]
        cumulative.append(input_cost + output_cost)
    return Figures(
        strategy,
        len(usages),
        sum(u.total for u in usages),
        sum(u.read for u in usages),
        sum(u.written for u in usages),
        sum(u.total - u.read for u in usages),
        input_cost,
        output_cost,
        minimum,
        cumulative,
    )


@dataclass(frozen=True)
class RouteResult:
    route: str
    api: str
    rule: CacheRule
    #: Dollars per million tokens (input, output, cacheRead, cacheWrite).
    prices: Mapping[str, float]
    minimum: int
    strategies: list[Figures]
    #: The catalog prices the model; without a price every cost is "price unknown", not $0.
    price_known: bool = True

    def to_json(self) -> dict[str, Any]:
        strategies = [f.to_json() for f in self.strategies]
        if not self.price_known:
            for item in strategies:
                item.update(inputCost=None, outputCost=None, cost=None, cumulativeCost=None)
        return {
            "route": self.route,
            "api": self.api,
            "cacheRule": {"name": self.rule.name, "description": self.rule.description},
            "pricesPerMillion": dict(self.prices),
            "priceKnown": self.price_known,
            "minimumUncachedTokens": self.minimum,
            "strategies": strategies,
        }


@dataclass(frozen=True)
class WhatIf:
    source: str
    format: str
    requests: int
    routes: list[RouteResult]
    assumptions: list[str]
    catalog: Mapping[str, Any]
    #: Whether the file records the system prompt and tools, and the stand-in's estimate.
    hidden: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    #: The route the replies were recorded on and what their billed usage cost there.
    recorded: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    #: Which requests were replayed, by kind (``RequestSequence.replayed``) (design X9).
    replayed: Mapping[str, int] = dataclasses.field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "session": self.source,
            "format": self.format,
            "requests": self.requests,
            "replayed": dict(self.replayed),
            "routes": [r.to_json() for r in self.routes],
            "systemPrompt": dict(self.hidden),
            "recorded": dict(self.recorded),
            "assumptions": list(self.assumptions),
            "catalog": dict(self.catalog),
        }


def _prices(model: Model) -> dict[str, float]:
    cost: Mapping[str, Any] = model.get("cost") or {}
    return {k: float(cost.get(k, 0) or 0) for k in ("input", "output", "cacheRead", "cacheWrite")}


def _billed(reply: Mapping[str, Any] | None, key: str) -> int:
    """The reply's billed usage field ``key`` when it is a positive count, else 0."""
    return usage_count(reply.get("usage") if isinstance(reply, Mapping) else None, key)


def _usage_tokens(reply: Mapping[str, Any] | None) -> int:
    return sum(_billed(reply, key) for key in ("input", "cacheRead", "cacheWrite"))


def recorded_route(sequence: RequestSequence) -> str | None:
    """The "provider/model" the first recorded reply came from, when the file says."""
    for reply in sequence.replies:
        if isinstance(reply, Mapping) and reply.get("provider") and reply.get("model"):
            return f"{reply['provider']}/{reply['model']}"
    return None


def hidden_prefix(sequence: RequestSequence, model: Model, density: float = 1.0) -> int:
    """Tokens of the system prompt and tools a file does not record (Claude Code), estimated
    from the usage the provider billed: the first request's input (fresh, read and written)
    less what the replay of that request holds (in the provider's units at ``density``,
    design P15). 0 when the file records them."""
    if sequence.system_known or not sequence.requests or not sequence.replies:
        return 0
    billed = _usage_tokens(sequence.replies[0])
    options = RequestOptions(session_id=sequence.session_id, api_key=CREDENTIAL_PLACEHOLDER)
    replayed = next(iter(prompts_for(model, sequence.requests[:1], "chronological", None, options)))
    return max(0, billed - round(replayed.total_tokens * density))


def calibrated_density(sequence: RequestSequence, model: Model, steps: _Steps | None = None) -> float | None:
    """The recorded provider's tokens per estimated token (``billed_density``), from one
    chronological pass on the recorded route (``model``) without expiry: its sizes against the
    billed input of each reply (design P15). None when the replies carry no usage to read."""
    billed = [_usage_tokens(reply) for reply in sequence.replies]
    if sum(1 for tokens in billed if tokens > 0) <= MIN_STEPS:
        return None
    tick = steps.start(f"{model.get('provider')}/{model.get('id')}", "calibration") if steps else None
    usages = strategy_usages(sequence, model, "chronological", None, None, tick)
    if steps is not None:
        steps.finish()
    return billed_density(billed[: len(usages)], [usage.total for usage in usages])


def _warmed(
    sequence: RequestSequence,
    model: Model,
    delivery: Delivery,
    options: RequestOptions,
    times: Sequence[int | None] | None,
) -> PromptCache:
    """A cold cache, or one already holding the stand-in system prompt when the file's first
    request read it from the provider's cache (a session resumed warm)."""
    cache = PromptCache()
    target = model if delivery == "chronological" else cast(Model, without_transport_flags(model))
    warm = _warm_view(sequence, target, options)
    if warm is not None:
        first = times[0] if times else None
        cache.account(warm, None if first is None else first - 1)
    return cache


def _warm_view(sequence: RequestSequence, target: Model, options: RequestOptions) -> PromptView | None:
    """The request an earlier session cached the warm stand-in with, as ``target`` reads it."""
    if sequence.warm_head is None:
        return None
    try:
        body = project(target, [sequence.warm_head], options).body
    except ProjectionError:
        # Gemini takes no request without a turn: the warm prefix is cached behind one that
        # no later request shares (only the system prompt before it is read again).
        turn = cast(Message, {"role": "user", "content": "(earlier session)", "timestamp": 0})
        body = project(target, [sequence.warm_head, turn], options).body
    return view_of(prompt_for_model(target, body))


def with_hidden_prefix(sequence: RequestSequence, tokens: int, density: float = 1.0) -> RequestSequence:
    """The sequence with a stand-in leading system prompt of ``tokens`` billed tokens (the same
    objects in every request, so it is a stable prefix like the real one), written as
    ``tokens / density`` estimated tokens (design P15). The part the first recorded request
    read from the cache is held warm (a session resumed warm: Claude Code's own prompt, cached
    by earlier sessions); the rest, which that request wrote, starts cold (design P14)."""
    if tokens <= 0:
        return sequence
    first = sequence.replies[0] if sequence.replies else None
    warm_tokens = round(min(tokens, _billed(first, "cacheRead")) / density)
    hidden_tokens = round(tokens / density)
    label = "(system prompt and tools not recorded in the file) "
    heads: list[Message] = []
    warm: Message | None = None
    if warm_tokens:
        warm = cast(
            Message,
            {"role": "system", "content": label + "x" * (warm_tokens * CHARS_PER_TOKEN), "timestamp": 0},
        )
        heads.append(warm)
    if hidden_tokens > warm_tokens:
        rest = (hidden_tokens - warm_tokens) * CHARS_PER_TOKEN
        # Behind a warm system prompt, where Claude Code puts what it adds per session (project
        # memory, reminders): at the head of the messages. Alone, it is the system prompt.
        role = "user" if warm is not None else "system"
        heads.append(cast(Message, {"role": role, "content": label + "y" * rest, "timestamp": 0}))
    requests: list[Sequence[Message]] = []
    current: list[Message] = [*heads]
    before: Sequence[Message] = ()
    for index, messages in enumerate(sequence.requests):
        if index and warm is not None and len(heads) > 1 and _reads_within_hidden(sequence, index, tokens):
            # The billed read fell back inside the unrecorded prefix: what the file does not
            # record changed here (Claude Code's tools after /mcp, its memory after /clear).
            changed = f"{label}(changed at request {index + 1}) "
            text = changed + "y" * max(0, len(str(heads[-1]["content"])) - len(changed))
            heads = [heads[0], cast(Message, {**heads[-1], "content": text})]
            current, before = [*heads], ()
        # Shared, not copied (design X8): a request that extends the one before (the same
        # message objects) extends the same list; another lane starts a list of its own.
        if _stable(before, messages) != len(before):
            current, before = [*heads], ()
        current.extend(messages[len(before) :])
        requests.append(Prefix(current, len(current)))
        before = messages
    return dataclasses.replace(sequence, requests=requests, warm_head=warm)


def _reads_within_hidden(sequence: RequestSequence, index: int, hidden: int) -> bool:
    """Whether request ``index``'s billed read fell back inside the unrecorded prefix (of
    ``hidden`` tokens) and it wrote more than a provider's minimum after it, while the request
    before read or wrote more: the unrecorded prefix changed there."""
    if index >= len(sequence.replies):
        return False
    reply, before = sequence.replies[index], sequence.replies[index - 1]
    read = _billed(reply, "cacheRead")
    held = _billed(before, "cacheRead") + _billed(before, "cacheWrite")
    near = 0 < read <= hidden + max(256, hidden // 50)
    return near and _billed(reply, "cacheWrite") >= 1024 and held > read + 1024


def recorded_retention(sequence: RequestSequence) -> str | None:
    """``"long"`` when most of the cache writes the recorded replies were billed for are
    1-hour writes (Claude Code asks for them): the replay asks for the same retention
    (design P14); else None (the route's default)."""
    hour = sum(_billed(reply, "cacheWrite1h") for reply in sequence.replies)
    total = sum(_billed(reply, "cacheWrite") for reply in sequence.replies)
    return "long" if total and hour * 2 > total else None


def _replay_options(sequence: RequestSequence) -> RequestOptions:
    return RequestOptions(
        session_id=sequence.session_id,
        api_key=CREDENTIAL_PLACEHOLDER,
        cache_retention=recorded_retention(sequence),
    )


def recorded_cost(sequence: RequestSequence, model: Model) -> float | None:
    """What the recorded replies cost at ``model``'s prices (their billed usage), or None
    when the usage or the price is not known."""
    if not price_known(model) or not sequence.replies:
        return None
    total = 0.0
    for reply in sequence.replies:
        usage = reply.get("usage") if isinstance(reply, Mapping) else None
        if not isinstance(usage, Mapping):
            return None
        total += float(calculate_cost(model, dict(usage)).get("total", 0.0))
    return total


def price_known(model: Model) -> bool:
    """Whether the catalog gives the model a price (else its figures say "price unknown")."""
    cost = model.get("cost")
    if not isinstance(cost, Mapping):
        return False
    return any(isinstance(v, int | float) and v > 0 for v in (cost.get("input"), cost.get("output")))


def replay_times(sequence: RequestSequence) -> list[int | None] | None:
    """The recorded request times the replay expires caches by (design P9), or ``None`` when
    they are missing, out of order or in the future: then time is unknown and caches stay
    warm, as the live clock says."""
    stamps = sequence.timestamps
    if not stamps or any(t is None for t in stamps):
        return None
    known = cast(list[int], stamps)
    if any(b < a for a, b in itertools.pairwise(known)) or known[-1] > time.time() * 1000:
        return None
    return list(stamps)


class WhatIfCancelled(Exception):
    """The user cancelled the replay (the window's Cancel): nothing is shown as a result."""


@dataclass(frozen=True)
class Progress:
    """Where a replay is: which pass of how many, which request of how many."""

    route: str
    strategy: str
    #: Passes done before this one, of ``passes`` in all (every route and strategy, and each
    #: route's theoretical minimum).
    done: int
    passes: int
    request: int
    requests: int

    @property
    def fraction(self) -> float:
        within = self.request / self.requests if self.requests else 1.0
        return min(1.0, (self.done + within) / self.passes) if self.passes else 1.0

    def line(self) -> str:
        return (
            f"{self.fraction:.0%} · {self.route}: {self.strategy}, request {self.request + 1:,} of "
            f"{self.requests:,}"
        )


class _Steps:
    """Progress and cancel for one replay: ``tick`` is called before every request."""

    def __init__(
        self,
        passes: int,
        requests: int,
        progress: Callable[[Progress], None] | None,
        cancel: threading.Event | None,
    ) -> None:
        self.passes = passes
        self.requests = requests
        self.progress = progress
        self.cancel = cancel
        self.done = 0
        self.route = self.strategy = ""
        #: Report about a hundred times per pass (a report per request would cost more than
        #: the request on a long session; the cancel is still checked at every one).
        self.every = max(1, requests // 100)

    def start(self, route: str, strategy: str) -> Callable[[int], None]:
        self.route, self.strategy = route, strategy
        return self.tick

    def tick(self, index: int) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise WhatIfCancelled("the what-if replay was cancelled")
        if self.progress is not None and index % self.every == 0:
            self.progress(Progress(self.route, self.strategy, self.done, self.passes, index, self.requests))

    def finish(self) -> None:
        self.done += 1


def strategy_usages(
    sequence: RequestSequence,
    model: Model,
    delivery: Delivery,
    tools: Sequence[Tool] | None,
    times: Sequence[int | None] | None,
    tick: Callable[[int], None] | None = None,
) -> list[CacheUsage]:
    """One route x strategy pass: every request projected, read in cache order and folded
    through the provider's cache (expiring at ``times`` when given), each request derived
    from the previous one (design X8)."""
    options = _replay_options(sequence)
    cache = _warmed(sequence, model, delivery, options, times)
    views = views_for(model, sequence.requests, delivery, tools, options, tick)
    stamps: Iterable[int | None] = times if times is not None else itertools.repeat(None)
    return [cache.account(view, now) for view, now in zip(views, stamps, strict=False)]


def passes_per_route(sequence: RequestSequence, deliveries: Sequence[Delivery]) -> int:
    """The minimum's pass plus one per strategy (twice when tools change later)."""
    last = sequence.requests[-1] if sequence.requests else []
    return 1 + len(deliveries) * (2 if changes_tools_later(last) else 1)


def replay_route(
    sequence: RequestSequence,
    route: str,
    model: Model,
    deliveries: Sequence[Delivery] = DELIVERIES,
    *,
    retention: bool = True,
    steps: _Steps | None = None,
    density: float | None = None,
) -> RouteResult:
    """Every strategy of one route over the sequence, each through a cold cache of its own;
    with ``retention``, entries expire by the provider's rule at the recorded times (P9).
    Each pass is linear in the session (design X8). With ``density``, the token figures are
    the recorded provider's (design P15)."""
    steps = steps or _Steps(passes_per_route(sequence, deliveries), len(sequence.requests), None, None)
    times = replay_times(sequence) if retention else None
    options = _replay_options(sequence)
    requests = sequence.requests
    last = requests[-1] if requests else []
    declared = declared_tools(last) if changes_tools_later(last) else None
    tick = steps.start(route, "theoretical minimum")
    minimum_model = append_only(model)
    minimum = sum(
        fresh_tokens(
            views_for(minimum_model, requests, "chronological", None, options, tick),
            _warm_view(sequence, minimum_model, options),
        )
    )
    if density is not None:
        minimum = round(minimum * density)
    steps.finish()
    results: list[Figures] = []
    for tools in (None, declared) if declared is not None else (None,):
        for delivery in deliveries:
            name = delivery if tools is None else f"{delivery}, fixed declarations"
            tick = steps.start(route, name)
            usages = strategy_usages(sequence, model, delivery, tools, times, tick)
            if density is not None:
                usages = [scaled(usage, density) for usage in usages]
            results.append(figures(name, model, usages, sequence.output_tokens, minimum))
            steps.finish()
    rule = prompt_for_model(model, {}).rule
    return RouteResult(route, model["api"], rule, _prices(model), minimum, results, price_known(model))


def assumptions(
    sequence: RequestSequence,
    *,
    retention: bool = True,
    hidden: int = 0,
    density: float | None = None,
    calibrated: Sequence[str] = (),
) -> list[str]:
    """What the figures take for granted, said in the output and the JSON."""
    catalog = default_catalog().sources
    timed = retention and replay_times(sequence) is not None
    if timed:
        expiry = (
            "Cache entries expire by each provider's retention at the recorded request times "
            "(Anthropic and Bedrock 5 minutes, 1 hour when asked; OpenAI 5 minutes in memory, 24 hours "
            "when asked; Google and Mistral 5 minutes; DeepSeek 1 hour), refreshed by each use."
        )
    elif retention:
        expiry = (
            "Time unknown (a request has no recorded time, the times are out of order, or one is in "
            "the future): cache entries are assumed unexpired between requests."
        )
    else:
        expiry = "Cache entries are assumed unexpired between requests (retention not modelled)."
    out = [
        expiry,
        "Each route and strategy starts from a cold cache; requests are replayed in the recorded order.",
        "Token counts are the cache rules' estimate (4 characters per token) of each projected request, "
        "not a provider tokenizer; output tokens are the recorded replies' counts."
        if density is None or not calibrated
        else f"Token counts on {', '.join(calibrated)} are calibrated to the bill: the recorded provider "
        f"counted {density:.2f} tokens per estimated token (4 characters) of what each request added; "
        "other routes use the estimate. Output tokens are the recorded replies' counts.",
        f"Prices: the catalog's, per million tokens (pi-ai {catalog.pi_version} snapshot generated "
        f"{catalog.pi_generated_at or 'at an unknown date'}; models.dev {catalog.models_dev_stamp or 'not loaded'}).",
        "The theoretical minimum counts each distinct prompt part (tool, system block, message or "
        "content block) uncached once, on the append-only projection of the same requests.",
    ]
    stamps = [t for t in sequence.timestamps if t is not None]
    late = sum(1 for a, b in itertools.pairwise(stamps) if b - a > SHORT_TTL_MS)
    if late and not timed:
        out.append(
            f"{late} request(s) came more than 5 minutes after the previous one: with short retention "
            "their cache would have expired, so real figures there would be worse."
        )
    if not sequence.system_known and hidden:
        out.append(
            "The file records no system prompt or tool declarations (Claude Code): a stand-in prefix of "
            f"{hidden:,} tokens, estimated from the first request's billed input, is replayed in their place."
        )
    elif not sequence.system_known:
        out.append(
            f"The file records no system prompt or tool declarations ({_FORMAT_NAMES.get(sequence.format, sequence.format)}): the replay has "
            "none, so every route's figures leave out that fixed prefix."
        )
    return out


def what_if(
    sequence: RequestSequence,
    routes: Sequence[str],
    *,
    deliveries: Sequence[Delivery] = DELIVERIES,
    models: Mapping[str, Model] | None = None,
    retention: bool = True,
    progress: Callable[[Progress], None] | None = None,
    cancel: threading.Event | None = None,
    estimate_hidden: bool = True,
    calibrate: bool = True,
) -> WhatIf:
    """The table: every route (a "provider/model" key) by every strategy.

    ``models`` may give the Model for a route key (tests); else the catalog resolves it
    (raising ``RouteError`` naming an unknown route). A file without its system prompt and
    tools (Claude Code) is replayed with a stand-in prefix of the size its billed usage shows
    (``estimate_hidden``), and the recorded replies' cost is given beside the replay. With
    ``calibrate``, routes with the recorded model's tokenizer count tokens as its bill does
    (design P15).
    """

    def model_of(route: str) -> Model:
        return (models or {}).get(route) or cast(Model, resolve_model(route_from_string(route)).model)

    recorded: dict[str, Any] = {}
    origin = recorded_route(sequence)
    origin_model: Model | None = None
    if origin is not None:
        try:
            origin_model = model_of(origin)
        except Exception:  # a route the catalog does not know: no recorded cost, said so
            origin_model = None
        cost = recorded_cost(sequence, origin_model) if origin_model is not None else None
        recorded = {
            "route": origin,
            "cost": None if cost is None else round(cost, 6),
            "priceKnown": cost is not None,
        }
    hidden: dict[str, Any] = {"recorded": sequence.system_known}
    replayed = sequence
    models_by_route = {route: model_of(route) for route in routes}
    per_route = passes_per_route(sequence, deliveries)
    tokenizer = tokenizer_of(origin_model) if calibrate and origin_model is not None else None
    same_tokenizer = [route for route, model in models_by_route.items() if tokenizer_of(model) == tokenizer]
    steps = _Steps(per_route * len(routes) + bool(same_tokenizer), len(sequence.requests), progress, cancel)
    density: float | None = None
    if origin_model is not None and same_tokenizer:
        density = calibrated_density(sequence, origin_model, steps)
    calibration: dict[str, Any] = {
        "density": None if density is None else round(density, 4),
        "tokenizer": tokenizer,
        "routes": same_tokenizer if density is not None else [],
    }
    if recorded:
        recorded["calibration"] = calibration
    if not sequence.system_known and estimate_hidden and routes:
        base = origin_model or models_by_route[routes[0]]
        tokens = hidden_prefix(sequence, base, density or 1.0)
        hidden["estimatedTokens"] = tokens
        hidden["note"] = (
            "the file records no system prompt or tools; a stand-in of the size the first request's "
            "billed input shows (cache write plus input plus cache read, less the recorded messages) is replayed"
        )
        replayed = with_hidden_prefix(sequence, tokens, density or 1.0)
    results = [
        replay_route(
            replayed,
            route,
            model,
            deliveries,
            retention=retention,
            steps=steps,
            density=density if route in calibration["routes"] else None,
        )
        for route, model in models_by_route.items()
    ]
    sources = default_catalog().sources
    return WhatIf(
        str(sequence.path),
        sequence.format,
        len(sequence.requests),
        results,
        assumptions(
            sequence,
            retention=retention,
            hidden=int(hidden.get("estimatedTokens", 0)),
            density=density,
            calibrated=calibration["routes"],
        ),
        {
            "piVersion": sources.pi_version,
            "piGeneratedAt": sources.pi_generated_at,
            "modelsDev": sources.models_dev_stamp,
        },
        hidden,
        recorded,
        sequence.replayed,
    )
