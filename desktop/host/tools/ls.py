"""``ls``: one directory's entries, sorted case-insensitively, directories marked with ``/``."""

from __future__ import annotations

import os
from pathlib import Path

from desktop.host.tools.listing import listing_outcome
from desktop.host.tools.truncate import DEFAULT_MAX_BYTES
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
        if ctx.cancel.is_set():
            raise ToolFailure("Operation aborted")
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
    notice = f"{limit} entries limit reached. Use limit={limit * 2} for more"
    return listing_outcome(results, limit=(notice, "entryLimitReached", limit) if limit_hit else None)


TOOL_SPEC = ToolSpec(
    NAME, DESCRIPTION, PARAMETERS, effect="read", runner=run, path_args=("path",), default_path="."
)
