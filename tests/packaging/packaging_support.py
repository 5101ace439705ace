"""Shared by the packaging tests: the repo root, system tools, a first-run environment."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NoReturn

import pytest

from desktop.host.credentials import API_KEY_ENV

REPO = Path(__file__).resolve().parents[2]

#: Provider key variables cleared so the app starts as on a first run (no key, no network).
KEY_VARS = tuple(sorted({n for names in API_KEY_ENV.values() for n in names} | {"ANTHROPIC_AUTH_TOKEN"}))


def on_ci() -> bool:
    """``CI=true`` (set by GitHub Actions and by ``.ci/run``): a missing tool is a failure there."""
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def missing_tool(message: str) -> NoReturn:
    """Skip on a developer machine; fail under CI, where the tool is installed on purpose (design G8)."""
    if on_ci():
        pytest.fail(f"{message} (CI=true: packaging checks may not be skipped)")
    pytest.skip(message)


def require_tool(name: str, package: str) -> str:
    """The tool's path, or a skip (a failure under CI) naming the Debian package that provides it."""
    path = shutil.which(name)
    if path is None:
        missing_tool(f"{name} is not installed (apt-get install {package}); CI installs it via .ci/run")
    return path


def first_run_env(**extra: str) -> dict[str, str]:
    """The environment of a fresh user: no provider keys, no keyring, the repo importable."""
    env = {k: v for k, v in os.environ.items() if k not in KEY_VARS}
    env["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env.update(extra)
    return env


def write_console_script(path: Path, function: str) -> Path:
    """A console script like the ones pip generates for ``[project.scripts]``."""
    module, _, attr = function.partition(":")
    path.write_text(
        f"#!{sys.executable}\nimport sys\nfrom {module} import {attr}\nsys.exit({attr}())\n",
        encoding="utf-8",
    )
    path.chmod(0o755)
    return path


def xdotool(display: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["xdotool", *args], env={**os.environ, "DISPLAY": display}, capture_output=True, text=True, timeout=20
    )
