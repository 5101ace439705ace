"""The what-if replay's reader: each request of a pass as a view of the one prompt cache
(``desktop.pi.prompt_cache``), in time linear in what the session adds (design X8).

A pass makes every request from the previous one through the incremental projection
(design P7): the prompt head, the committed history (the engine's append-only list, shared by
every request) and the tail. :class:`PromptReader` reads that structure instead of each body
whole:

* the committed items are read into segment texts once, when they are committed, and a
  request's view shares that list;
* the tools and system blocks are read again only when they changed (compared as values), and
  then only past the tools the last head had (a session's tool list grows);
* how many leading segments a request repeats from the previous one is known from that
  structure (the same committed list, the same head) and checked only where it is not
  (``prompt_cache.finish``).

The views are folded through ``prompt_cache.PromptCache``, the cache the live cache view
predicts with: one arithmetic for both. ``tests/foreign/test_whatif_linear.py`` checks that
the views of every session fixture fold to the figures of its requests read whole.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any, cast

from desktop.pi.cache_retention import asks_long
from desktop.pi.cache_rules import WIRE_OF_API, CanonicalMemo, Prompt, read_prompt, segments
from desktop.pi.projection import ProviderRequest
from desktop.pi.projection.incremental import WIRE_PATHS, SplicedRequest
from desktop.pi.prompt_cache import PromptView, breakpoint_marks, finish, head_end, segment_digest

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
                prompt, [s.text for s in prompt.segments], breakpoint_marks(prompt.segments), [], 0, []
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
        marks = [(same + i, t) for i, t in breakpoint_marks(prompt.segments)]
        flags = [asks_long({"tools": [tool]}) for tool in body.get("tools") or ()]
        if same:
            texts[:0] = self._tools[1][:same]
            marks[:0] = [mark for mark in self._tools[2] if mark[0] < same]
            flags[:0] = self._tools[3][:same]
        if isinstance(tools, list) and self.wire in _TOOLS_LEAD:
            self._tools = (tools, texts[: len(tools)], marks, flags)
        result = (texts, marks, prompt, any(flags) or asks_long({**body, "tools": []}))
        self._fixed_cache = (parts, result)
        self._fixed_split = (len(texts), head_end(texts, 0))
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
                self._sums.append(segment_digest(segment.text))
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
