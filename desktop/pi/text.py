"""How system state becomes prompt text (pi-ai ``utils/text.ts``).

The update framing (design P2) is request-time only: it is rendered here at projection time
and never stored in the transcript (design T7).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from desktop.pi.types import SystemMessage


def content_text(content: str | Sequence[Mapping[str, Any]], separator: str = "\n") -> str:
    """Join the text blocks of a message's content (a plain string passes through)."""
    if isinstance(content, str):
        return content
    return separator.join(block["text"] for block in content if block.get("type") == "text")


def system_message_text(message: SystemMessage) -> str:
    """A system message as a complete prompt: its content, then its live sections."""
    parts = [content_text(message["content"])]
    parts.extend(text for text in (message.get("sections") or {}).values() if text is not None)
    return "\n\n".join(part for part in parts if part)


def render_system_update(message: SystemMessage) -> str:
    """A later system message as update text, each section change framed by its name."""
    parts: list[str] = []
    text = content_text(message["content"])
    if text:
        parts.append(text)
    for name, value in (message.get("sections") or {}).items():
        if value is None:
            parts.append(f'Removed system prompt section "{name}".')
        else:
            parts.append(f'Updated system prompt section "{name}":\n\n{value}')
    return "\n\n".join(parts)
