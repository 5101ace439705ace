"""docs/design.md defines every requirement id once, and every ``(design X1)`` citation names one."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DESIGN = REPO / "docs" / "design.md"
EXPECTED = {
    **{f"T{n}": None for n in range(1, 10)},
    **{f"S{n}": None for n in range(1, 7)},
    **{f"C{n}": None for n in range(1, 5)},
    **{f"M{n}": None for n in range(1, 4)},
    **{f"P{n}": None for n in range(1, 8)},
    **{f"A{n}": None for n in range(1, 10)},
    **{f"D{n}": None for n in range(1, 8)},
    **{f"G{n}": None for n in range(1, 11)},
    **{f"X{n}": None for n in range(1, 6)},
}
CITATION = re.compile(r"\(design ((?:[TSCMPADGX]\d+)(?:\s*(?:,|and|/)\s*[TSCMPADGX]?\d+)*)\)")


def defined_ids() -> list[str]:
    return re.findall(r"^- \*\*([A-Z]\d+)\*\* ", DESIGN.read_text(encoding="utf-8"), flags=re.MULTILINE)


def test_every_requirement_id_is_defined_exactly_once() -> None:
    ids = defined_ids()
    assert sorted(ids) == sorted(EXPECTED) and len(ids) == len(set(ids))


def test_every_design_citation_names_a_defined_id() -> None:
    defined = set(defined_ids())
    unknown: list[str] = []
    seen = 0
    for path in [
        *REPO.joinpath("desktop").rglob("*.py"),
        *REPO.joinpath("tests").rglob("*.py"),
        *REPO.joinpath("docs").rglob("*.md"),
    ]:
        for match in CITATION.finditer(path.read_text(encoding="utf-8", errors="replace")):
            seen += 1
            letter = ""
            for part in re.split(r"\s*(?:,|and|/)\s*", match.group(1)):
                letter = part[0] if part[0].isalpha() else letter
                ident = part if part[0].isalpha() else letter + part
                if ident not in defined:
                    unknown.append(f"{path.relative_to(REPO)}: {ident}")
    assert seen > 0, "the citation pattern found nothing: it would pass vacuously"
    assert unknown == []
