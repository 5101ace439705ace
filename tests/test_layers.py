"""The layer rules of docs/architecture.md, checked on the import statements of every module.

An AST walk (rather than importing) sees imports inside functions too, so a lazy
``import PySide6`` in the provider layer cannot slip through. ``RULES`` is the last column of
the architecture page's layer table, and a test checks the two say the same.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "desktop"
ARCHITECTURE = REPO / "docs" / "architecture.md"

QT_ROOTS = ("PySide6", "PyQt5", "PyQt6", "shiboken6")
QT_WIDGET_MODULES = ("PySide6.QtWidgets", "PySide6.QtGui")
#: The shorthands the table uses for groups of modules.
GROUPS = {"Qt": QT_ROOTS, "Qt widgets": QT_WIDGET_MODULES}

#: What each package never imports (the table's "imports never (checked)" column).
RULES: dict[str, tuple[str, ...]] = {
    "desktop/pi": ("Qt", "desktop.host", "desktop.session", "desktop.ui", "desktop.cli", "desktop.bench"),
    "desktop/host": ("Qt", "desktop.session", "desktop.ui", "desktop.cli", "desktop.bench"),
    "desktop/session": ("Qt", "desktop.ui", "desktop.cli", "desktop.bench"),
    "desktop/ui": (),
    "desktop/cli": ("Qt widgets",),
    "desktop/emulator": ("Qt widgets",),
    "desktop/bench": ("Qt",),
}


def imported_modules(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            found.extend((node.lineno, f"{node.module}.{alias.name}") for alias in node.names)
    return found


def modules_under(sub: str) -> list[Path]:
    return sorted((PACKAGE / sub).rglob("*.py")) if sub else sorted(PACKAGE.rglob("*.py"))


def forbidden_modules(names: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(module for name in names for module in GROUPS.get(name, (name,)))


def _violations(paths: list[Path], forbidden: tuple[str, ...]) -> list[str]:
    bad = []
    for path in paths:
        shown = path.relative_to(REPO) if path.is_relative_to(REPO) else path
        for line, name in imported_modules(path):
            if any(name == root or name.startswith(root + ".") for root in forbidden):
                bad.append(f"{shown}:{line} imports {name}")
    return bad


@pytest.mark.parametrize("layer", sorted(RULES))
def test_each_layer_keeps_its_import_rules(layer: str) -> None:
    paths = modules_under(layer.removeprefix("desktop/"))
    assert paths, f"{layer} has no modules: the rule would pass vacuously"
    assert _violations(paths, forbidden_modules(RULES[layer])) == []


def test_only_ui_imports_qt_widgets() -> None:
    outside_ui = [p for p in modules_under("") if "ui" not in p.relative_to(PACKAGE).parts[:1]]
    assert _violations(outside_ui, QT_WIDGET_MODULES) == []


def table_rules() -> dict[str, tuple[str, ...]]:
    """The architecture page's layer table: package -> the names in its last column."""
    rows: dict[str, tuple[str, ...]] = {}
    for line in ARCHITECTURE.read_text(encoding="utf-8").splitlines():
        match = re.match(r"\| `(desktop/[a-z]+)` \|.*\| ([^|]*) \|$", line)
        if match:
            rows[match.group(1)] = tuple(re.findall(r"`([^`]+)`", match.group(2)))
    return rows


def test_the_architecture_table_states_the_rules_this_test_enforces() -> None:
    assert table_rules() == RULES


def test_every_package_has_a_row_in_the_table() -> None:
    packages = {f"desktop/{p.name}" for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert packages - {"desktop/resources"} == set(RULES)


def test_the_checker_sees_a_violation(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from PySide6.QtWidgets import QWidget\n")
    assert ("2", "PySide6.QtWidgets") in {(str(n), m) for n, m in imported_modules(bad)}
    assert _violations([bad], forbidden_modules(("Qt widgets",))) != []
