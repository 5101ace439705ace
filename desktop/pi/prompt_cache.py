"""The providers' prompt cache: one fold of requests through ``cache_rules``' rules (design P6,
X8), for the live cache view and the what-if replay alike.

A request is folded as a :class:`PromptView`: its segment texts in cache order, held as a
head, a run of a shared list and a tail, and how many leading segments it repeats from the
view before it (:func:`finish`). The what-if replay's reader (``desktop.session.whatif_replay``)
makes its views from the incremental projection, sharing the committed history; the cache view
makes one per whole prompt (:func:`view_of`, then :func:`finish`), or lets the cache do it
(:meth:`PromptCache.send`, :meth:`PromptCache.predict`). Either way the figures are the same
arithmetic: one implementation, so what the Payload tab predicts is what a what-if pass counts.

:class:`PromptCache` keeps the previous prompt's prefix hashes and extends them by what a
request adds, so a request costs what it adds, not its length:

* a breakpoint rule names a prefix by two hashes, the tools and system blocks' chain and the
  message segments' own chain (the texts say where the head ends, so equal prefixes get equal
  names): a changed system prompt re-hashes the head only;
* a prefix rule stores every step of every prompt; the steps a request shares with the
  previous one are held as one record (the path and when it was last used) instead of one
  entry per step, and written out only when a later request leaves that path; the steps a
  path left are swept once expired (design X14).

:class:`FreshCounter` is the perfect cache the what-if's theoretical minimum counts with (no
minimum length, no step, no expiry), over the same views.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from desktop.pi.cache_retention import retention_for
from desktop.pi.cache_rules import (
    ANTHROPIC_LOOKBACK_BLOCKS,
    CHARS_PER_TOKEN,
    CacheRule,
    CacheUsage,
    Prompt,
    Segment,
    estimate_tokens,
    shared_prefix,
)


def segment_digest(text: str) -> bytes:
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
    #: Each committed text's digest (``segment_digest``), made once when it was read.
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
            yield segment_digest(text), len(text)
        begin = max(0, start - head)
        for index in range(begin, self.count):
            yield self.sums[index], len(self.committed[index])
        for text in itertools.islice(self.tail, max(0, start - head - self.count), None):
            yield segment_digest(text), len(text)

    @property
    def total_tokens(self) -> int:
        """``Prompt.total_tokens``, from the view's own texts (the usage of a rule that caches nothing)."""
        texts = list(self.texts_from(0))
        if self.rule.kind == "breakpoints":
            return sum(estimate_tokens(t) for t in texts)
        return max(1, (sum(len(t) + 1 for t in texts) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN)


def _common(previous: PromptView, view: PromptView, before: int = 0, now: int = 0) -> int:
    """How many segments ``view`` repeats from ``previous`` (equal texts), from its ``now``-th
    and the previous view's ``before``-th on."""
    limit = min(len(previous) - before, len(view) - now)
    old = previous.head[before:] if before else previous.head
    new = view.head[now:] if now else view.head
    if old == new:
        start = len(new)
        run = min(previous.count, view.count)
        # One list comparison in C (texts repeated across committed lists are the same objects).
        if previous.committed is view.committed or previous.committed[:run] == view.committed[:run]:
            start += run
    else:
        # A whole prompt is all head (``view_of``): one that extends the previous one is found
        # by one list comparison too.
        start = shared_prefix(old, new)
    index = start
    for a, b in zip(previous.texts_from(before + start), view.texts_from(now + start), strict=False):
        if index >= limit or a != b:
            break
        index += 1
    return min(index, limit)


def breakpoint_marks(found: Sequence[Segment]) -> list[tuple[int, str]]:
    """The position and ttl of each segment that ends a cached prefix (``PromptView.breakpoints``)."""
    return [(i, s.breakpoint) for i, s in enumerate(found) if s.breakpoint]


def head_end(texts: Sequence[str], start: int) -> int:
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
        split = lead if lead < known else head_end(view.head, known)
    # Set in place (a new view per request is made here and nowhere else).
    view.split = split
    if previous is None or previous.namespace != view.namespace:
        view.kept = view.kept_messages = 0
        return view
    view.kept = _common(previous, view)
    # How many message segments (past the tools and system) it repeats.
    breakpoints = view.rule.kind == "breakpoints"
    view.kept_messages = _common(previous, view, previous.split, split) if breakpoints else 0
    return view


def view_of(prompt: Prompt) -> PromptView:
    """A whole prompt as a view of its own, all head (the cache view's requests, the warm head
    a what-if pass starts from); ``finish`` it against the view before it."""
    texts = [s.text for s in prompt.segments]
    marks = breakpoint_marks(prompt.segments)
    return PromptView(
        prompt.rule, prompt.model, prompt.namespace, prompt.long, texts, [], 0, [], [], marks, 0
    )


class _Chain:
    """The previous prompt's prefix hashes and cumulative counts, extended per request."""

    __slots__ = ("counts", "digests")

    def __init__(self) -> None:
        self.digests: list[bytes] = []
        self.counts: list[int] = []

    def copy(self) -> _Chain:
        twin = _Chain()
        twin.digests, twin.counts = list(self.digests), list(self.counts)
        return twin

    def extend(self, parts: Iterable[tuple[bytes, int]], kept: int, chars: bool) -> None:
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


class PromptCache:
    """A provider-side prompt cache: per rule and namespace, the prefixes stored so far, with
    when each was last used and its retention (design P9: given a request's time, an entry
    unused for longer is gone; without one, nothing expires).

    ``account`` (a view) and ``send`` (a whole prompt) are a request sent: read, then store
    what the provider stores. ``predict`` is a request not sent yet: read only. A request
    costs what it adds to the previous one (see the module).
    """

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
        #: The last view accounted: a whole prompt sent next is finished against it.
        self._view: PromptView | None = None

    def copy(self) -> PromptCache:
        """An independent cache holding what this one holds."""
        twin = PromptCache()
        twin._entries = dict(self._entries)
        # What an account changes in place is copied: the chains, the step lists, the stored steps.
        twin._heads = {k: (texts, a.copy(), b.copy()) for k, (texts, a, b) in self._heads.items()}
        twin._steps = {k: (list(e), list(d), used, first) for k, (e, d, used, first) in self._steps.items()}
        twin._stored = {k: (dict(found), longest, at) for k, (found, longest, at) in self._stored.items()}
        twin._last, twin._view = self._last, self._view
        return twin

    def send(self, prompt: Prompt, now: int | None = None) -> CacheUsage:
        """A whole prompt sent at ``now`` (None: no expiry): read, then store and refresh."""
        return self.account(finish(self._view, view_of(prompt)), now)

    def predict(self, prompt: Prompt, now: int | None = None) -> CacheUsage:
        """A whole prompt not sent yet, as if sent at ``now``: read only."""
        return self.copy().send(prompt, now)

    def account(self, view: PromptView, now: int | None = None) -> CacheUsage:
        """A request sent at ``now``; ``view`` is finished against the last view accounted."""
        self._view = view
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
        return entry is not None and _valid(entry, now)

    def _breakpoints(self, view: PromptView, key: tuple[str, str], same: bool, now: int | None) -> CacheUsage:
        """A breakpoint rule's request. A prefix is named by two hashes: the chain over the
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
            # Compared in C first: the head (every tool) is the same on most requests.
            before = state[0]
            head_kept = len(head_texts) if before == head_texts else shared_prefix(before, head_texts)
            message_kept = view.kept_messages
        heads, messages = state[1], state[2]
        heads.extend(((segment_digest(t), len(t)) for t in head_texts[head_kept:]), head_kept, False)
        message_kept = min(message_kept, len(messages.digests))
        messages.extend(view.parts_from(split + message_kept), message_kept, False)
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
                self._entries[entry_key] = (
                    now,
                    max(ttl, old[1]) if old is not None and _valid(old, now) else ttl,
                )
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
        chain.extend(view.parts_from(kept), kept, chars=prefix_rule)
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
