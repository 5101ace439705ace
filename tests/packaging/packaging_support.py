"""Shared by the packaging tests: the repo root, system tools, a first-run environment."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
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


@contextlib.contextmanager
def launched(argv: Sequence[str], cwd: Path, **env: str) -> Iterator[subprocess.Popen[str]]:
    """The window app started as a user starts it (a first run's environment and ``env``);
    killed if the test leaves it running."""
    environ = first_run_env(**env)
    environ.pop("PI_DESKTOP_SMOKE_EXIT", None)
    app = subprocess.Popen(
        list(argv), cwd=cwd, env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        yield app
    finally:
        if app.poll() is None:
            app.kill()
            app.communicate()


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


def window_titles(display: str) -> dict[str, str]:
    """Visible windows whose title ends with the app name, by X window id."""
    found = xdotool(display, "search", "--onlyvisible", "--name", "Pi Desktop$").stdout.split()
    return {w: xdotool(display, "getwindowname", w).stdout.strip() for w in found}


def wait_for_window(display: str, app: subprocess.Popen[str], title: str | None = None) -> str:
    """The X window titled ``title`` (any of the app's without one) once it shows, within a minute."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if app.poll() is not None:
            pytest.fail(f"the app exited with {app.returncode} first: {app.communicate()[1][-2000:]}")
        for window, name in window_titles(display).items():
            if title is None or name == title:
                return window
        time.sleep(0.2)
    pytest.fail(f"no window titled {title or 'Pi Desktop'!r} within 60s; saw {window_titles(display)}")


def quit_by_keyboard(display: str, window: str, app: subprocess.Popen[str]) -> str:
    """Quit as a user would: focus the window and press Ctrl+Q (real input via XTEST); the app's
    standard error once it exited."""
    assert xdotool(display, "windowfocus", "--sync", window).returncode == 0
    assert xdotool(display, "key", "--clearmodifiers", "ctrl+q").returncode == 0
    return app.communicate(timeout=30)[1]


# --- reading a desktop entry as a launcher does (the oracle for what the app writes) ----------

#: Characters a backslash escapes inside a quoted Exec argument (the Desktop Entry spec).
_ESCAPED_IN_QUOTES = set('"`$\\')


def parse_exec(value: str) -> list[str]:
    """Split an Exec value from a desktop file into argv, as a launcher does; field codes dropped."""
    unescaped = _unescape_string_value(value)
    args: list[str] = []
    current: list[str] = []
    in_arg = quoted = False
    i = 0
    while i < len(unescaped):
        ch = unescaped[i]
        if quoted:
            if ch == "\\" and i + 1 < len(unescaped) and unescaped[i + 1] in _ESCAPED_IN_QUOTES:
                current.append(unescaped[i + 1])
                i += 1
            elif ch == '"':
                quoted = False
            else:
                current.append(ch)
        elif ch == '"':
            quoted = in_arg = True
        elif ch in " \t":
            if in_arg:
                args.append("".join(current))
                current, in_arg = [], False
        else:
            current.append(ch)
            in_arg = True
        i += 1
    if quoted:
        raise ValueError(f"unterminated quote in Exec value {value!r}")
    if in_arg:
        args.append("".join(current))
    # Field codes (%f, %U, ...) are left out; %% is a literal %.
    return [
        a.replace("%%", "%") for a in args if not (len(a) == 2 and a[0] == "%" and a[1] in "fFuUdDnNickvm")
    ]


def _unescape_string_value(value: str) -> str:
    out: list[str] = []
    escapes = {"s": " ", "n": "\n", "t": "\t", "r": "\r", "\\": "\\"}
    i = 0
    while i < len(value):
        if value[i] == "\\" and i + 1 < len(value) and value[i + 1] in escapes:
            out.append(escapes[value[i + 1]])
            i += 2
        else:
            out.append(value[i])
            i += 1
    return "".join(out)


def read_desktop_entry(path: Path) -> dict[str, str]:
    """The keys of the ``[Desktop Entry]`` group."""
    entries: dict[str, str] = {}
    group = None
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            group = line[1:-1]
        elif group == "Desktop Entry" and "=" in line:
            key, _, value = line.partition("=")
            entries[key.strip()] = value.strip()
    return entries
