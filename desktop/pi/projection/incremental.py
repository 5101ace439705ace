"""The next request, built incrementally and byte-equal to a full rebuild (design P7).

A full projection costs about 13 µs per message, so a long session would spend most of a
turn rebuilding history that has not changed. ``IncrementalProjection`` keeps the encoded
history instead and projects only what a turn adds.

How it stays exact without a second implementation of each API:

- The history is cut at **turn boundaries**: a user message right after an assistant message
  that finished without tool calls. There every cross-message rule of every API is at rest:
  no tool call is pending (pi-ai's orphan rule), no system message is held (Anthropic holds
  them until the next assistant message), no tool results are being grouped, and the
  attributed fallback holds nothing back.
- A committed **segment** (the messages between two boundaries) is encoded once, by the API's
  own projector, inside a short *stand-in transcript*: every system message of the history
  (they decide the folded prompt, the tool lists and the tool-change modes), stand-in messages
  that put the segment in the same surroundings (a finished assistant turn before it, a tool
  exchange when the history has one, a user message after it that takes the cache markers),
  then the segment. Its wire items are cut out between the stand-ins and kept as bytes.
- Each request projects the stand-in transcript of the **tail** (everything after the last
  committed boundary, plus the pending system update and the draft). That projection gives the
  request's headers and every field outside the message list; the message list is the head
  items (the leading prompt), the committed segments' bytes, then the tail's items. The
  request shares the committed items and bytes (``_Spliced``) instead of copying them, so
  making it costs the tail, not the history.
- What a projector reads from the whole history is passed in (``TranscriptFacts``): pi-ai's
  context estimate behind ``max_tokens`` (kept incrementally here, the same arithmetic as
  ``estimate_context_tokens``) and, on the Responses APIs, the running message position that
  names assistant items.
- Anything the cut cannot express rebuilds from scratch: a history rewritten before the
  committed end (compaction, a reordered row), a change of the tool declarations carried by
  system messages on APIs whose items depend on them (every API but Anthropic Messages; not
  one that only declares new names the committed history never calls, design X10), a
  missing timestamp, a stand-in that came back marked, or a GitHub Copilot route (its headers
  read the whole history). A new route, fallback or option set is a new object.

``tests/pi/test_incremental_projection.py`` checks byte equality with the full projection on
random sessions for all ten APIs.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import islice
from typing import Any, cast, overload

import orjson

from desktop.pi.delivery import FallbackDelivery, attribute_updates, supports_native_system_updates
from desktop.pi.projection import (
    ProviderRequest,
    RequestOptions,
    _provider_options,
    paused_gc,
    projector_for,
)
from desktop.pi.projection._budget import estimate_message_tokens, usage_tokens
from desktop.pi.projection._facts import TranscriptFacts
from desktop.pi.projection._model_fields import check_model_fields
from desktop.pi.transcript import (
    current_system_message,
    current_tools,
    declared_tools,
    has_non_additive_tool_changes,
)
from desktop.pi.types import JsonObject, Message, Model

#: Where each API's body keeps the message list.
WIRE_PATHS: dict[str, tuple[str, ...]] = {
    "anthropic-messages": ("messages",),
    "openai-completions": ("messages",),
    "mistral-conversations": ("messages",),
    "openai-responses": ("input",),
    "azure-openai-responses": ("input",),
    "openai-codex-responses": ("input",),
    "google-generative-ai": ("contents",),
    "google-vertex": ("contents",),
    "bedrock-converse-stream": ("messages",),
    "pi-messages": ("context", "messages"),
}

_MARK = "pi_incremental_standin_5b1e"
_TOOL_MARK = (_MARK + "_tool").encode()
_TEXT_MARK = (_MARK + "_text").encode()
_USER_MARK = (_MARK + "_user").encode()
_PLACEHOLDER = _MARK + "_list"
_FAILED = ("error", "aborted")


class _Unsupported(Exception):
    """The committed history cannot be kept; start again from a full projection."""


class _NotThisTime(Exception):
    """This request cannot be spliced (the committed history stays valid); project it in full."""


def _is_boundary(messages: Sequence[Message], index: int) -> bool:
    """A user message right after an assistant message that finished without tool calls."""
    if index <= 0 or messages[index]["role"] != "user":
        return False
    previous = cast(Mapping[str, Any], messages[index - 1])
    if previous["role"] != "assistant" or previous.get("stopReason") in _FAILED:
        return False
    return not any(block.get("type") == "toolCall" for block in previous.get("content") or ())


def _has_tool_traffic(message: Mapping[str, Any]) -> bool:
    role = message["role"]
    if role == "toolResult":
        return True
    return role == "assistant" and any(
        block.get("type") == "toolCall" for block in message.get("content") or ()
    )


def _tool_key(message: Mapping[str, Any]) -> bytes | None:
    """The tool declarations a system message changes, or None when it changes none."""
    added, removed = message.get("toolsAdded"), message.get("toolsRemoved")
    if not added and not removed:
        return None
    return orjson.dumps([added or [], removed or []])


def _note_calls(message: Mapping[str, Any], names: set[str]) -> None:
    """Add the tool names ``message`` calls (an assistant message) or answers (a tool result)."""
    role = message["role"]
    if role == "toolResult":
        names.add(str(message.get("toolName")))
    elif role == "assistant":
        names.update(
            str(block.get("name"))
            for block in message.get("content") or ()
            if block.get("type") == "toolCall"
        )


def _adds_unused_tools(before: tuple[bytes, ...] | None, after: tuple[bytes, ...], called: set[str]) -> bool:
    """Whether the tool changes ``after`` only append to ``before`` declarations of new names
    that no committed message calls, the history having only ever added tools (design X10).

    Then every API converts the committed messages as it did: what a conversion reads from
    the declarations (a grammar tool's call format, whether additions stay in place) is read
    per called name or from whether any change was not an addition, and neither moved. The
    committed history stays; otherwise a tool change starts the projection again.
    """
    if not before or len(after) <= len(before) or after[: len(before)] != before:
        return False
    declared: set[str] = set()
    for index, key in enumerate(after):
        added, removed = orjson.loads(key)
        if removed:
            return False
        for tool in added:
            name = tool.get("name") if isinstance(tool, dict) else None
            if not isinstance(name, str) or name in declared or (index >= len(before) and name in called):
                return False
            declared.add(name)
    return True


@dataclass
class _Estimate:
    """pi-ai's context estimate over the committed messages, kept as they are committed."""

    total: int = 0
    latest: int | None = None
    #: (usage tokens, estimate of the messages after it) of the last usage that applies.
    usage: tuple[int, int] | None = None

    def add(self, message: Mapping[str, Any]) -> None:
        stamp = message.get("timestamp")
        if stamp is None:
            raise _Unsupported("a message without a timestamp")
        tokens = estimate_message_tokens(message)
        self.total += tokens
        applies = self.latest is None or stamp >= self.latest
        usage = self._usage(message) if applies else 0
        if usage > 0:
            self.usage = (usage, 0)
        elif self.usage is not None:
            self.usage = (self.usage[0], self.usage[1] + tokens)
        if self.latest is None or stamp > self.latest:
            self.latest = stamp

    @staticmethod
    def _usage(message: Mapping[str, Any]) -> int:
        if message["role"] != "assistant" or message.get("stopReason") in _FAILED:
            return 0
        return usage_tokens(message.get("usage"))

    def extend(self, messages: Sequence[Mapping[str, Any]]) -> None:
        """``add`` of each message in turn, estimating only the messages after the last usage
        that applies: once a usage applies, ``total`` is never read again (``with_tail``
        counts from the usage), so the messages before it need no estimate. A segment of
        50,000 messages (the first commit after an open) costs a pass over the timestamps and
        usages, as pi-ai's own estimate does, instead of an estimate of every message."""
        latest = self.latest
        found: tuple[int, int] | None = None
        for index, message in enumerate(messages):
            stamp = message.get("timestamp")
            if stamp is None:
                raise _Unsupported("a message without a timestamp")
            if latest is None or stamp >= latest:
                usage = self._usage(message)
                if usage > 0:
                    found = (index, usage)
                latest = stamp
        if found is None:
            for message in messages:
                self.add(message)
            return
        index, usage = found
        self.usage = (usage, 0)
        self.total = -1  # not read again: a usage applies from here on
        self.latest = latest
        after = messages[index + 1 :]
        if after:
            self.usage = (usage, sum(estimate_message_tokens(m) for m in after))

    def copy(self) -> _Estimate:
        return _Estimate(self.total, self.latest, self.usage)

    def with_tail(self, tail: Sequence[Mapping[str, Any]]) -> int:
        """``estimate_context_tokens`` of the committed messages followed by ``tail``."""
        probe = self.copy()
        for message in tail:
            probe.add(message)
        if probe.usage is None:
            return probe.total
        return probe.usage[0] + probe.usage[1]


@dataclass
class _Segment:
    end: int
    encoded: int
    objects: int
    estimate: _Estimate
    systems: int
    tool_history: bool
    tool_keys: int
    position: int


@dataclass
class _Committed:
    """Everything known about the delivered messages before ``end``."""

    end: int = 0
    segments: list[_Segment] = field(default_factory=list)
    #: The committed wire items, in order. Append-only: a request shares this list and reads
    #: only the length it saw (``_Spliced``); a rollback starts a new list.
    objects: list[Any] = field(default_factory=list)
    #: Each segment's encoded items (empty segments left out), in order; append-only as well.
    encoded: list[bytes | memoryview] = field(default_factory=list)
    systems: list[Message] = field(default_factory=list)
    tool_history: bool = False
    tool_keys: list[bytes] = field(default_factory=list)
    estimate: _Estimate = field(default_factory=_Estimate)
    #: The Responses message position at ``end``.
    position: int = 0
    #: Every tool name the committed messages call or answer (a rollback keeps the names of
    #: the messages it drops: a superset only restarts more often).
    called: set[str] = field(default_factory=set)


class IncrementalProjection:
    """The next requests of one route, fallback and option set (design P7).

    ``request(messages, stable, extra)`` takes the session's context messages, how many of
    them are unchanged (the same objects) since the previous call, and messages that exist for
    this request only (the pending system update, a draft). The result is byte-equal to
    ``project(model, deliver(messages + extra, model, fallback), options)``.
    """

    def __init__(
        self,
        model: Model,
        options: RequestOptions | None = None,
        fallback: FallbackDelivery = "folded",
        *,
        keep_bytes: bool = True,
    ) -> None:
        check_model_fields(model)
        self.model = model
        #: Keep the committed items' bytes for ``body_bytes``; a reader of values only (the
        #: what-if, design X12) saves their encoding and a copy of the history.
        self._keep_bytes = keep_bytes
        self.options = _provider_options(model, options or RequestOptions())
        self.fallback = fallback
        self._project = projector_for(model["api"])
        self._path = WIRE_PATHS[model["api"]]
        self._attributed = not supports_native_system_updates(model) and fallback == "attributed"
        self._supported = model["provider"] != "github-copilot"
        #: Anthropic renders a tool change where it happens, by value; every other API reads
        #: the declarations of the whole history when it converts messages.
        self._tool_sensitive = model["api"] != "anthropic-messages"
        self._positions = self._path == ("input",)
        self._in_place: bool | None = None
        self._trailing: int | None = None
        self._head_cache: tuple[list[Message], int] | None = None
        self._offset_cache: tuple[list[Message], int] | None = None
        self._systems_cache: tuple[int, Message | None, list[Message]] | None = None
        self._tool_names: set[str] = set()
        self._standin: bytes | None = None
        #: Where the finished-turn stand-in was last found among the items.
        self._at = 0
        self._lead_cache: tuple[tuple[int, int], tuple[list[Message], int, bytes, int]] | None = None
        self._standins = self._make_standins()
        #: Full projections since creation (for tests and benchmarks).
        self.rebuilds = 0
        self._reset()

    # --- state ------------------------------------------------------------------------------

    def _reset(self) -> None:
        self._lead_cache = None
        self._systems_cache = None
        self._done = _Committed()
        self._tool_facts: tuple[bytes, ...] | None = None
        self._delivered: list[Message] = []
        self._checkpoints: list[tuple[int, int]] = []

    def _rollback(self, stable: int) -> None:
        self._lead_cache = None
        self._systems_cache = None
        done = self._done
        while done.segments and done.segments[-1].end > stable:
            done.segments.pop()
        if not done.segments:
            self._done = _Committed()
            return
        last = done.segments[-1]
        done.end = last.end
        # New lists rather than ``del``: requests already made share the old ones (``_Spliced``).
        done.objects = done.objects[: last.objects]
        done.encoded = done.encoded[: last.encoded]
        del done.systems[last.systems :]
        del done.tool_keys[last.tool_keys :]
        done.tool_history = last.tool_history
        done.estimate = last.estimate.copy()
        done.position = last.position

    def _make_standins(self) -> dict[str, Message]:
        model = self.model
        owner = {"api": model["api"], "provider": model["provider"], "model": model["id"]}
        usage = {
            "input": 0,
            "output": 0,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": 0,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        }
        name = _TOOL_MARK.decode()
        call_id = "call" + _MARK.replace("_", "")[:20]
        return cast(
            dict[str, Message],
            {
                "call": {
                    "role": "assistant",
                    "content": [{"type": "toolCall", "id": call_id, "name": name, "arguments": {}}],
                    **owner,
                    "usage": usage,
                    "stopReason": "toolUse",
                    "timestamp": 0,
                },
                "result": {
                    "role": "toolResult",
                    "toolCallId": call_id,
                    "toolName": name,
                    "content": [{"type": "text", "text": name}],
                    "isError": False,
                    "timestamp": 0,
                },
                "text": {
                    "role": "assistant",
                    "content": [{"type": "text", "text": _TEXT_MARK.decode()}],
                    **owner,
                    "usage": usage,
                    "stopReason": "stop",
                    "timestamp": 0,
                },
                "user": {
                    "role": "user",
                    "content": [{"type": "text", "text": _USER_MARK.decode()}],
                    "timestamp": 0,
                },
            },
        )

    # --- the request ----------------------------------------------------------------------------

    def request(
        self, messages: Sequence[Message], stable: int, extra: Sequence[Message] = ()
    ) -> ProviderRequest:
        delivered, delivered_stable, limit = self._deliver(messages, stable, extra)
        if not self._supported:
            return self._full(delivered)
        with paused_gc():
            try:
                return self._incremental(delivered, delivered_stable, limit)
            except _NotThisTime:
                return self._full(delivered)
            except _Unsupported:
                self._reset()
                return self._full(delivered)

    def _full(self, delivered: Sequence[Message]) -> ProviderRequest:
        self.rebuilds += 1
        with paused_gc():
            return self._project(self.model, list(delivered), self.options)

    def _deliver(
        self, messages: Sequence[Message], stable: int, extra: Sequence[Message]
    ) -> tuple[Sequence[Message], int, int]:
        """The delivered messages, how many lead unchanged, and where commits may end."""
        if not self._attributed:
            return _Joined(messages, extra), stable, len(messages)
        # Attributed updates: resume at the last user message known unchanged (nothing is held
        # there) and keep the delivered output before the last user message of ``messages``.
        checkpoints = self._checkpoints
        while checkpoints and checkpoints[-1][0] > stable:
            checkpoints.pop()
        start, kept = checkpoints[-1] if checkpoints else (0, 0)
        del self._delivered[kept:]
        fresh: list[tuple[int, int]] = []
        tail = attribute_updates([*messages[start:], *extra], start=start, checkpoints=fresh)
        limit = kept
        for index, length in fresh:
            if index >= len(messages) or index == start:
                continue
            checkpoints.append((index, kept + length))
            limit = kept + length
        self._delivered.extend(tail[: limit - kept])
        return _Joined(self._delivered, tail[limit - kept :]), kept, limit

    def _incremental(self, delivered: Sequence[Message], stable: int, limit: int) -> ProviderRequest:
        if not delivered:  # nothing to splice onto (a replayed request with no message)
            raise _NotThisTime("an empty request")
        if stable < self._done.end:
            self._rollback(stable)
        # Everything below reads the uncommitted messages several times (boundaries, system
        # messages, the commit itself); the context's messages are decoded from their journal
        # lines on every read, so they are decoded once here. On the first request after an
        # open that is the whole history, read once instead of three times (design P7).
        delivered = _decoded(delivered, self._done.end)
        tail_keys: list[bytes] = []
        if self._tool_sensitive:
            for message in delivered[self._done.end :]:
                if message["role"] == "system":
                    key = _tool_key(message)
                    if key is not None:
                        tail_keys.append(key)
            facts = (*self._done.tool_keys, *tail_keys)
            if facts != self._tool_facts and not _adds_unused_tools(
                self._tool_facts, facts, self._done.called
            ):
                delivered = _decoded(delivered, 0)
                self._done = _Committed()
                self._lead_cache = None
                self._systems_cache = None
                self._tool_facts = tuple(
                    key
                    for message in delivered
                    if message["role"] == "system" and (key := _tool_key(message)) is not None
                )
            else:
                self._tool_facts = facts
        self._check_leading(delivered)
        # Commit up to the last boundary the persistent messages reach.
        top = min(limit, len(delivered) - 1)
        last = next((b for b in range(top, self._done.end, -1) if _is_boundary(delivered, b)), 0)
        if last > self._done.end:
            self._commit(delivered, last)
        if self._done.end == 0:
            return self._full(delivered)
        self._check_leading(delivered)
        return self._splice(delivered)

    # --- stand-in transcripts ---------------------------------------------------------------

    def _committed_systems(self) -> list[Message]:
        """System messages equivalent to the committed ones for everything a projection reads
        from the whole history, kept per committed set (it changes only when one is added).

        Folded routes read only their replay: one replayed message stands for all of them.
        Routes that keep later system messages in place render those in the committed items;
        besides, they read the leading message and the tool declarations: which tools exist
        now and in which order, every definition ever declared (latest per name, in
        first-declaration order) and whether any change was not a plain addition. The leading
        message plus at most three tool messages reproduce exactly those.
        """
        systems = self._done.systems
        cached = self._systems_cache
        if cached is not None and cached[0] == len(systems) and (not systems or cached[1] is systems[-1]):
            return cached[2]
        # The committed systems only grow while the cache lives (a rollback or a restart clears
        # it): the previous equivalent plus the systems added since is equivalent to them all,
        # so each commit replays what it added, not the whole history's systems.
        grown = (
            cached is not None
            and bool(cached[2])
            and 0 < cached[0] < len(systems)
            and systems[cached[0] - 1] is cached[1]
        )
        since = systems[cached[0] :] if cached is not None and grown else []
        replayed = [*cached[2], *since] if cached is not None and grown else systems
        compact: list[Message]
        if not systems:
            compact = []
        elif not self._in_place_systems():
            replay = current_system_message(replayed)
            compact = [replay] if replay is not None else []
        elif self._names_only(systems[0]):
            compact = [systems[0]]  # the rest is whether any tool is declared (``_has_tools``)
            if grown:
                self._tool_names = _names_after(self._tool_names, since)
            else:
                self._tool_names = {tool["name"] for tool in current_tools(systems)}
        else:
            compact = [systems[0], *_tool_equivalent(replayed)]
        self._systems_cache = (len(systems), systems[-1] if systems else None, compact)
        return compact

    def _has_tools(self, tail: Sequence[Message]) -> bool | None:
        """Whether any tool is declared after ``tail``, where the stand-ins leave it out."""
        done = self._done
        if not done.systems or not self._in_place_systems() or not self._names_only(done.systems[0]):
            return None
        return bool(_names_after(self._tool_names, tail))

    def _names_only(self, lead: Message) -> bool:
        """Anthropic with native tool changes keeps the leading tools at request level and
        sends later ones by value where they happened; of the later system messages it reads
        only whether any tool is declared now, so their tool names stand for them."""
        compat = self.model.get("compat") or {}
        return bool(
            self.model["api"] == "anthropic-messages"
            and compat.get("supportsMidConvoSystemMessages")
            and compat.get("supportsMidConvoToolChanges")
            and cast(Mapping[str, Any], lead).get("toolsAdded")
        )

    def _skeleton(self) -> list[Message]:
        """The stand-ins for the committed history: its system messages and its surroundings."""
        done = self._done
        lead = list(self._committed_systems())
        if done.tool_history:
            lead += [self._standins["call"], self._standins["result"]]
        lead.append(self._standins["text"])
        return lead

    def _run(
        self, messages: list[Message], tokens: int | None, base: int = 0, has_tools: bool | None = None
    ) -> tuple[ProviderRequest, list[Any]]:
        facts = TranscriptFacts(messages, context_tokens=tokens, position_base=base, has_tools=has_tools)
        request = self._project(self.model, facts, self.options)
        return request, self._wire(request)

    def _wire(self, request: ProviderRequest) -> list[Any]:
        wire: Any = request.body
        for key in self._path:
            wire = wire[key]
        return cast(list[Any], wire)

    def _systems(self, delivered: Sequence[Message]) -> list[Message]:
        """The committed system messages (or their equivalent), then the tail's."""
        return [
            *self._committed_systems(),
            *(m for m in delivered[self._done.end :] if m["role"] == "system"),
        ]

    def _check_leading(self, delivered: Sequence[Message]) -> None:
        if (
            self._in_place_systems()
            and delivered[0]["role"] != "system"
            and (self._done.systems or any(m["role"] == "system" for m in delivered[self._done.end :]))
        ):
            raise _Unsupported("in-place system messages without a leading one")

    def _lead(self) -> tuple[list[Message], int, bytes, int]:
        """The stand-ins for the committed history, the Responses position to start them at
        (so that what follows lands at the committed position), and how the finished-turn
        stand-in encodes when a message follows it (unmarked). Kept per committed state."""
        done = self._done
        key = (done.end, len(done.systems))
        if self._lead_cache is not None and self._lead_cache[0] == key:
            return self._lead_cache[1]
        lead = self._skeleton()
        probe = self._standins["user"]
        base = 0
        if not self._positions:
            # Elsewhere the stand-in encodes the same whatever precedes it: probe it once, and
            # let the previous index guide the search (``_find`` checks it).
            if self._standin is None:
                _request, wire = self._run([probe, self._standins["text"], probe], 0)
                self._standin = orjson.dumps(wire[_find(wire, _TEXT_MARK, 0)])
            result = (lead, 0, self._standin, self._at)
            self._lead_cache = (key, result)
            return result
        if self._positions:
            base = done.position - self._offset(lead, probe)
        _request, wire = self._run([*lead, probe], 0, base)
        at = _find(wire, _TEXT_MARK, self._at)
        result = (lead, base, orjson.dumps(wire[at]), at)
        self._lead_cache = (key, result)
        return result

    def _offset(self, lead: list[Message], probe: Message) -> int:
        """How many positions ``lead`` takes before ``probe`` (positions count from the base
        a projection is given, so this is the lead's own), kept per lead: the lead changes
        only when the committed systems or the tool history do, not at every commit."""
        cached = self._offset_cache
        if cached is not None and _same_objects(cached[0], lead):
            return cached[1]
        facts = TranscriptFacts([*lead, probe], context_tokens=0, watch=(probe,))
        self._project(self.model, facts, self.options)
        seen = facts.watched[id(probe)]
        if seen < 0:
            raise _Unsupported("position probe not converted")
        self._offset_cache = (lead, seen)
        return seen

    def _in_place_systems(self) -> bool:
        """Whether later system messages are items of the message list (probed once)."""
        if self._in_place is None:
            probe, lead = "pi_incremental_probe_5b1e", "pi_incremental_lead_5b1e"
            messages = cast(
                list[Message],
                [
                    {"role": "system", "content": lead, "timestamp": 0},
                    {"role": "user", "content": "question", "timestamp": 0},
                    {"role": "system", "content": probe, "timestamp": 0},
                    self._standins["text"],
                    self._standins["user"],
                ],
            )
            _request, wire = self._run(messages, 0)
            encoded = [orjson.dumps(item) for item in wire]
            # Folded, the probe joins the leading prompt; in place, it is an item of its own.
            self._in_place = any(probe.encode() in item and lead.encode() not in item for item in encoded)
        return self._in_place

    def _trailer(self) -> int:
        """How many items a projection appends after the last message (Anthropic's managed
        effort adds one), probed once."""
        if self._trailing is None:
            _request, wire = self._run([self._standins["user"], self._standins["text"]], 0)
            self._trailing = len(wire) - 1 - _find(wire, _TEXT_MARK, 0)
        return self._trailing

    def _head(self, delivered: Sequence[Message]) -> int:
        """How many leading items the prompt head takes (the folded prompt, or the leading
        system message where later ones stay in place); kept per set of system messages."""
        systems = self._systems(delivered)
        if self._in_place_systems():
            systems = systems[:1]
        cached = self._head_cache
        if cached is not None and _same_objects(cached[0], systems):
            return cached[1]
        _request, wire = self._run([*systems, self._standins["text"], self._standins["user"]], 0)
        count = _find(wire, _TEXT_MARK, cached[1] if cached is not None else 0)
        self._head_cache = (systems, count)
        return count

    def _commit(self, delivered: Sequence[Message], end: int) -> None:
        done = self._done
        start = done.end
        segment = delivered[start:end]
        later = [m for m in delivered[end:] if m["role"] == "system"]  # fold into the same head
        tail_user = self._standins["user"]
        if start == 0:
            lead: list[Message] = []
            first = self._head(delivered)
            base = 0
        else:
            lead, base, _standin, at = self._lead()
        # One projection gives the segment's items and, on the Responses APIs, the position
        # after it (where the stand-in user message lands; the folded system messages after it
        # do not move it).
        facts = TranscriptFacts(
            [*lead, *segment, tail_user, *later],
            context_tokens=0,
            position_base=base,
            watch=(tail_user,) if self._positions else (),
        )
        wire = self._wire(self._project(self.model, facts, self.options))
        if start:
            first = _find(wire, _TEXT_MARK, at) + 1
            self._at = first - 1
        stop = _rfind(wire, _USER_MARK, first)
        items = wire[first:stop]
        # The items' bytes as ``orjson.dumps`` writes them in a list, separators included,
        # in one call (the whole history on the first commit after an open).
        encoded = memoryview(orjson.dumps(items))[1:-1] if self._keep_bytes else b""

        position = done.position
        if self._positions:
            position = facts.watched[id(tail_user)]
            if position < 0:
                raise _Unsupported("position probe not converted")
        done.estimate.extend(segment)
        for message in segment:
            if message["role"] == "system":
                done.systems.append(message)
                key = _tool_key(message)
                if key is not None:
                    done.tool_keys.append(key)
            else:
                if not done.tool_history and _has_tool_traffic(message):
                    done.tool_history = True
                _note_calls(message, done.called)
        done.objects.extend(items)
        if encoded:
            done.encoded.append(encoded)
        done.end = end
        done.position = position
        done.segments.append(
            _Segment(
                end,
                len(done.encoded),
                len(done.objects),
                done.estimate.copy(),
                len(done.systems),
                done.tool_history,
                len(done.tool_keys),
                position,
            )
        )

    def _splice(self, delivered: Sequence[Message]) -> ProviderRequest:
        done = self._done
        tail = delivered[done.end :]
        tokens = done.estimate.with_tail(tail)
        lead, base, standin, at = self._lead()
        head_count = self._head(delivered)
        request, wire = self._run([*lead, *tail], tokens, base, self._has_tools(tail))
        at = self._at = _find(wire, _TEXT_MARK, at)
        head = wire[:head_count]
        rest = wire[at + 1 :]
        if len(rest) <= self._trailer() or orjson.dumps(wire[at]) != standin:
            # The tail renders nothing (a blank message after an empty answer), so the cache
            # marker of the last message belongs to the committed history.
            raise _NotThisTime("a cache marker reached the committed history")
        encoded = done.encoded if self._keep_bytes else None
        spliced = _Spliced(request.body, self._path, head, done.objects, encoded, rest)
        return SplicedRequest(request.method, request.url, request.headers, spliced)


class _Spliced:
    """One request's message list, sharing the committed history instead of copying it.

    The list is the prompt head, the committed items, then the tail's items. Copying the
    committed items into a new list every turn touches every committed object (about 1.4 ms
    for 50,000 of them), which grew each turn with the session (design P7). Here a request
    keeps a reference to the engine's append-only committed lists and the length it saw,
    so making it costs the tail alone; the committed items are read only when the body bytes
    are encoded (one join of kept bytes) or the body is read as a value.
    """

    __slots__ = ("_committed", "_count", "_encoded", "_head", "_kept", "_path", "_rest", "_shell")

    def __init__(
        self,
        shell: Mapping[str, Any],
        path: tuple[str, ...],
        head: list[Any],
        committed: list[Any],
        encoded: list[bytes | memoryview] | None,
        rest: list[Any],
    ) -> None:
        self._shell = shell
        self._path = path
        self._head = head
        self._committed = committed
        self._count = len(committed)
        self._encoded = encoded
        self._kept = len(encoded) if encoded is not None else 0
        self._rest = rest

    def body(self) -> dict[str, Any]:
        """The body as a value (head, committed and tail items in one new list)."""
        items = [*self._head, *islice(self._committed, self._count), *self._rest]
        return _with_list(self._shell, self._path, items)

    def encode(self) -> bytes:
        """``orjson.dumps(body())``, from the committed items' kept bytes (when kept)."""
        if self._encoded is None:
            return orjson.dumps(self.body())
        before, after = orjson.dumps(_with_list(self._shell, self._path, [_PLACEHOLDER])).split(
            b'["' + _PLACEHOLDER.encode() + b'"]'
        )
        parts: list[bytes | memoryview] = [orjson.dumps(item) for item in self._head]
        parts += islice(self._encoded, self._kept)
        parts += [orjson.dumps(item) for item in self._rest]
        # One join, separators in place: the body is copied once, not twice (tens of MB on a
        # long session, every turn).
        pieces: list[bytes | memoryview] = [before, b"["]
        for index, part in enumerate(parts):
            if index:
                pieces.append(b",")
            pieces.append(part)
        pieces += (b"]", after)
        return b"".join(pieces)


class SplicedRequest(ProviderRequest):
    """A request whose message list shares the committed history (design P7).

    ``body_bytes`` joins kept bytes (what dispatch and the previews read); ``body`` is built
    on first read, for callers that want the value. Both equal a full projection's.
    """

    def __init__(self, method: str, url: str, headers: dict[str, str], spliced: _Spliced) -> None:
        object.__setattr__(self, "method", method)
        object.__setattr__(self, "url", url)
        object.__setattr__(self, "headers", headers)
        object.__setattr__(self, "encoder", spliced.encode)
        object.__setattr__(self, "_spliced", spliced)

    _spliced: _Spliced

    # ``ProviderRequest`` declares ``body`` as a plain attribute (it is read-only by its
    # ``__setattr__``, which mypy does not see); here it is built on first read.
    @cached_property
    def body(self) -> JsonObject:  # type: ignore[override]
        return self._spliced.body()


def _same_objects(kept: Sequence[object], now: Sequence[object]) -> bool:
    """Whether ``now`` holds the very objects ``kept`` does, in order (a cache's key: the
    history's messages are not copied, so the same objects are the same messages)."""
    return len(kept) == len(now) and all(a is b for a, b in zip(kept, now, strict=True))


def _names_after(names: set[str], messages: Sequence[Message]) -> set[str]:
    """The current tools' names after ``messages`` (those of ``current_tools``), from ``names``."""
    out = set(names)
    for message in messages:
        if message["role"] == "system":
            raw = cast(Mapping[str, Any], message)
            out.difference_update(ref["name"] for ref in raw.get("toolsRemoved") or ())
            out.update(tool["name"] for tool in raw.get("toolsAdded") or ())
    return out


def _tool_equivalent(systems: Sequence[Message]) -> list[Message]:
    """Tool messages that, after the leading message ``systems[0]``, leave the same current
    tools, declared tools and kind of history (additions only or not) as ``systems[1:]``."""
    lead = cast(Mapping[str, Any], systems[0])
    lead_names = {tool["name"] for tool in lead.get("toolsAdded") or ()}
    if not any(_tool_key(m) is not None for m in systems[1:]):
        return []
    declared = declared_tools(systems)
    if not has_non_additive_tool_changes(systems):
        added = [tool for tool in declared if tool["name"] not in lead_names]
        return [_tool_message(toolsAdded=added)]
    return [
        _tool_message(toolsAdded=declared),
        _tool_message(toolsRemoved=[{"name": tool["name"]} for tool in declared]),
        *([_tool_message(toolsAdded=current)] if (current := current_tools(systems)) else []),
    ]


def _tool_message(**tools: Any) -> Message:
    return cast(Message, {"role": "system", "content": "", **tools, "timestamp": 0})


def _find(wire: Sequence[Any], mark: bytes, start: int) -> int:
    """The first item from ``start`` on that carries ``mark`` (``start`` is a good guess: the
    stand-ins sit where the committed state put them)."""
    if start < len(wire) and mark in orjson.dumps(wire[start]):
        return start
    for index in range(len(wire)):
        if mark in orjson.dumps(wire[index]):
            return index
    raise _Unsupported("stand-in item not found")


def _rfind(wire: Sequence[Any], mark: bytes, start: int) -> int:
    """The last item at or after ``start`` that carries ``mark``."""
    for index in range(len(wire) - 1, start - 1, -1):
        if mark in orjson.dumps(wire[index]):
            return index
    raise _Unsupported("stand-in item not found")


class _Joined(Sequence[Message]):
    """``first[:split] + second`` without copying ``first`` (a long history plus this request's
    extras, or the committed messages plus the rest read once)."""

    __slots__ = ("_first", "_second", "_split")

    def __init__(self, first: Sequence[Message], second: Sequence[Message], split: int | None = None) -> None:
        self._first = first
        self._second = second
        self._split = len(first) if split is None else split

    @property
    def decoded(self) -> bool:
        """Whether both parts are plain lists (nothing is read from a row on access)."""
        return isinstance(self._first, list) and isinstance(self._second, list)

    def __len__(self) -> int:
        return self._split + len(self._second)

    @overload
    def __getitem__(self, index: int) -> Message: ...
    @overload
    def __getitem__(self, index: slice) -> list[Message]: ...
    def __getitem__(self, index: int | slice) -> Message | list[Message]:
        split = self._split
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step != 1:
                raise ValueError("only contiguous slices")
            head = list(self._first[start : min(stop, split)]) if start < split else []
            return head + list(self._second[max(start - split, 0) : max(stop - split, 0)])
        if index < 0:
            index += len(self)
        return self._first[index] if index < split else self._second[index - split]

    def __iter__(self) -> Iterator[Message]:
        yield from islice(self._first, self._split)
        yield from self._second


#: Uncommitted messages from which on they are read into a list once per request.
_DECODE_AT_ONCE = 64


def _decoded(messages: Sequence[Message], start: int) -> Sequence[Message]:
    """``messages`` with those from ``start`` on read once into a list (the leading ones are
    committed and read no more); as is when that part is short or already a list."""
    if isinstance(messages, list) or len(messages) - start < _DECODE_AT_ONCE:
        return messages
    if isinstance(messages, _Joined) and messages.decoded:
        return messages
    return _Joined(messages, list(messages[start:]), start)


def _with_list(body: Mapping[str, Any], path: tuple[str, ...], items: list[Any]) -> dict[str, Any]:
    head, *rest = path
    if rest:
        return {**body, head: _with_list(body[head], tuple(rest), items)}
    return {**body, head: items}
