"""Deferred tools from Python extensions: a small registration API.

An extension is a Python file with a ``register(api)`` function; it calls
``api.register_tool(...)`` once per tool. Extension tools are deferred (found through
ToolSearch) and run through the same gate as every other tool.

    def register(api):
        api.register_tool("word_count", "Count words in a text",
                          {"type": "object", "properties": {"text": {"type": "string"}},
                           "required": ["text"]},
                          lambda args: str(len(args["text"].split())))
"""

from __future__ import annotations

import functools
import importlib.util
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop.host.tools.types import (
    Effect,
    JsonObject,
    Notifier,
    ToolContext,
    ToolFailure,
    ToolOutcome,
    ToolSpec,
)

TOOL_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")
Handler = Callable[[JsonObject], "str | ToolOutcome"]


class ExtensionError(Exception):
    """An extension could not be loaded or registered a bad tool."""


class ExtensionRegistry(Notifier):
    """Holds extension tools; a ``DeferredToolProvider`` for the catalog."""

    def __init__(self) -> None:
        self._tools: dict[str, ToolSpec] = {}
        super().__init__()
        self._lock = threading.Lock()

    def register_tool(
        self,
        name: str,
        description: str,
        parameters: JsonObject,
        handler: Handler,
        *,
        effect: Effect = "external",
        read_only: bool = False,
        extension: str = "python",
    ) -> ToolSpec:
        if not TOOL_NAME.match(name):
            raise ExtensionError(
                f"extension tool name {name!r} is invalid: use a letter then letters, digits, '_' or '-' (max 64)"
            )
        if name.startswith("mcp__"):
            raise ExtensionError(f"extension tool name {name!r} uses the reserved 'mcp__' prefix")
        if not isinstance(parameters, dict) or parameters.get("type") != "object":
            raise ExtensionError(
                f"extension tool {name!r}: parameters must be a JSON schema with type 'object'"
            )

        def runner(args: JsonObject, ctx: ToolContext) -> ToolOutcome:
            try:
                value = handler(args)
            except ToolFailure:
                raise
            except Exception as exc:
                raise ToolFailure(f"Extension tool {name} failed: {type(exc).__name__}: {exc}") from exc
            return value if isinstance(value, ToolOutcome) else ToolOutcome.text(str(value))

        spec = ToolSpec(
            name=name,
            description=description,
            parameters=parameters,
            effect=effect,
            runner=runner,
            source=f"extension:{extension}",
            deferred=True,
            read_only=read_only,
        )
        with self._lock:
            self._tools[name] = spec
        self._notify()
        return spec

    def deferred_tools(self) -> Sequence[ToolSpec]:
        with self._lock:
            return list(self._tools.values())

    def load_file(self, path: Path) -> None:
        """Import ``path`` and call its ``register(api)``; errors name the file."""
        spec = importlib.util.spec_from_file_location(f"pi_desktop_extension_{path.stem}", path)
        if spec is None or spec.loader is None:
            raise ExtensionError(f"cannot load extension {path}: not a Python file")
        module: Any = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            raise ExtensionError(f"extension {path} failed to import: {type(exc).__name__}: {exc}") from exc
        register = getattr(module, "register", None)
        if not callable(register):
            raise ExtensionError(f"extension {path} has no register(api) function")
        register(_ExtensionApi(functools.partial(self.register_tool, extension=path.stem)))


@dataclass(frozen=True)
class _ExtensionApi:
    """What an extension's ``register(api)`` is given: its tools are named after its file."""

    register_tool: Callable[..., ToolSpec]
