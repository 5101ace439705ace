"""``read``: file contents for the model, head-truncated with an actionable continuation note."""

from __future__ import annotations

from pathlib import Path

from desktop.host.regular_files import NotRegularFile, open_regular
from desktop.host.tools.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, format_size, truncate_head
from desktop.host.tools.types import JsonObject, ToolContext, ToolFailure, ToolOutcome, ToolSpec
from desktop.host.tools.workspace import display_path

NAME = "read"
DESCRIPTION = (
    "Read the contents of a file. Supports text files and images (jpg, png, gif, webp). Images are sent "
    f"as attachments. For text files, output is truncated to {DEFAULT_MAX_LINES} lines or "
    f"{DEFAULT_MAX_BYTES // 1024}KB (whichever is hit first). Use offset/limit for large files. When you "
    "need the full file, continue with offset until complete."
)
PARAMETERS: JsonObject = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Path to the file to read (relative or absolute)"},
        "offset": {"type": "number", "description": "Line number to start reading from (1-indexed)"},
        "limit": {"type": "number", "description": "Maximum number of lines to read"},
    },
    "required": ["path"],
}

_IMAGE_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def _image_mime(head: bytes) -> str | None:
    for magic, mime in _IMAGE_MAGIC:
        if head.startswith(magic):
            return mime
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def run(args: JsonObject, ctx: ToolContext) -> ToolOutcome:
    path = Path(args["path"])
    shown = display_path(path, ctx.workspace)
    if not path.exists():
        raise ToolFailure(f"File not found: {shown}")
    if path.is_dir():
        raise ToolFailure(f"{shown} is a directory; use ls to list it")
    try:
        with open_regular(path) as handle:  # a FIFO would block, a device never end (design X24)
            data = handle.read()
    except NotRegularFile as exc:
        raise ToolFailure(f"{shown}: {exc.strerror}") from None
    mime = _image_mime(data[:16])
    if mime:
        # Lazy: the status budget.
        import base64

        return ToolOutcome(
            content=(
                {"type": "text", "text": f"Read image file [{mime}]"},
                {"type": "image", "data": base64.b64encode(data).decode("ascii"), "mimeType": mime},
            )
        )
    text = data.decode("utf-8", errors="replace")
    lines = text.split("\n")
    offset = args.get("offset")
    limit = args.get("limit")
    start = max(0, int(offset) - 1) if offset else 0
    if start >= len(lines):
        raise ToolFailure(f"Offset {offset} is beyond end of file ({len(lines)} lines total)")
    end = len(lines) if limit is None else min(start + max(0, int(limit)), len(lines))
    cut = truncate_head("\n".join(lines[start:end]))
    first = start + 1
    if cut.first_line_exceeds_limit:
        size = format_size(len(lines[start].encode("utf-8")))
        out = (
            f"[Line {first} is {size}, exceeds {format_size(DEFAULT_MAX_BYTES)} limit. "
            f"Use bash: sed -n '{first}p' {shown} | head -c {DEFAULT_MAX_BYTES}]"
        )
        return ToolOutcome.text(out, details={"truncation": cut.details()})
    if cut.truncated:
        last = first + cut.output_lines - 1
        limit_note = "" if cut.truncated_by == "lines" else f" ({format_size(DEFAULT_MAX_BYTES)} limit)"
        out = f"{cut.content}\n\n[Showing lines {first}-{last} of {len(lines)}{limit_note}. Use offset={last + 1} to continue.]"
        return ToolOutcome.text(out, details={"truncation": cut.details()})
    if end < len(lines):
        return ToolOutcome.text(
            f"{cut.content}\n\n[{len(lines) - end} more lines in file. Use offset={end + 1} to continue.]"
        )
    return ToolOutcome.text(cut.content)


TOOL_SPEC = ToolSpec(NAME, DESCRIPTION, PARAMETERS, effect="read", runner=run, path_args=("path",))
