"""One route x strategy pass of the what-if replay, in time linear in what the session adds
(design X8).

The earlier pass read every request's whole body into a tuple of segments and folded it
through ``desktop.pi.cache_rules.CacheSimulator``, which compares, copies and stores every
segment of every request: quadratic in the session. Here each request is read as the
incremental projection (design P7) builds it, the prompt head, the committed history (the
engine's append-only list, shared by every request) and the tail, and:

* the committed items are read into segment texts once, when they are committed
  (:class:`PromptReader`); a request's view shares that list (:class:`PromptView`);
* how many leading segments a request repeats from the previous one is known from that
  structure (the same committed list, the same head) and checked only where it is not;
* the cache (:class:`LinearCache`) and the theoretical minimum (:class:`FreshCounter`)
  keep the previous prompt's prefix hashes and extend them by what a request adds. A
  prefix-rule cache stores every step of every prompt; the steps a request shares with the
  previous one are held as one record (the path and when it was last used) instead of one
  entry per step, and written out only when a later request leaves that path.

* a breakpoint rule names a prefix by two hashes, the tools and system blocks' chain and the
  message segments' own chain (the texts say where the head ends, so equal prefixes get equal
  names): a changed system prompt re-hashes the head only;
* the tools and system blocks are read again only when they changed (compared as values).

The arithmetic is ``cache_rules``' own (its token estimate, retention, minimums and the
20-block lookback), so the figures are the same as the full fold's;
``tests/foreign/test_whatif_linear.py`` checks that on random prompt sequences, and
``tests/foreign/test_whatif_oracle.py`` on the session fixtures. The work per request is what
it adds, plus, on prefix rules, what follows a changed head (the provider processes that again
too: its steps are hashed and stored again, though looked up only until the first step no
earlier prompt stored); the incremental projection restarts on a tool change it cannot extend
(design X10) for APIs other than Anthropic's.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from desktop.pi.cache_retention import asks_long, retention_for
from desktop.pi.cache_rules import (
    ANTHROPIC_LOOKBACK_BLOCKS,
    CHARS_PER_TOKEN,
    WIRE_OF_API,
    CacheRule,
    CacheUsage,
    CanonicalMemo,
    Prompt,
    estimate_tokens,
    read_prompt,
    segments,
)
from desktop.pi.projection import ProviderRequest
from desktop.pi.projection.incremental import WIRE_PATHS, SplicedRequest


def _digest(text: str) -> bytes:
    """A segment's own digest: prefix hashes chain these (each text hashed once, not once per
    prefix it ends, so a changed head re-chains 32 bytes per segment)."""
    return hashlib.blake2b(text.encode(), digest_size=16).digest()


@dataclass(slots=True)
class PromptView:
    """One request as its cache reads it: head segments, a shared run of committed segments,
    tail segments. ``kept`` is how many leading segments equal the previous view's."""

    rule: CacheRule
    model: str
    namespace: str
    long: bool
    head: list[str]
    committed: list[str]
    count: int
    tail: list[str]
    #: Each committed text's digest (``_digest``), made once when it was read.
    sums: list[bytes]
    #: Positions (in the whole prompt) of segments that end a cached prefix, with their ttl.
    breakpoints: list[tuple[int, str]]
    kept: int
    #: Breakpoint rules: how many leading segments are tools and system blocks (their texts
    #: say so: ``tool:``, ``system:``), and how many message segments after them equal the
    #: previous view's (a changed system prompt leaves the messages' own prefix hashes valid).
    split: int = 0
    kept_messages: int = 0

    def __len__(self) -> int:
        return len(self.head) + self.count + len(self.tail)

    def text(self, index: int) -> str:
        head = len(self.head)
        if index < head:
            return self.head[index]
        index -= head
        if index < self.count:
            return self.committed[index]
        return self.tail[index - self.count]

    def texts_from(self, start: int) -> Iterator[str]:
        head = len(self.head)
        if start < head:
            yield from itertools.islice(self.head, start, None)
            start = head
        committed = self.committed
        for index in range(start - head, self.count):  # by index: islice would walk the skipped
            yield committed[index]
        yield from itertools.islice(self.tail, max(0, start - head - self.count), None)

    def parts_from(self, start: int) -> Iterator[tuple[bytes, int]]:
        """From ``start`` on, each segment's digest and length (the committed ones kept)."""
        head = len(self.head)
        for text in itertools.islice(self.head, start, None):
            yield _digest(text), len(text)
        begin = max(0, start - head)
        for index in range(begin, self.count):
            yield self.sums[index], len(self.committed[index])
        for text in itertools.islice(self.tail, max(0, start - head - self.count), None):
            yield _digest(text), len(text)

    @property
    def total_tokens(self) -> int:
        """``Prompt.total_tokens``, from the view's own texts (the usage of a rule that caches nothing)."""
        texts = list(self.texts_from(0))
        if self.rule.kind == "breakpoints":
            return sum(estimate_tokens(t) for t in texts)
        return max(1, (sum(len(t) + 1 for t in texts) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN)


def _common(previous: PromptView | None, view: PromptView) -> int:
    """How many leading segments ``view`` repeats from ``previous`` (equal texts)."""
    if previous is None or previous.namespace != view.namespace:
        return 0
    limit = min(len(previous), len(view))
    start = 0
    if previous.head == view.head:
        start = len(view.head)
        run = min(previous.count, view.count)
        # One list comparison in C (texts repeated across committed lists are the same objects).
        if previous.committed is view.committed or previous.committed[:run] == view.committed[:run]:
            start += run
    index = start
    for a, b in zip(previous.texts_from(start), view.texts_from(start), strict=False):
        if index >= limit or a != b:
            break
        index += 1
    return min(index, limit)


def _marks(found: Sequence[Any], offset: int) -> list[tuple[int, str]]:
    return [(offset + i, s.breakpoint) for i, s in enumerate(found) if s.breakpoint]


#: Wire formats whose prompt starts with the tools, one segment each.
_TOOLS_LEAD = frozenset({"anthropic", "chat", "responses"})


class PromptReader:
    """The views of one pass's requests, each derived from the previous one."""

    def __init__(self, model: Mapping[str, Any]) -> None:
        self.wire = WIRE_OF_API.get(str(model.get("api", "")), "none")
        self.family = str(model.get("provider", ""))
        self.model_id = str(model.get("id", ""))
        self.path = WIRE_PATHS.get(str(model.get("api", "")), ())
        self._list: list[Any] | None = None
        self._texts: list[str] = []
        #: Per committed item read, where its segments start in ``_texts`` (and one past the end).
        self._starts: list[int] = [0]
        self._marks: list[tuple[int, str]] = []
        self._sums: list[bytes] = []
        self._previous: PromptView | None = None
        #: The last head's tools, their segment texts, its marks and each tool's long marker.
        self._tools: tuple[list[Any], list[str], list[tuple[int, str]], list[bool]] = ([], [], [], [])
        #: How many texts the fixed head has, and how many of them lead as tools and system.
        self._fixed_split = (0, 0)
        self._canon = CanonicalMemo()
        self._fixed_cache: (
            tuple[dict[str, Any], tuple[list[str], list[tuple[int, str]], Prompt, bool]] | None
        ) = None

    def read(self, request: ProviderRequest) -> PromptView:
        spliced = request._spliced if isinstance(request, SplicedRequest) else None
        if spliced is None or len(self.path) != 1 or self.wire == "none":
            prompt = read_prompt(self.wire, self.family, request.body, self.model_id)
            return self._view(
                prompt, [s.text for s in prompt.segments], _marks(prompt.segments, 0), [], 0, []
            )
        key = self.path[0]
        head_items, rest = spliced._head, spliced._rest
        fixed, fixed_marks, prompt, fixed_long = self._fixed(spliced._shell, key)
        head = list(fixed)
        tail: list[str] = []
        head_marks = list(fixed_marks)
        tail_marks: list[tuple[int, str]] = []
        cut = len(head_items)
        items = [*head_items, *rest]
        for segment in segments(self.wire, {key: items}):
            in_tail = int(segment.path[1]) >= cut
            into, marks = (tail, tail_marks) if in_tail else (head, head_marks)
            if segment.breakpoint:
                marks.append((len(into), segment.breakpoint))
            into.append(segment.text)
        count = self._committed(spliced._committed, spliced._count, key)
        h = len(head)
        marks = [*head_marks, *((h + i, t) for i, t in self._marks if i < count)]
        marks += [(h + count + i, t) for i, t in tail_marks]
        long = fixed_long or (key == "messages" and asks_long({key: items[-3:]}))
        return self._view(prompt, head, marks, self._texts, count, tail, long=long, fixed=self._fixed_split)

    def _fixed(
        self, shell: Mapping[str, Any], key: str
    ) -> tuple[list[str], list[tuple[int, str]], Prompt, bool]:
        """The segments of everything but the message list (tools, system prompt), read again
        only when it changed (compared as values, in C): the tool list grows with a session."""
        parts = {k: v for k, v in shell.items() if k != key}
        cached = self._fixed_cache
        if cached is not None and cached[0] == parts:
            return cached[1]
        body = {**parts, key: []}
        tools = parts.get("tools")
        same = self._same_tools(tools)
        if same:
            # The leading tools are read already (a system update changed the head, or a tool
            # was added): only the rest is read, not every tool of the session again.
            body["tools"] = cast(list[Any], tools)[same:]
        # The tool entries are the same objects from one tool list to the next (the
        # projections keep them, design X11): each is read once, not at every change of head.
        prompt = read_prompt(self.wire, self.family, body, self.model_id, canon=self._canon)
        texts = [s.text for s in prompt.segments]
        marks = [(same + i, t) for i, t in _marks(prompt.segments, 0)]
        flags = [asks_long({"tools": [tool]}) for tool in body.get("tools") or ()]
        if same:
            texts[:0] = self._tools[1][:same]
            marks[:0] = [mark for mark in self._tools[2] if mark[0] < same]
            flags[:0] = self._tools[3][:same]
        if isinstance(tools, list) and self.wire in _TOOLS_LEAD:
            self._tools = (tools, texts[: len(tools)], marks, flags)
        result = (texts, marks, prompt, any(flags) or asks_long({**body, "tools": []}))
        self._fixed_cache = (parts, result)
        self._fixed_split = (len(texts), _split(texts, 0))
        return result

    def _same_tools(self, tools: Any) -> int:
        """How many leading tools equal the last head's (read already), where tools lead the
        prompt (one segment each); 0 elsewhere."""
        if self.wire not in _TOOLS_LEAD or not isinstance(tools, list):
            return 0
        before = self._tools[0]
        # All but the last: the projections share those entries (design X11), so the list
        # comparison runs in C on identities.
        same = min(len(before), len(tools)) - 1
        if same <= 0 or tools[:same] != before[:same]:
            return 0
        return same

    def _committed(self, items: list[Any], count: int, key: str) -> int:
        """The committed items' segments, read once each; how many segments ``count`` items hold."""
        if items is not self._list:
            # A new committed list (the engine rolled back or started again, on a tool change
            # or another lane): the items it repeats from the old one (equal values, compared
            # in C) keep their texts, the same string objects, so the views compare by identity.
            old, same = self._list, 0
            if old is not None:
                limit = min(len(self._starts) - 1, count)
                while same < limit and old[same] == items[same]:
                    same += 1
            cut = self._starts[same]
            self._list = items
            self._texts = self._texts[:cut]  # a new list: earlier views keep the old one
            self._sums = self._sums[:cut]
            self._starts = self._starts[: same + 1]
            self._marks = [mark for mark in self._marks if mark[0] < cut]
        read = len(self._starts) - 1
        if count > read:
            found = segments(self.wire, {key: items[read:count]})
            per = [0] * (count - read)
            base = len(self._texts)
            for segment in found:
                per[int(segment.path[1])] += 1
                if segment.breakpoint:
                    self._marks.append((len(self._texts), segment.breakpoint))
                self._texts.append(segment.text)
                self._sums.append(_digest(segment.text))
            self._starts.extend(itertools.accumulate(per, initial=base))
            del self._starts[read + 1 : read + 2]  # the initial value repeats the last start
        return self._starts[count]

    def _view(
        self,
        prompt: Prompt,
        head: list[str],
        marks: list[tuple[int, str]],
        committed: list[str],
        count: int,
        tail: list[str],
        *,
        long: bool | None = None,
        fixed: tuple[int, int] = (0, 0),
    ) -> PromptView:
        view = PromptView(
            prompt.rule,
            prompt.model,
            prompt.namespace,
            prompt.long if long is None else long,
            head,
            committed,
            count,
            tail,
            self._sums if committed is self._texts else [],
            marks,
            0,
        )
        view = finish(self._previous, view, fixed)
        self._previous = view
        return view


def _split(texts: Sequence[str], start: int) -> int:
    """How many of ``texts`` from ``start`` on lead as tools and system blocks."""
    split = start
    for text in itertools.islice(texts, start, None):
        if not text.startswith(("tool:", "system:")):
            break
        split += 1
    return split


def finish(previous: PromptView | None, view: PromptView, fixed: tuple[int, int] = (0, 0)) -> PromptView:
    """``view`` with what it shares with ``previous`` (the view before it in the pass).
    ``fixed`` says how many leading head texts are already known and how many of them lead
    as tools and system (read once per head, not per request: the tool list grows)."""
    split = 0
    if view.rule.kind == "breakpoints":
        known, lead = fixed
        split = lead if lead < known else _split(view.head, known)
    # Set in place (a new view per request is made here and nowhere else).
    view.kept = _common(previous, view)
    view.split = split
    view.kept_messages = _common_messages(previous, view)
    return view


def _common_messages(previous: PromptView | None, view: PromptView) -> int:
    """How many message segments (past ``split``) ``view`` repeats from ``previous``."""
    if previous is None or previous.namespace != view.namespace or view.rule.kind != "breakpoints":
        return 0
    before, now = previous.split, view.split
    limit = min(len(previous) - before, len(view) - now)
    start = 0
    if previous.head[before:] == view.head[now:]:
        start = len(view.head) - now
        run = min(previous.count, view.count)
        if previous.committed is view.committed or previous.committed[:run] == view.committed[:run]:
            start += run
    index = start
    for a, b in zip(previous.texts_from(before + start), view.texts_from(now + start), strict=False):
        if index >= limit or a != b:
            break
        index += 1
    return min(index, limit)


def view_of(prompt: Prompt) -> PromptView:
    """A whole prompt as a view of its own (the warm head a pass starts from)."""
    texts = [s.text for s in prompt.segments]
    marks = _marks(prompt.segments, 0)
    return PromptView(
        prompt.rule, prompt.model, prompt.namespace, prompt.long, texts, [], 0, [], [], marks, 0
    )


class _Chain:
    """The previous prompt's prefix hashes and cumulative counts, extended per request."""

    __slots__ = ("counts", "digests")

    def __init__(self) -> None:
        self.digests: list[bytes] = []
        self.counts: list[int] = []

    def extend(self, view: PromptView, kept: int, chars: bool) -> None:
        self.extend_parts(view.parts_from(kept), kept, chars)

    def extend_parts(self, parts: Iterable[tuple[bytes, int]], kept: int, chars: bool) -> None:
        del self.digests[kept:]
        del self.counts[kept:]
        digest = self.digests[-1] if self.digests else b""
        count = self.counts[-1] if self.counts else 0
        digests, counts = self.digests, self.counts
        blake = hashlib.blake2b
        for part, size in parts:
            digest = blake(digest + part, digest_size=16).digest()
            count += size + 1 if chars else (size + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN
            digests.append(digest)
            counts.append(count)


class LinearCache:
    """``CacheSimulator.account`` over views, a request costing what it adds (see the module)."""

    def __init__(self) -> None:
        self._entries: dict[tuple[str, str, bytes], tuple[int | None, int]] = {}
        #: Breakpoint rules: per namespace, the last head's texts, its chain and the messages'.
        self._heads: dict[tuple[str, str], tuple[list[str], _Chain, _Chain]] = {}
        #: Prefix rules: per namespace, the last prompt's character ends and step digests, and
        #: the entry (time, ttl) every step of it at or past the minimum holds.
        self._steps: dict[tuple[str, str], tuple[list[int], list[bytes], tuple[int | None, int], int]] = {}
        #: Prefix rules: per namespace, the stored steps by digest (written out of a path in C),
        #: the longest retention any of them was given, and the size at which they are swept.
        self._stored: dict[tuple[str, str], tuple[dict[bytes, tuple[int | None, int]], int, int]] = {}
        self._last: tuple[str, str] | None = None

    def account(self, view: PromptView, now: int | None = None) -> CacheUsage:
        rule = view.rule
        key = (rule.name, view.namespace)
        same = self._last == key
        kept = view.kept if same else 0
        self._last = key
        if rule.kind == "breakpoints":
            return self._breakpoints(view, key, same, now)
        if rule.kind == "prefix":
            return self._prefix(view, key, kept, now)
        return CacheUsage(total=view.total_tokens, read=0)

    def _has(self, key: tuple[str, str, bytes], now: int | None) -> bool:
        entry = self._entries.get(key)
        if entry is None:
            return False
        used, ttl = entry
        return now is None or used is None or now - used < ttl * 1000

    def _breakpoints(self, view: PromptView, key: tuple[str, str], same: bool, now: int | None) -> CacheUsage:
        """``CacheSimulator._breakpoints``. A prefix is named by two hashes: the chain over the
        tools and system blocks, and (past them) that whole head's hash with the chain over the
        message segments. Equal prefixes get equal names (the texts say where the head ends),
        and a changed system prompt re-hashes the head, not every message after it."""
        rule, namespace = key
        split = view.split
        head_texts = view.head[:split]
        state = self._heads.get(key)
        if state is None or not same:
            state = ([], _Chain(), _Chain())
            self._heads[key] = state
            head_kept = message_kept = 0
        else:
            previous_head = state[0]
            # Compared in C first: the head (every tool) is the same on most requests.
            head_kept = len(head_texts) if previous_head == head_texts else 0
            if not head_kept:
                for a, b in zip(previous_head, head_texts, strict=False):
                    if a != b:
                        break
                    head_kept += 1
            message_kept = view.kept_messages
        heads, messages = state[1], state[2]
        heads.extend_parts(((_digest(t), len(t)) for t in head_texts[head_kept:]), head_kept, False)
        message_kept = min(message_kept, len(messages.digests))
        messages.extend_parts(view.parts_from(split + message_kept), message_kept, False)
        self._heads[key] = (head_texts, heads, messages)
        head_name = heads.digests[-1] if heads.digests else b""
        head_tokens = heads.counts[-1] if heads.counts else 0

        def name(q: int) -> bytes:
            return heads.digests[q] if q < split else head_name + messages.digests[q - split]

        def cumulative(q: int) -> int:
            return heads.counts[q] if q < split else head_tokens + messages.counts[q - split]

        tokens = head_tokens + (messages.counts[-1] if messages.counts else 0)
        minimum = view.rule.minimum(view.model)
        breakpoints = view.breakpoints
        read_at = -1
        for p, _ttl in breakpoints:
            for q in range(p, max(-1, p - ANTHROPIC_LOOKBACK_BLOCKS), -1):
                if self._has((rule, namespace, name(q)), now):
                    read_at = max(read_at, q)
                    break
        read = cumulative(read_at) if read_at >= 0 else 0
        written = written_1h = 0
        if breakpoints:
            final, final_ttl = breakpoints[-1]
            if final > read_at and cumulative(final) >= minimum:
                written = cumulative(final) - read
                written_1h = written if final_ttl == "1h" else 0
        if read_at >= 0:
            entry_key = (rule, namespace, name(read_at))
            self._entries[entry_key] = (now, self._entries[entry_key][1])
        for p, ttl_name in breakpoints:
            if cumulative(p) >= minimum:
                ttl = retention_for(rule, long=ttl_name == "1h").ttl_s
                entry_key = (rule, namespace, name(p))
                old = self._entries.get(entry_key)
                valid = old is not None and self._has(entry_key, now)
                self._entries[entry_key] = (now, max(ttl, old[1]) if old is not None and valid else ttl)
        return CacheUsage(
            total=tokens, read=read, written=written, written_1h=written_1h, read_segments=read_at + 1
        )

    def _prefix(self, view: PromptView, key: tuple[str, str], kept: int, now: int | None) -> CacheUsage:
        rule_name = key[0]
        rule = view.rule
        minimum = rule.minimum(view.model)
        step_chars = rule.step_tokens * CHARS_PER_TOKEN
        first = max(0, -(-minimum * CHARS_PER_TOKEN // step_chars) - 1)
        state = self._steps.get(key)
        if state is None:
            ends: list[int] = []
            digests: list[bytes] = []
            path_entry: tuple[int | None, int] = (None, 0)
            path_first = 0
            kept = 0
        else:
            ends, digests, path_entry, path_first = state
        kept = min(kept, len(ends))
        del ends[kept:]
        offset = ends[-1] if ends else 0
        # Each segment's end (its text and a newline), summed in C: after a changed head this
        # runs over the whole prompt.
        sizes = map((1).__add__, map(len, view.texts_from(kept)))
        ends.extend(itertools.islice(itertools.accumulate(sizes, initial=offset), 1, None))
        shared_steps = (ends[kept - 1] if kept else 0) // step_chars
        shared_steps = min(shared_steps, len(digests))
        # The previous path's steps past what this prompt shares leave the path: written out
        # with the entry the previous request gave them (it used them last).
        entries, longest, sweep_at = self._stored.get(key) or ({}, 0, _SWEEP_AT)
        left = max(shared_steps, path_first)
        if left < len(digests):
            entries.update(zip(itertools.islice(digests, left, None), itertools.repeat(path_entry)))
            longest = max(longest, path_entry[1])
        if len(entries) > sweep_at and now is not None:
            entries = _unexpired(entries, now - longest * 1000)
            sweep_at = max(_SWEEP_AT, 2 * len(entries))
        self._stored[key] = (entries, longest, sweep_at)
        del digests[shared_steps:]
        start = shared_steps * step_chars
        j = bisect.bisect_right(ends, start)
        segment_start = ends[j - 1] if j else 0
        following = list(view.texts_from(j))
        rest = ("\n".join(following) + "\n")[start - segment_start :] if following else ""
        digest = digests[-1] if digests else b""
        # Each step's digest chains the previous one's with the step's text.
        blake, append = hashlib.blake2b, digests.append
        for end in range(step_chars, len(rest) + 1, step_chars):
            digest = blake(digest + rest[end - step_chars : end].encode(), digest_size=16).digest()
            append(digest)
        read = 0
        # The steps held (the path's record) or stored are closed under prefixes: a path is
        # stored from the minimum on, and what it shares stays held. So past the first step
        # that is neither, none is: after a changed head, the lookups stop there instead of
        # reaching the end of the prompt.
        top = max(shared_steps, first)
        while top < len(digests) and digests[top] in entries:
            top += 1
        for c in range(top - 1, first - 1, -1):
            if c < shared_steps:
                # Every shared step was last used by the previous request (it stored its whole
                # path), so each holds that request's entry: one check decides them all.
                if c >= path_first and _valid(path_entry, now):
                    read = (c + 1) * step_chars // CHARS_PER_TOKEN
                break
            found = entries.get(digests[c])  # ``_has``, inlined: once per step
            if found is not None and (now is None or found[0] is None or now - found[0] < found[1] * 1000):
                read = (c + 1) * step_chars // CHARS_PER_TOKEN
                break
        entry = (now, retention_for(rule_name, long=view.long).ttl_s)
        self._steps[key] = (ends, digests, entry, first)
        read_chars = read * CHARS_PER_TOKEN
        whole = bisect.bisect_right(ends, read_chars)
        chars = ends[-1] if ends else 0
        total = max(1, (chars + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN)
        return CacheUsage(total=total, read=read, read_segments=whole, read_chars=read_chars)


#: Stored steps of one namespace past which the expired ones are first swept out (then past
#: twice what a sweep kept: a sweep costs what was stored since).
_SWEEP_AT = 16


def _unexpired(
    entries: dict[bytes, tuple[int | None, int]], before: int
) -> dict[bytes, tuple[int | None, int]]:
    """The stored steps last used at or after ``before`` (now less the longest retention any
    was given; design X14). Dropping the others changes no figure: each is expired, and every step a
    kept one extends was used whenever it was, so it is kept too (or held by the path), and
    the lookups, which climb while steps are stored, stop where they did. Without the sweep
    a session whose head changes every few turns stores every step of every path it left:
    27 times the file on 10,000 rows, 86 times on 40,000."""
    return {digest: entry for digest, entry in entries.items() if entry[0] is None or entry[0] >= before}


def _valid(entry: tuple[int | None, int], now: int | None) -> bool:
    used, ttl = entry
    return now is None or used is None or now - used < ttl * 1000


class FreshCounter:
    """``whatif.fresh_tokens`` over views: each request's tokens past the longest prefix of
    whole parts any earlier request had, hashing only what it adds."""

    def __init__(self) -> None:
        self._seen: set[bytes] = set()
        self._chain = _Chain()
        self._namespace: str | None = None

    def add(self, view: PromptView) -> int:
        chain = self._chain
        kept = min(view.kept, len(chain.digests)) if self._namespace == view.namespace else 0
        self._namespace = view.namespace
        prefix_rule = view.rule.kind != "breakpoints"
        chain.extend(view, kept, chars=prefix_rule)
        digests, counts = chain.digests, chain.counts
        shared = 0
        for index in range(len(digests) - 1, -1, -1):  # every prefix of a seen chain was seen
            if index < kept or digests[index] in self._seen:
                shared = counts[index] // CHARS_PER_TOKEN if prefix_rule else counts[index]
                break
        self._seen.update(digests[kept:])  # a slice: islice would walk the first ``kept``
        if prefix_rule:
            total = max(1, ((counts[-1] if counts else 0) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN)
        else:
            total = counts[-1] if counts else 0
        return max(0, total - shared)
