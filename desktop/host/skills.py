"""Skill discovery (the Agent Skills convention: ``<dir>/<skill>/SKILL.md`` with front matter).

The catalog the model sees is names and descriptions only; bodies are read on demand
through the Host (the ``read`` tool, at the catalog entry's path) so that the permission rules apply to them like any
other file read. A malformed SKILL.md yields a diagnostic naming the file and what is wrong,
and the rest of the catalog keeps working.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

from desktop.host.paths import data_dir

SKILL_FILE = "SKILL.md"
MAX_NAME_LENGTH = 64
MAX_DESCRIPTION_LENGTH = 1024
_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
#: Workspace-relative folders searched for skills, nearest convention first.
WORKSPACE_SKILL_DIRS = (".pi/skills", ".claude/skills", ".agents/skills")


class Skill(NamedTuple):
    id: str
    description: str
    path: Path
    source: str  # "user" or "workspace"


class SkillDiagnostic(NamedTuple):
    path: Path
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


class SkillCatalog(NamedTuple):
    skills: tuple[Skill, ...] = ()
    diagnostics: tuple[SkillDiagnostic, ...] = ()

    def get(self, skill_id: str) -> Skill | None:
        return next((s for s in self.skills if s.id == skill_id), None)


class SkillFormatError(ValueError):
    pass


def parse_front_matter(text: str) -> tuple[dict[str, str], str]:
    """A small YAML subset: ``key: value`` lines, quoted values, indented continuations."""
    if not text.startswith("---"):
        raise SkillFormatError("missing front matter (the file must start with a '---' line)")
    lines = text.splitlines()
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise SkillFormatError("front matter is not closed by a '---' line") from None
    fields: dict[str, str] = {}
    key: str | None = None
    for number, line in enumerate(lines[1:end], start=2):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line[0] in " \t" and key is not None:
            fields[key] = (fields[key] + " " + line.strip()).strip()
            continue
        if ":" not in line:
            raise SkillFormatError(f"line {number}: expected 'key: value', got {line.strip()!r}")
        key, _, value = line.partition(":")
        key = key.strip()
        value = value.strip()
        if value in (">", "|", ">-", "|-"):
            value = ""
        elif len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        fields[key] = value
    body = "\n".join(lines[end + 1 :]).lstrip("\n")
    return fields, body


def parse_skill(path: Path, source: str) -> Skill:
    fields, _ = parse_front_matter(path.read_text(encoding="utf-8"))
    name = fields.get("name") or path.parent.name
    if len(name) > MAX_NAME_LENGTH or not _NAME.match(name):
        raise SkillFormatError(
            f"invalid skill name {name!r}: use lowercase letters, digits and single hyphens, "
            f"at most {MAX_NAME_LENGTH} characters"
        )
    description = fields.get("description", "").strip()
    if not description:
        raise SkillFormatError("front matter has no 'description' (say when the skill should be used)")
    if len(description) > MAX_DESCRIPTION_LENGTH:
        raise SkillFormatError(f"description is longer than {MAX_DESCRIPTION_LENGTH} characters")
    return Skill(id=name, description=description, path=path, source=source)


def skill_roots(workspace: Path | None, user_dir: Path | None = None) -> list[tuple[Path, str]]:
    roots = [(user_dir if user_dir is not None else data_dir() / "skills", "user")]
    if workspace is not None:
        roots.extend((workspace / rel, "workspace") for rel in WORKSPACE_SKILL_DIRS)
    return roots


def _skill_files(root: Path) -> Iterable[Path]:
    if not root.is_dir():
        return []
    return sorted(p / SKILL_FILE for p in root.iterdir() if (p / SKILL_FILE).is_file())


def discover_skills(roots: Sequence[tuple[Path, str]]) -> SkillCatalog:
    """Later roots win on an id clash (workspace over user), and the clash is reported."""
    by_id: dict[str, Skill] = {}
    diagnostics: list[SkillDiagnostic] = []
    for root, source in roots:
        for path in _skill_files(root):
            try:
                skill = parse_skill(path, source)
            except (SkillFormatError, OSError, UnicodeDecodeError) as error:
                diagnostics.append(SkillDiagnostic(path, f"skipped: {error}"))
                continue
            if skill.id in by_id:
                diagnostics.append(
                    SkillDiagnostic(
                        path, f"skill id {skill.id!r} also defined in {by_id[skill.id].path}; this one wins"
                    )
                )
            by_id[skill.id] = skill
    return SkillCatalog(tuple(sorted(by_id.values(), key=lambda s: s.id)), tuple(diagnostics))


class SkillWatcher:
    """Polls the skill roots' SKILL.md files; cheap enough to call before every turn."""

    def __init__(self, roots: Sequence[tuple[Path, str]]) -> None:
        self._roots = list(roots)
        self._stamp = self._snapshot()

    def _snapshot(self) -> tuple[tuple[str, int, int], ...]:
        stamp: list[tuple[str, int, int]] = []
        for root, _ in self._roots:
            for path in _skill_files(root):
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                stamp.append((str(path), st.st_mtime_ns, st.st_size))
        return tuple(stamp)

    def changed(self) -> bool:
        stamp = self._snapshot()
        if stamp != self._stamp:
            self._stamp = stamp
            return True
        return False
