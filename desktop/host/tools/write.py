"""``write``: create or overwrite a file (parents created), durably."""

from __future__ import annotations

import os
from pathlib import Path

from desktop.host.tools.types import JsonObject, ToolContext, ToolOutcome, ToolSpec
from desktop.host.tools.workspace import display_path

NAME = "write"
DESCRIPTION = (
    "Write content to a file. Creates the file if it doesn't exist, overwrites if it does. "
    "Automatically creates parent directories."
)
PARAMETERS: JsonObject = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Path to the file to write (relative or absolute)"},
        "content": {"type": "string", "description": "Content to write to the file"},
    },
    "required": ["path", "content"],
}


def write_text(path: Path, text: str) -> None:
    """Write through a temporary sibling and rename, so a crash never leaves half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.pi-tmp-{os.getpid()}")
    with open(tmp, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    if path.exists():
        os.chmod(tmp, path.stat().st_mode & 0o7777)
    os.replace(tmp, path)


def run(args: JsonObject, ctx: ToolContext) -> ToolOutcome:
    content = str(args["content"])
    write_text(Path(os.path.realpath(args["path"])), content)
    shown = display_path(Path(args["path"]), ctx.workspace)
    return ToolOutcome.text(f"Successfully wrote {len(content)} bytes to {shown}")


TOOL_SPEC = ToolSpec(NAME, DESCRIPTION, PARAMETERS, effect="write", runner=run, path_args=("path",))
