"""``grep``: regex or literal search over workspace files, ignore files respected."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import re2

from desktop.host.regular_files import open_regular
from desktop.host.tools.globs import SearchGlob
from desktop.host.tools.listing import listing_outcome
from desktop.host.tools.truncate import (
    DEFAULT_MAX_BYTES,
    GREP_MAX_LINE_LENGTH,
    truncate_line,
)
from desktop.host.tools.types import JsonObject, ToolContext, ToolFailure, ToolOutcome, ToolSpec

NAME = "grep"
DEFAULT_LIMIT = 100
#: A file with a NUL byte in its first bytes is binary and skipped, unread beyond them.
BINARY_PROBE_BYTES = 8192
#: How much of one file is searched: a generated or downloaded giant is searched in its head,
#: and the result says so (design X20).
MAX_FILE_BYTES = 64 << 20
#: How often the search of one file checks Stop (design X20).
CANCEL_EVERY_LINES = 4096
DESCRIPTION = (
    "Search file contents for a pattern. Returns matching lines with file paths and line numbers. "
    f"Respects .gitignore. Output is truncated to {DEFAULT_LIMIT} matches or {DEFAULT_MAX_BYTES // 1024}KB "
    f"(whichever is hit first). Long lines are truncated to {GREP_MAX_LINE_LENGTH} chars."
)
PARAMETERS: JsonObject = {
    "type": "object",
    "properties": {
        "pattern": {"type": "string", "description": "Search pattern (regex or literal string)"},
        "path": {"type": "string", "description": "Directory or file to search (default: current directory)"},
        "glob": {
            "type": "string",
            "description": "Filter files by glob pattern, e.g. '*.ts' or '**/*.spec.ts'",
        },
        "ignoreCase": {"type": "boolean", "description": "Case-insensitive search (default: false)"},
        "literal": {
            "type": "boolean",
            "description": "Treat pattern as literal string instead of regex (default: false)",
        },
        "context": {
            "type": "number",
            "description": "Number of lines to show before and after each match (default: 0)",
        },
        "limit": {"type": "number", "description": "Maximum number of matches to return (default: 100)"},
    },
    "required": ["pattern"],
}


def _files(base: Path, glob: str | None, ctx: ToolContext) -> list[tuple[str, Path]]:
    if base.is_file():
        return [(base.name, base)]
    # Lazy: the status budget.
    from desktop.host.tools.ignore import walk

    matcher = SearchGlob(glob) if glob else None
    walked = walk(base, cancel=ctx.cancel)  # the walk checks Stop at every entry
    return [(rel, path) for rel, path, _ in walked if matcher is None or matcher.matches(rel)]


def _compiled(args: JsonObject) -> Any:
    """The model's pattern compiled by RE2: matching takes time linear in the line whatever
    the pattern (design X20), so a pattern like ``(a+)+$`` cannot hold the interpreter and make
    Stop or SIGTERM wait. Its syntax is ripgrep's (pi's grep): no lookaround or backreferences."""
    options = re2.Options()
    options.log_errors = False  # a bad pattern is the tool's answer, not a line on stderr
    options.case_sensitive = not args.get("ignoreCase")
    source = re.escape(args["pattern"]) if args.get("literal") else str(args["pattern"])
    try:
        return re2.compile(source, options)
    except re2.error as exc:
        why = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else exc
        raise ToolFailure(
            f"Invalid regex {args['pattern']!r}: {why} (the search uses RE2, like ripgrep: no lookaround "
            "or backreferences). Pass literal=true to search for it as text."
        ) from exc


def run(args: JsonObject, ctx: ToolContext) -> ToolOutcome:
    base = Path(args.get("path") or ctx.workspace)
    if not base.exists():
        raise ToolFailure(f"Path not found: {args.get('path') or '.'}")
    regex = _compiled(args)
    context = max(0, int(args.get("context") or 0))
    limit = max(1, int(args.get("limit") or DEFAULT_LIMIT))
    out: list[str] = []
    matches = 0
    limit_hit = False
    lines_cut = False
    files_cut: list[str] = []
    for rel, path in _files(base, args.get("glob"), ctx):
        if ctx.cancel.is_set():
            raise ToolFailure("Operation aborted")
        try:
            with open_regular(path) as handle:  # a FIFO or a device is skipped (design X24)
                head = handle.read(BINARY_PROBE_BYTES)
                if b"\x00" in head:
                    continue  # binary: the rest is never read
                data = head + handle.read(max(0, MAX_FILE_BYTES + 1 - len(head)))
        except OSError:
            continue
        if len(data) > MAX_FILE_BYTES:
            data = data[:MAX_FILE_BYTES]
            files_cut.append(rel)
        lines = data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n").split("\n")
        if lines and lines[-1] == "":
            lines.pop()  # a final newline ends the last line; it does not start another
        for number, line in enumerate(lines, start=1):
            if number % CANCEL_EVERY_LINES == 0 and ctx.cancel.is_set():
                raise ToolFailure("Operation aborted")
            if not regex.search(line):
                continue
            matches += 1
            start = max(1, number - context)
            end = min(len(lines), number + context)
            for current in range(start, end + 1):
                text, cut = truncate_line(lines[current - 1])
                lines_cut = lines_cut or cut
                sep = ":" if current == number else "-"
                out.append(f"{rel}{sep}{current}{sep} {text}")
            if matches >= limit:
                limit_hit = True
                break
        if limit_hit:
            break
    big = f"Searched only the first {MAX_FILE_BYTES >> 20}MB of {', '.join(files_cut[:5])}" + (
        f" and {len(files_cut) - 5} more" if len(files_cut) > 5 else ""
    )
    if not matches:
        return ToolOutcome.text(f"No matches found\n\n[{big}]" if files_cut else "No matches found")
    notice = f"{limit} matches limit reached. Use limit={limit * 2} for more, or refine pattern"
    cut_lines = f"Some lines truncated to {GREP_MAX_LINE_LENGTH} chars. Use read tool to see full lines"
    extra: list[tuple[str, str, Any]] = [(cut_lines, "linesTruncated", True)] if lines_cut else []
    if files_cut:
        extra.append((big, "filesTruncated", files_cut))
    return listing_outcome(
        out, limit=(notice, "matchLimitReached", limit) if limit_hit else None, extra=extra
    )


TOOL_SPEC = ToolSpec(
    NAME, DESCRIPTION, PARAMETERS, effect="read", runner=run, path_args=("path",), default_path="."
)
