"""The common ending of the listing tools (ls, find, grep): one output budget, one notice line.

The model learns from the bracketed notice what was cut and how to ask for more, and the
details carry the same facts for the inspector.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from desktop.host.tools.truncate import DEFAULT_MAX_BYTES, format_size, truncate_head
from desktop.host.tools.types import ToolOutcome


def listing_outcome(
    lines: Sequence[str],
    *,
    limit: tuple[str, str, int] | None = None,
    extra: Sequence[tuple[str, str, Any]] = (),
) -> ToolOutcome:
    """``lines`` cut to the byte budget, with notices: the limit one first (``(notice, detail
    key, value)`` when a result limit was hit), then the byte budget, then ``extra``."""
    cut = truncate_head("\n".join(lines), max_lines=10**9)
    text = cut.content
    details: dict[str, Any] = {}
    notices: list[str] = []
    if limit is not None:
        notice, key, value = limit
        notices.append(notice)
        details[key] = value
    if cut.truncated:
        notices.append(f"{format_size(DEFAULT_MAX_BYTES)} limit reached")
        details["truncation"] = cut.details()
    for notice, key, value in extra:
        notices.append(notice)
        details[key] = value
    if notices:
        text += f"\n\n[{'. '.join(notices)}]"
    return ToolOutcome.text(text, details=details or None)
