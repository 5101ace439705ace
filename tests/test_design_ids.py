"""docs/design.md defines every requirement id once, and every ``(design X1)`` citation names one."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DESIGN = REPO / "docs" / "design.md"
EXPECTED = {
    **{f"T{n}": None for n in range(1, 13)},
    **{f"S{n}": None for n in range(1, 8)},
    **{f"C{n}": None for n in range(1, 5)},
    **{f"M{n}": None for n in range(1, 4)},
    **{f"P{n}": None for n in range(1, 16)},
    **{f"A{n}": None for n in range(1, 12)},
    **{f"D{n}": None for n in range(1, 11)},
    **{f"G{n}": None for n in range(1, 18)},
    **{f"X{n}": None for n in range(1, 15)},
    **{f"W{n}": None for n in range(1, 6)},
    **{f"X{n}": None for n in range(20, 33)},
    **{f"X{n}": None for n in range(40, 42)},
}
CITATION = re.compile(r"\(design ((?:[TSCMPADGXW]\d+)(?:\s*(?:,|and|/)\s*[TSCMPADGXW]?\d+)*)\)")


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


#: What cites a document outside the repository: the background spec by name or section sign,
#: an issue number, the seeds folder, or the folders of notes beside the repository. Spelled in
#: pieces so this file does not match itself.
OUTSIDE = re.compile(
    "|".join(
        [
            r"\bSP" + r"EC\b",
            "\u00a7",
            r"[Ii]ss" + r"ue #?[0-9]+",
            r"\bse" + r"eds?/",
            r"/wo" + r"rk/(?:shared|notes)/",
        ]
    )
)
#: Where the repository speaks in its own words (the catalog snapshot is pi-ai's data: its model
#: ids are not citations).
SCANNED = ("desktop", "tests", "benchmarks", "scripts", "docs", "packaging", "README.md", "CONTRIBUTING.md")
GENERATED = ("desktop/pi/catalog/data/",)


def scanned_files() -> list[Path]:
    files: list[Path] = []
    for name in SCANNED:
        root = REPO / name
        for path in [root] if root.is_file() else sorted(root.rglob("*")):
            rel = path.relative_to(REPO).as_posix()
            skipped = "__pycache__" in path.parts or "node_modules" in path.parts  # the oracles' npm install
            if path.is_file() and not skipped and not rel.startswith(GENERATED):
                files.append(path)
    return files


def test_nothing_cites_a_document_outside_the_repository() -> None:
    """Code, tests and docs cite ``(design X)`` ids, never the background spec, an issue number
    or a path outside the repository (the design lives in docs/design.md)."""
    found: list[str] = []
    checked = 0
    for path in scanned_files():
        data = path.read_bytes()
        if b"\0" in data:
            continue  # images and other binaries
        checked += 1
        for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
            if OUTSIDE.search(line):
                found.append(f"{path.relative_to(REPO)}:{number}: {line.strip()[:100]}")
    assert checked > 100, "the scan found almost nothing: it would pass vacuously"
    assert found == []


def test_the_outside_pattern_catches_each_kind() -> None:
    for text in (
        "see SP" + "EC T3",
        "\u00a7 2",
        "Iss" + "ue 14",
        "iss" + "ue #7",
        "se" + "eds/x",
        "/wo" + "rk/notes/x.md",
        "/wo" + "rk/shared/y",
    ):
        assert OUTSIDE.search(text), text
    for text in (
        "TOOL_SPEC = 1",
        "issue_get",
        "ticket 4211",
        "bytedance-seed-1",
        "(design T3)",
        "cwd=/wo" + "rk/project",
    ):
        assert not OUTSIDE.search(text), text
