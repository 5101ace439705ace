"""Desktop's replaceable system prompt sections (design S1, S2).

The prompt is a set of named sections rather than one string, so that a change appends
only the section that changed (or its ``null`` tombstone) and everything before it stays
byte-identical for the provider's prompt cache. Section texts are self-delimiting (tags)
so the model can relate an update to the original.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import NamedTuple

RUNTIME = "runtime"
SKILLS_HEADER = "skills"
#: Reserved: only skill catalog entries may use it, so no other name can collide with one.
SKILL_PREFIX = "skill:"
GUIDANCE = "guidance"
ENVIRONMENT = "environment"


def escape(text: str, entities: Mapping[str, str] | None = None) -> str:
    """``xml.sax.saxutils.escape``, without the ``urllib``, ``http`` and ``ssl`` imports that come
    with it (a headless command would pay for them on every start)."""
    text = text.replace("&", "&amp;").replace(">", "&gt;").replace("<", "&lt;")
    for key, value in (entities or {}).items():
        text = text.replace(key, value)
    return text


class SectionNameError(ValueError):
    """A section name that would collide with a reserved namespace or reorder in JSON."""


def skill_section_name(skill_id: str) -> str:
    if not skill_id:
        raise SectionNameError("a skill needs a non-empty id")
    return SKILL_PREFIX + skill_id


def is_skill_entry(name: str) -> bool:
    return name.startswith(SKILL_PREFIX)


class SkillEntry(NamedTuple):
    """What the model sees of one skill in the catalog: never its body."""

    id: str
    description: str
    location: str


SKILLS_HEADER_TEXT = (
    "<skills>\n"
    "Skills are specialized instructions for specific tasks. Each available skill is listed in its own\n"
    "<skill> section below. When a task matches a skill's description, load its instructions with the\n"
    "skill tool (by id) before acting. Resolve relative paths in a skill against its directory.\n"
    "</skills>"
)


def render_skill_entry(skill: SkillEntry) -> str:
    return (
        f'<skill id="{escape(skill.id, {chr(34): "&quot;"})}">\n'
        f"<description>{escape(skill.description)}</description>\n"
        f"<location>{escape(skill.location)}</location>\n"
        "</skill>"
    )


def render_guidance(files: Iterable[tuple[str, str]]) -> str | None:
    """Workspace instruction files (AGENTS.md, CLAUDE.md), nearest last so it reads as most specific."""
    parts = [f'<instructions file="{escape(path)}">\n{text.strip()}\n</instructions>' for path, text in files]
    if not parts:
        return None
    return "<guidance>\n" + "\n".join(parts) + "\n</guidance>"


def render_environment(facts: Mapping[str, str]) -> str:
    lines = [f"{key}: {value}" for key, value in facts.items()]
    return "<environment>\n" + "\n".join(lines) + "\n</environment>"


def desired_sections(
    *,
    runtime: str,
    skills: Iterable[SkillEntry],
    guidance: str | None = None,
    environment: str | None = None,
) -> dict[str, str]:
    """The complete section set Desktop wants the model to have now, in a stable order."""
    sections: dict[str, str] = {RUNTIME: runtime}
    if environment:
        sections[ENVIRONMENT] = environment
    if guidance:
        sections[GUIDANCE] = guidance
    sections[SKILLS_HEADER] = SKILLS_HEADER_TEXT
    for skill in sorted(skills, key=lambda s: s.id):
        sections[skill_section_name(skill.id)] = render_skill_entry(skill)
    return sections
