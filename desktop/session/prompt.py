"""Where Desktop's sections come from: runtime instructions, environment, guidance, skills.

Reading the workspace is cheap and done before each turn, but the result only changes the
transcript when a section's text actually changed, so an idle catalog costs nothing in
cache terms (S4: catalog-only skill changes refresh an idle runtime in place).
"""

from __future__ import annotations

from pathlib import Path

from desktop.host.guidance import GuidanceScan, environment_facts, scan_guidance
from desktop.host.skills import SkillCatalog, SkillWatcher, discover_skills, skill_roots
from desktop.session.sections import SkillEntry, desired_sections, render_environment, render_guidance

RUNTIME_INSTRUCTIONS = """<runtime>
You are Pi, a coding agent running inside Pi Desktop on the user's machine.
Work in the user's workspace with the tools you are given: read files before you change them,
prefer small precise edits, run commands to check your work, and say plainly what you did.
Tools that are not declared yet may be found with ToolSearch; a tool you have not activated
cannot run. The Host asks the user before writes and commands unless the permission mode allows
them, and confines file tools to the workspace.
System prompt sections may be updated later in the conversation; an update replaces the section
of the same name, and a removal withdraws it.
</runtime>"""


class WorkspacePrompt:
    """The live prompt sources for one workspace (implements the runtime's PromptSource)."""

    def __init__(
        self, workspace: Path, user_skills: Path | None = None, runtime_text: str = RUNTIME_INSTRUCTIONS
    ) -> None:
        self.workspace = workspace
        self.user_skills = user_skills
        self.runtime_text = runtime_text
        self._catalog: SkillCatalog | None = None
        self._watcher: SkillWatcher | None = None
        #: The instruction files the last ``sections`` read and skipped (design S7).
        self.guidance = GuidanceScan(str(workspace))

    @property
    def roots(self) -> list[tuple[Path, str]]:
        return skill_roots(self.workspace, self.user_skills)

    def skills(self) -> SkillCatalog:
        if self._watcher is None:
            self._watcher = SkillWatcher(self.roots)
            self._catalog = discover_skills(self.roots)
        elif self._watcher.changed() or self._catalog is None:
            self._catalog = discover_skills(self.roots)
        assert self._catalog is not None
        return self._catalog

    def sections(self) -> dict[str, str]:
        catalog = self.skills()
        self.guidance = scan_guidance(self.workspace)
        return desired_sections(
            runtime=self.runtime_text,
            skills=[SkillEntry(s.id, s.description, str(s.path)) for s in catalog.skills],
            guidance=render_guidance(self.guidance.files()),
            environment=render_environment(environment_facts(self.workspace)),
        )
