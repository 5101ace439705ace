"""Where Pi Desktop keeps its files.

One environment variable (``PI_DESKTOP_DATA_DIR``) or the ``--data-dir`` flag redirects
every file the app writes, so tests and benchmarks never touch the real home folder. Only
the platform's own folders need ``platformdirs`` (it loads ``tempfile`` and through it
``shutil``), so it is imported where they are asked for, not by a redirected command.
"""

from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "pi-desktop"
DATA_DIR_ENV = "PI_DESKTOP_DATA_DIR"


def data_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """Return the data directory: the flag wins, then the environment, then platformdirs."""
    if override:
        return Path(override).expanduser()
    env = os.environ.get(DATA_DIR_ENV)
    if env:
        return Path(env).expanduser()
    # Lazy: the status budget.
    import platformdirs

    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def sessions_dir(override: str | os.PathLike[str] | None = None) -> Path:
    return data_dir(override) / "sessions"


def cache_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """Downloaded catalogs live beside the data when it is redirected, else in the cache dir."""
    if override or os.environ.get(DATA_DIR_ENV):
        return data_dir(override) / "cache"
    # Lazy: the status budget.
    import platformdirs

    return Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False))


def log_dir(override: str | os.PathLike[str] | None = None) -> Path:
    if override or os.environ.get(DATA_DIR_ENV):
        return data_dir(override) / "logs"
    # Lazy: the status budget.
    import platformdirs

    return Path(platformdirs.user_log_dir(APP_NAME, appauthor=False))
