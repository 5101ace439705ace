"""Output limits shared by the tools: whichever of the line or byte limit is hit first wins.

Reads keep the head (the model continues with ``offset``); command output keeps the tail
(errors and final results live at the end). Neither returns a partial line, except a tail
whose only line is longer than the byte limit.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

DEFAULT_MAX_LINES = 2000
DEFAULT_MAX_BYTES = 50 * 1024
GREP_MAX_LINE_LENGTH = 500


class Truncation(NamedTuple):
    """What a limit kept of a text, and what it cut (``details`` is what the model's tool result
    carries)."""

    content: str
    truncated: bool
    truncated_by: Literal["lines", "bytes"] | None
    total_lines: int
    total_bytes: int
    output_lines: int
    output_bytes: int
    last_line_partial: bool = False
    first_line_exceeds_limit: bool = False

    def details(self) -> dict[str, Any]:
        data = self._asdict()
        data.pop("content")
        return data


def format_size(size: int) -> str:
    if size < 1024:
        return f"{size}B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f}KB"
    return f"{size / (1024 * 1024):.1f}MB"


def _nbytes(text: str) -> int:
    return len(text.encode("utf-8"))


def truncate_head(
    content: str, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> Truncation:
    total_bytes = _nbytes(content)
    lines = content.split("\n")
    if len(lines) <= max_lines and total_bytes <= max_bytes:
        return Truncation(content, False, None, len(lines), total_bytes, len(lines), total_bytes)
    if _nbytes(lines[0]) > max_bytes:
        return Truncation("", True, "bytes", len(lines), total_bytes, 0, 0, first_line_exceeds_limit=True)
    kept: list[str] = []
    used = 0
    by: Literal["lines", "bytes"] = "lines"
    for index, line in enumerate(lines[:max_lines]):
        size = _nbytes(line) + (1 if index else 0)
        if used + size > max_bytes:
            by = "bytes"
            break
        kept.append(line)
        used += size
    out = "\n".join(kept)
    return Truncation(out, True, by, len(lines), total_bytes, len(kept), _nbytes(out))


def truncate_tail(
    content: str, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> Truncation:
    total_bytes = _nbytes(content)
    lines = content.split("\n")
    if len(lines) <= max_lines and total_bytes <= max_bytes:
        return Truncation(content, False, None, len(lines), total_bytes, len(lines), total_bytes)
    kept: list[str] = []
    used = 0
    by: Literal["lines", "bytes"] = "lines"
    partial = False
    for line in reversed(lines):
        if len(kept) >= max_lines:
            break
        size = _nbytes(line) + (1 if kept else 0)
        if used + size > max_bytes:
            by = "bytes"
            if not kept:
                tail = line.encode("utf-8")[-max_bytes:].decode("utf-8", errors="ignore")
                kept.append(tail)
                used = _nbytes(tail)
                partial = True
            break
        kept.append(line)
        used += size
    kept.reverse()
    out = "\n".join(kept)
    return Truncation(
        out, True, by, len(lines), total_bytes, len(kept), _nbytes(out), last_line_partial=partial
    )


def truncate_line(line: str, max_chars: int = GREP_MAX_LINE_LENGTH) -> tuple[str, bool]:
    if len(line) <= max_chars:
        return line, False
    return f"{line[:max_chars]}... [truncated]", True
