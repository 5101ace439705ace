"""``skill``: load a skill's SKILL.md body through the Host.

The skill catalog in the system prompt names skills by id; the body is read here, from the
file the catalog registered for that id only, so loading a skill never becomes a general
read of an arbitrary path outside the workspace.
"""

from __future__ import annotations

from desktop.host.tools.types import JsonObject, SkillIndex, ToolContext, ToolFailure, ToolOutcome, ToolSpec

NAME = "skill"
DESCRIPTION = (
    "Load a skill by its exact id from the skill catalog. Returns the skill's instructions (SKILL.md). "
    "Relative paths in a skill resolve against its directory, given in the result."
)
PARAMETERS: JsonObject = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "Exact skill id as listed in the skill catalog"}
    },
    "required": ["name"],
}


def run(args: JsonObject, ctx: ToolContext) -> ToolOutcome:
    name = str(args["name"])
    index = ctx.skills or SkillIndex()
    path = index.path_for(name)
    if path is None:
        known = ", ".join(index.names()) or "none"
        raise ToolFailure(f"Unknown skill {name!r}. Known skills: {known}.")
    try:
        body = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ToolFailure(f"Could not read skill {name!r} at {path}: {exc.strerror or exc}") from exc
    return ToolOutcome.text(
        f'<skill name="{name}" location="{path}">\nBase directory: {path.parent}\n\n{body}\n</skill>',
        details={"skill": name, "path": str(path)},
    )


TOOL_SPEC = ToolSpec(NAME, DESCRIPTION, PARAMETERS, effect="read", runner=run)
