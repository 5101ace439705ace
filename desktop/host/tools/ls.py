"""``ls``: one directory's entries, sorted case-insensitively, directories marked with ``/``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from desktop.host.tools.truncate import DEFAULT_MAX_BYTES, format_size, truncate_head
from desktop.host.tools.types import JsonObject, ToolContext, ToolFailure, ToolOutcome, ToolSpec

NAME = "ls"
DEFAULT_LIMIT = 500
DESCRIPTION = (
    "List directory contents. Returns entries sorted alphabetically, with '/' suffix for directories. "
    f"Includes dotfiles. Output is truncated to {DEFAULT_LIMIT} entries or {DEFAULT_MAX_BYTES // 1024}KB "
    "(whichever is hit first)."
)
PARAMETERS: JsonObject = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Directory to list (default: current directory)"},
        "limit": {"type": "number", "description": "Maximum number of entries to return (default: 500)"},
    },
}


def run(args: JsonObject, ctx: ToolContext) -> ToolOutcome:
    directory = Path(args.get("path") or ctx.workspace)
    limit = int(args.get("limit") or DEFAULT_LIMIT)
    if not directory.exists():
        raise ToolFailure(f"Path not found: {args.get('path') or '.'}")
    if not directory.is_dir():
        raise ToolFailure(f"Not a directory: {args.get('path')}")
    names = sorted(os.listdir(directory), key=lambda n: (n.lower(), n))
    results: list[str] = []
    limit_hit = False
    for name in names:
        if len(results) >= limit:
            limit_hit = True
            break
        try:
            suffix = "/" if (directory / name).is_dir() else ""
        except OSError:
            continue
        results.append(name + suffix)
    if not results:
        return ToolOutcome.text("(empty directory)")
    cut = truncate_head("\n".join(results), max_lines=10**9)
    text = cut.content
    details: dict[str, Any] = {}
    notices: list[str] = []
    if limit_hit:
        notices.append(f"{limit} entries limit reached. Use limit={limit * 2} for more")
        details["entryLimitReached"] = limit
    if cut.truncated:
        notices.append(f"{format_size(DEFAULT_MAX_BYTES)} limit reached")
        details["truncation"] = cut.details()
    if notices:
        text += f"\n\n[{'. '.join(notices)}]"
    return ToolOutcome.text(text, details=details or None)


SPEC = ToolSpec(
    NAME, DESCRIPTION, PARAMETERS, effect="read", runner=run, path_args=("path",), default_path="."
)
