"""How messages become text: system state as prompt text (pi-ai ``utils/text.ts``) and a
message as the one line a timeline row shows.

The update framing (design P2) is request-time only: it is rendered here at projection time
and never stored in the transcript (design T7). The one-line preview is shared by the window's
rows and the foreign readers' rows (design T12), so every session's timeline reads the same.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from desktop.pi.types import SystemMessage


def content_text(content: str | Sequence[Mapping[str, Any]]) -> str:
    """Join the text blocks of a message's content (a plain string passes through)."""
    if isinstance(content, str):
        return content
    return "\n".join(block["text"] for block in content if block.get("type") == "text")


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


#: Characters a one-line summary keeps (a timeline row shows far fewer).
SUMMARY_LIMIT = 400
#: Terminal escape sequences (colours, cursor moves, titles) that tool output carries: they
#: format a terminal and mean nothing in a one-line summary.
_ESCAPES = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
#: Other control characters, shown as their Unicode control pictures instead of as boxes.
_CONTROLS = {code: 0x2400 + code for code in range(32) if chr(code) not in "\t\n\r\x0b\x0c"} | {0x7F: 0x2421}


def one_line(text: str) -> str:
    """``text`` folded to one line of at most ``SUMMARY_LIMIT`` characters, without terminal
    escapes, control characters shown as their pictures."""
    if "\x1b" in text:
        text = _ESCAPES.sub("", text)
    flat = " ".join(text.split()).translate(_CONTROLS)
    return flat if len(flat) <= SUMMARY_LIMIT else flat[: SUMMARY_LIMIT - 1] + "…"


def content_preview(content: object) -> str:
    """A message's content as text for a summary: text, tool calls with their arguments and
    images, then thinking, so a narrow row shows what was said first (design G7). Any JSON
    value is accepted (foreign files and unknown rows reach here too)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts: list[str] = []
    thoughts: list[str] = []
    for block in content:
        if not isinstance(block, Mapping):
            continue
        kind = block.get("type")
        if kind == "text":
            parts.append(str(block.get("text", "")))
        elif kind == "thinking":
            thoughts.append("(thinking) " + str(block.get("thinking", ""))[:80])
        elif kind == "toolCall":
            parts.append(f"→ {block.get('name', '?')}({_arguments(block.get('arguments'))})")
        elif kind == "image":
            parts.append("[image]")
    return " ".join(parts + thoughts)


def _arguments(arguments: object) -> str:
    if not isinstance(arguments, Mapping):
        return ""
    # Strings as written between quotes, not as Python reprs: a command holding the two
    # characters \n must read \n, not \\n (newlines fold into spaces with the rest).
    text = ", ".join(f"{k}='{v[:40]}'" if isinstance(v, str) else f"{k}={v!r}" for k, v in arguments.items())
    return text if len(text) <= 80 else text[:79] + "…"
