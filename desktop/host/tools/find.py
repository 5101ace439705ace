"""``find``: files by glob pattern, relative to the search directory, ignore files respected."""

from __future__ import annotations

from pathlib import Path

from desktop.host.tools.globs import SearchGlob
from desktop.host.tools.listing import listing_outcome
from desktop.host.tools.truncate import DEFAULT_MAX_BYTES
from desktop.host.tools.types import JsonObject, ToolContext, ToolFailure, ToolOutcome, ToolSpec

NAME = "find"
DEFAULT_LIMIT = 1000
DESCRIPTION = (
    "Search for files by glob pattern. Returns matching file paths relative to the search directory. "
    f"Respects .gitignore. Output is truncated to {DEFAULT_LIMIT} results or {DEFAULT_MAX_BYTES // 1024}KB "
    "(whichever is hit first)."
)
PARAMETERS: JsonObject = {
    "type": "object",
    "properties": {
        "pattern": {
            "type": "string",
            "description": "Glob pattern to match files, e.g. '*.ts', '**/*.json', or 'src/**/*.spec.ts'",
        },
        "path": {"type": "string", "description": "Directory to search in (default: current directory)"},
        "limit": {"type": "number", "description": "Maximum number of results (default: 1000)"},
    },
    "required": ["pattern"],
}


def run(args: JsonObject, ctx: ToolContext) -> ToolOutcome:
    # Lazy: the status budget.
    from desktop.host.tools.ignore import walk

    base = Path(args.get("path") or ctx.workspace)
    if not base.is_dir():
        raise ToolFailure(f"Path not found: {args.get('path') or '.'}")
    limit = max(1, int(args.get("limit") or DEFAULT_LIMIT))
    matcher = SearchGlob(str(args["pattern"]))
    found: list[str] = []
    for rel, _, is_dir in walk(base, include_dirs=True, cancel=ctx.cancel):  # the walk checks Stop
        if matcher.matches(rel):
            found.append(rel + ("/" if is_dir else ""))
            if len(found) >= limit:
                break
    if not found:
        return ToolOutcome.text("No files found matching pattern")
    limit_notice = (
        (f"{limit} results limit reached", "resultLimitReached", limit) if len(found) >= limit else None
    )
    return listing_outcome(found, limit=limit_notice)


TOOL_SPEC = ToolSpec(
    NAME, DESCRIPTION, PARAMETERS, effect="read", runner=run, path_args=("path",), default_path="."
)
