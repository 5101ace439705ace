"""The tool catalog: core tools plus deferred tools from providers (MCP servers, extensions).

A provider can change at any time (an MCP ``tools/list_changed``, a crash, an extension
registering late); the catalog turns that into an immutable ``CatalogSnapshot`` with a
fingerprint over the full declarations, so "did the catalog or any schema change?" is one
string comparison. Name clashes never shadow silently: the first provider keeps the name
and the clash is listed in the snapshot.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

import orjson

from desktop.host.tools import bash, edit, find, grep, ls, read, skill, toolsearch, write
from desktop.host.tools.types import JsonObject, Notifier, ToolSpec

CORE_TOOLS: tuple[ToolSpec, ...] = (
    read.TOOL_SPEC,
    write.TOOL_SPEC,
    edit.TOOL_SPEC,
    bash.TOOL_SPEC,
    ls.TOOL_SPEC,
    grep.TOOL_SPEC,
    find.TOOL_SPEC,
    toolsearch.TOOL_SPEC,
    skill.TOOL_SPEC,
)


def canonical_json(value: object) -> bytes:
    """Sorted keys, no whitespace: the byte form every hash and comparison uses."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


#: How long a snapshot waits for a provider to finish a change it has announced.
SETTLE_TIMEOUT = 5.0


class DeferredToolProvider(Protocol):
    """Anything that contributes deferred tools and says when they change.

    A provider whose changes arrive asynchronously (``McpHub``) may also have
    ``settle(timeout) -> bool``; a snapshot waits for it, so an announced change is never missed.
    """

    def deferred_tools(self) -> Sequence[ToolSpec]: ...

    def subscribe(self, callback: Callable[[], None]) -> None: ...


class CatalogSnapshot:
    """The catalog's tools at one moment: the core ones and the deferred ones. Snapshots are
    not compared."""

    __slots__ = ("_by_name", "conflicts", "core", "deferred")

    def __init__(
        self, core: tuple[ToolSpec, ...], deferred: tuple[ToolSpec, ...], conflicts: tuple[str, ...] = ()
    ) -> None:
        self.core = core
        self.deferred = deferred
        self.conflicts = conflicts
        self._by_name: dict[str, ToolSpec] = {spec.name: spec for spec in (*core, *deferred)}

    def get(self, name: str) -> ToolSpec | None:
        return self._by_name.get(name)

    @property
    def names(self) -> frozenset[str]:
        return frozenset(self._by_name)

    @property
    def deferred_names(self) -> frozenset[str]:
        return frozenset(spec.name for spec in self.deferred)

    def all_tools(self) -> list[ToolSpec]:
        """Every tool in deterministic name order."""
        return sorted((*self.core, *self.deferred), key=lambda spec: spec.name)

    def declarations(self) -> list[JsonObject]:
        """Full pi-ai ``Tool`` declarations of the whole catalog, in name order."""
        return [spec.declaration() for spec in self.all_tools()]

    @property
    def fingerprint(self) -> str:
        """SHA-256 over the canonical declarations and which names are deferred."""
        payload = {"declarations": self.declarations(), "deferred": sorted(self.deferred_names)}
        return hashlib.sha256(canonical_json(payload)).hexdigest()


class ToolCatalog(Notifier):
    """Thread-safe owner of the current tool set; listeners hear about every change."""

    def __init__(self, providers: Iterable[DeferredToolProvider] = ()) -> None:
        self._core = CORE_TOOLS
        self._providers: list[DeferredToolProvider] = []
        super().__init__()
        self._lock = threading.Lock()
        for provider in providers:
            self.add_provider(provider)

    def add_provider(self, provider: DeferredToolProvider) -> None:
        with self._lock:
            self._providers.append(provider)
        provider.subscribe(self._notify)
        self._notify()

    def snapshot(self) -> CatalogSnapshot:
        with self._lock:
            providers = list(self._providers)
        for provider in providers:
            settle = getattr(provider, "settle", None)
            if callable(settle):
                settle(SETTLE_TIMEOUT)
        taken = {spec.name for spec in self._core}
        deferred: list[ToolSpec] = []
        conflicts: list[str] = []
        for provider in providers:
            for spec in sorted(provider.deferred_tools(), key=lambda s: s.name):
                if spec.name in taken:
                    conflicts.append(
                        f"{spec.name} from {spec.source} clashes with an existing tool and is not offered"
                    )
                    continue
                taken.add(spec.name)
                deferred.append(spec)
        deferred.sort(key=lambda s: s.name)
        return CatalogSnapshot(core=self._core, deferred=tuple(deferred), conflicts=tuple(conflicts))
