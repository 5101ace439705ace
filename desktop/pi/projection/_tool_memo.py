"""Each tool list's converted declarations, kept (design X11, X13).

A projection converts the whole tool list on every request, and a long session's tool list is
the same objects request after request: a what-if pass spent a fifth of its time converting
the same tools again. Transcript messages are values nobody changes once made (the
incremental projection already relies on that, design P7), so the tool objects and the options
that decide their conversion name the result. The entries are shared between the requests
that declare the same tools, read-only, except the last: each caller gets its own copy of it
(projectors set ``cache_control`` there).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

#: Lists kept before the memo starts again (a session has a few tool lists, a test many).
_LIMIT = 256


class ToolMemo:
    """Converted tool lists by their tools' identities and the conversion options; each tool's
    entry kept on its own too, so a list that adds a tool converts that tool alone (a session
    that adds a tool every few turns converted its whole list again at each addition)."""

    def __init__(self) -> None:
        #: The key's tools are held by the value: their ids name no other object meanwhile.
        self._lists: dict[tuple[Hashable, ...], tuple[Sequence[Mapping[str, Any]], list[dict[str, Any]]]] = {}
        self._tools: dict[tuple[int, tuple[Hashable, ...]], tuple[Mapping[str, Any], dict[str, Any]]] = {}

    def convert(
        self,
        tools: Sequence[Mapping[str, Any]],
        options: tuple[Hashable, ...],
        make: Callable[[Mapping[str, Any]], dict[str, Any]],
    ) -> list[dict[str, Any]]:
        if not tools:
            return []
        held = tuple(tools)
        slot = (*map(id, held), options)
        hit = self._lists.get(slot)
        if hit is None:
            if len(self._lists) >= _LIMIT:
                self._lists.clear()
                self._tools.clear()
            hit = (held, [self._one(tool, options, make) for tool in held])
            self._lists[slot] = hit
        entries = hit[1]
        return [*entries[:-1], dict(entries[-1])]

    def _one(
        self,
        tool: Mapping[str, Any],
        options: tuple[Hashable, ...],
        make: Callable[[Mapping[str, Any]], dict[str, Any]],
    ) -> dict[str, Any]:
        key = (id(tool), options)
        hit = self._tools.get(key)
        if hit is None:
            hit = (tool, make(tool))
            self._tools[key] = hit
        return hit[1]
