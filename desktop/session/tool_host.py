"""The runtime's view of the tool gate (``desktop.session.gate.ToolGate``).

Every read the runtime makes (declarations, the activation section) refreshes the gate
first, so a catalog change (an MCP ``tools/list_changed``, a crash, an extension or schema
change) starts its epoch and reaches the next request's declarations at once, even between
two requests of one turn (design A7, S6).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any, cast

from desktop.pi.types import Tool, ToolCall, ToolResultMessage
from desktop.session.gate import ToolGate


class GateToolHost:
    """Adapts ToolGate to the runtime's ToolHost protocol."""

    def __init__(self, gate: ToolGate) -> None:
        self.gate = gate

    def declarations(self) -> list[Tool]:
        self.gate.refresh()
        return cast(list[Tool], self.gate.request_tools())

    def activation_section(self, *, for_comparison: bool = False) -> str | None:
        self.gate.refresh()
        return self.gate.section_text(for_comparison=for_comparison)

    def execute(self, call: ToolCall, *, cancel: threading.Event) -> ToolResultMessage:
        return cast(ToolResultMessage, self.gate.execute(call, cancel=cancel).message)

    def take_update(self, timestamp: int) -> Mapping[str, Any] | None:
        return self.gate.take_update(timestamp)

    def take_notes(self) -> list[tuple[str, str, dict[str, Any]]]:
        return [(note.level, note.text, dict(note.data)) for note in self.gate.take_notes()]
