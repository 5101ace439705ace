"""PySide's import hook without its source scan (design X28).

Importing PySide6 replaces ``__import__`` with a hook that, for every module imported from then
on, asks whether the module uses PySide by reading its source file (``inspect.getsource``) and
searching it for ``PySide6``; the answer only picks the module's ``__feature__`` selection
(``snake_case``, ``true_property``). Reading the source of the four hundred modules the window
loads costs tens of milliseconds before the first paint, and ``linecache`` then keeps every
line of them for the life of the process (about 10 MB). This app selects no feature anywhere,
so every module's selection is "none", whatever the scan finds: the scan is replaced by a
lookup that reads no file. No Qt library is loaded here (only the ``PySide6`` package).
"""

from __future__ import annotations

import sys
from types import ModuleType


def _uses_pyside(module: ModuleType) -> bool:
    """Whether the module holds PySide6 modules or classes (a scan of its names, no file read):
    the source scan's answer for every module of this app, which imports Qt at its top."""
    for value in list(vars(module).values()):
        if type(value) is ModuleType:
            name = value.__name__
        elif isinstance(value, type):
            name = value.__module__
        else:
            continue
        if name.startswith("PySide6"):
            return True
    return False


def skip_source_scan() -> bool:
    """Install the lookup in PySide's hook (before the window's modules load); False when this
    PySide has no such scan, and nothing was changed."""
    import PySide6  # noqa: F401  (installs the hook)

    feature = sys.modules.get("shibokensupport.feature")
    if feature is None or not callable(getattr(feature, "_mod_uses_pyside", None)):
        return False
    setattr(feature, "_mod_uses_pyside", _uses_pyside)  # noqa: B010  (a module mypy cannot see)
    return True
