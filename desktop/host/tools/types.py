"""The plain data every tool shares: its declaration, its effect class and its outcome.

A tool's *effect* (read / write / execute / external) is what the permission modes reason
about, so it is part of the spec rather than guessed from the name at approval time.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NamedTuple, TypeAlias

JsonObject: TypeAlias = dict[str, Any]
Effect = Literal["read", "write", "execute", "external"]

CORE_SOURCE = "core"


class ToolOutcome(NamedTuple):
    """What a tool produced, before it becomes a pi-ai ``ToolResultMessage``."""

    content: tuple[JsonObject, ...]
    is_error: bool = False
    details: JsonObject | None = None

    @classmethod
    def text(cls, text: str, *, is_error: bool = False, details: JsonObject | None = None) -> ToolOutcome:
        return cls(content=({"type": "text", "text": text},), is_error=is_error, details=details)

    @classmethod
    def error(cls, text: str, *, details: JsonObject | None = None) -> ToolOutcome:
        return cls.text(text, is_error=True, details=details)

    def to_message(self, tool_call_id: str, tool_name: str, timestamp: int | None = None) -> JsonObject:
        """The pi-ai ``ToolResultMessage`` JSON shape (``details`` only when present)."""
        message: JsonObject = {
            "role": "toolResult",
            "toolCallId": tool_call_id,
            "toolName": tool_name,
            "content": [dict(block) for block in self.content],
            "isError": self.is_error,
            "timestamp": timestamp if timestamp is not None else int(time.time() * 1000),
        }
        if self.details is not None:
            message["details"] = self.details
        return message


class ToolFailure(Exception):
    """Raised by a tool body for an expected failure; its message becomes the error result."""


@dataclass(eq=False, repr=False)
class ToolContext:
    """What a running tool may use. Paths in ``arguments`` are already confined by the Host.
    No generated repr: ``env`` is the environment commands run with."""

    workspace: Path
    cancel: threading.Event = field(default_factory=threading.Event)
    temp_dir: Path | None = None
    deferred_tools: Sequence[ToolSpec] = ()
    skills: SkillIndex | None = None
    #: The environment commands run with; None inherits the process's (design A9: the Host
    #: passes one without provider credential variables unless the user allows them).
    env: Mapping[str, str] | None = None


ToolRunner = Callable[[JsonObject, ToolContext], ToolOutcome]


class Notifier:
    """The listening half of a ``DeferredToolProvider``: each callback given to ``subscribe``
    runs after every change (``_notify``), on the thread that made it; keep callbacks cheap."""

    def __init__(self) -> None:
        self._listeners: list[Callable[[], None]] = []
        self._listeners_lock = threading.Lock()

    def subscribe(self, callback: Callable[[], None]) -> None:
        with self._listeners_lock:
            self._listeners.append(callback)

    def _notify(self) -> None:
        with self._listeners_lock:
            listeners = list(self._listeners)
        for callback in listeners:
            callback()


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool of the catalog: the declaration the model sees plus what the Host needs.

    ``path_args`` names the arguments the Host confines to the workspace before running.
    ``read_only`` lets a deferred tool (an MCP tool annotated ``readOnlyHint``) run in
    read-only mode. ``runner`` and ``prepare`` are neither compared nor shown.
    """

    name: str
    description: str
    parameters: JsonObject
    effect: Effect
    runner: ToolRunner = field(compare=False, repr=False)
    source: str = CORE_SOURCE
    deferred: bool = False
    path_args: tuple[str, ...] = ()
    default_path: str | None = None
    read_only: bool = False
    prepare: Callable[[JsonObject], JsonObject] | None = field(default=None, compare=False, repr=False)

    __hash__ = None  # type: ignore[assignment]  # its parameters are a dict

    def declaration(self) -> JsonObject:
        """The pi-ai ``Tool`` JSON: exactly what providers receive."""
        return {"name": self.name, "description": self.description, "parameters": self.parameters}


class SkillIndex:
    """Maps skill ids to their SKILL.md files; the session's skill catalog supplies one."""

    def __init__(self, skills: Mapping[str, Path] | None = None) -> None:
        self._skills = dict(skills or {})

    def path_for(self, name: str) -> Path | None:
        return self._skills.get(name)

    def names(self) -> list[str]:
        return sorted(self._skills)
