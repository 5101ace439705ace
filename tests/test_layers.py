"""The layer rules of SPEC §1, checked on the import statements of every module.

An AST walk (rather than importing) sees imports inside functions too, so a lazy
``import PySide6`` in the provider layer cannot slip through.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "desktop"

QT_ROOTS = ("PySide6", "PyQt5", "PyQt6", "shiboken6")
QT_WIDGET_MODULES = ("PySide6.QtWidgets", "PySide6.QtGui")


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


def _violations(paths: list[Path], forbidden: tuple[str, ...]) -> list[str]:
    bad = []
    for path in paths:
        for line, name in imported_modules(path):
            if any(name == root or name.startswith(root + ".") for root in forbidden):
                bad.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {name}")
    return bad


def test_provider_layer_is_pure() -> None:
    forbidden = (*QT_ROOTS, "desktop.host", "desktop.session", "desktop.ui", "desktop.cli")
    assert _violations(modules_under("pi"), forbidden) == []


@pytest.mark.parametrize("layer", ["host", "session"])
def test_host_and_session_never_import_qt(layer: str) -> None:
    assert _violations(modules_under(layer), (*QT_ROOTS, "desktop.ui")) == []


def test_host_does_not_depend_on_the_runtime() -> None:
    assert _violations(modules_under("host"), ("desktop.session", "desktop.cli")) == []


def test_only_ui_imports_qt_widgets() -> None:
    outside_ui = [p for p in modules_under("") if "ui" not in p.relative_to(PACKAGE).parts[:1]]
    assert _violations(outside_ui, QT_WIDGET_MODULES) == []


def test_the_checker_sees_a_violation(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from PySide6.QtWidgets import QWidget\n")
    assert ("2", "PySide6.QtWidgets") in {(str(n), m) for n, m in imported_modules(bad)}


def test_the_benchmark_package_is_headless_and_nothing_below_it_depends_on_it() -> None:
    """``desktop/bench`` drives the runtime without Qt (its chart lives in ``desktop/ui``);
    the provider, host and session layers never import it."""
    assert _violations(modules_under("bench"), QT_ROOTS) == []
    for layer in ("pi", "host", "session"):
        assert _violations(modules_under(layer), ("desktop.bench",)) == []
