"""`pi-desktop --install-desktop-entry` puts the app where launchers look, and takes it back out."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from packaging_support import (
    REPO,
    first_run_env,
    parse_exec,
    read_desktop_entry,
    require_tool,
    write_console_script,
)

from desktop.host.desktop_entry import (
    DESKTOP_FILE_NAME,
    SESSION_MIME_TYPE,
    DesktopEntryError,
    candidate_gui_paths,
    install_desktop_entry,
    installed_paths,
    render_desktop_entry,
    render_mime_package,
    uninstall_desktop_entry,
    xdg_data_home,
)
from desktop.identity import APP_ID, GUI_COMMAND
from desktop.resources import ICON_SIZES, icon_png


def test_install_writes_entry_and_hicolor_icons(data_home: Path, tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    gui = write_console_script(tmp_path / "bin" / GUI_COMMAND, "desktop.app:gui_main")
    result = install_desktop_entry(xdg_data_home(), gui)

    assert result.desktop_file == data_home / "applications" / DESKTOP_FILE_NAME
    entry = read_desktop_entry(result.desktop_file)
    assert parse_exec(entry["Exec"]) == [str(gui)]
    assert entry["TryExec"] == str(gui)
    assert entry["Icon"] == APP_ID
    for size in ICON_SIZES:
        installed = data_home / "icons" / "hicolor" / f"{size}x{size}" / "apps" / f"{APP_ID}.png"
        assert installed.read_bytes() == icon_png(size).read_bytes()
    assert (data_home / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg").is_file()
    assert not list(data_home.rglob(".*.tmp")), "no temporary files left behind"

    assert result.mime_file.read_text(encoding="utf-8") == render_mime_package()

    removed = uninstall_desktop_entry(data_home)
    assert set(removed) == {result.desktop_file, result.mime_file, *result.icons}
    # Only the databases the refresh regenerates may remain, and they no longer know the type.
    left = {p.relative_to(data_home).parts[0] for p in data_home.rglob("*") if p.is_file()}
    assert left <= {"mime", "applications"}
    assert not (data_home / "mime" / "application" / f"{SESSION_MIME_TYPE.split('/')[1]}.xml").exists()
    cache = data_home / "applications" / "mimeinfo.cache"
    assert not cache.exists() or DESKTOP_FILE_NAME not in cache.read_text(encoding="utf-8")
    assert uninstall_desktop_entry(data_home) == []


def test_installed_entry_with_an_awkward_path_validates(data_home: Path, tmp_path: Path) -> None:
    tool = require_tool("desktop-file-validate", "desktop-file-utils")
    odd = tmp_path / 'my apps $HOME "x" 100%' / GUI_COMMAND
    odd.parent.mkdir()
    write_console_script(odd, "desktop.app:gui_main")
    result = install_desktop_entry(data_home, odd)
    check = subprocess.run([tool, str(result.desktop_file)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    assert parse_exec(read_desktop_entry(result.desktop_file)["Exec"]) == [str(odd)]


@pytest.mark.parametrize(
    ("value", "argv"),
    [
        ("pi-desktop-gui", ["pi-desktop-gui"]),
        ("pi-desktop-gui %U", ["pi-desktop-gui"]),
        ('"/a b/c" --flag', ["/a b/c", "--flag"]),
        ('"/x/\\\\$y \\\\"z\\\\""', ['/x/$y "z"']),
        ("/opt/100%%/gui", ["/opt/100%/gui"]),
    ],
)
def test_exec_values_split_like_a_launcher(value: str, argv: list[str]) -> None:
    assert parse_exec(value) == argv


def test_exec_with_an_unterminated_quote_is_rejected() -> None:
    with pytest.raises(ValueError, match="unterminated quote"):
        parse_exec('"/opt/gui')


def test_relative_exec_paths_are_refused(data_home: Path) -> None:
    with pytest.raises(DesktopEntryError, match="absolute"):
        install_desktop_entry(data_home, Path("bin") / GUI_COMMAND)
    desktop_file, icons = installed_paths(data_home)
    assert not desktop_file.exists() and not any(p.exists() for p in icons)


def test_xdg_data_home_ignores_relative_values() -> None:
    assert xdg_data_home({"XDG_DATA_HOME": "/srv/data"}) == Path("/srv/data")
    assert xdg_data_home({"XDG_DATA_HOME": "rel/data"}) == Path.home() / ".local" / "share"
    assert xdg_data_home({}) == Path.home() / ".local" / "share"


def test_the_gui_beside_the_running_script_comes_first(tmp_path: Path) -> None:
    found = candidate_gui_paths(str(tmp_path / "bin" / "pi-desktop"), [Path("/usr/bin")])
    assert found[:2] == [tmp_path / "bin" / GUI_COMMAND, Path("/usr/bin") / GUI_COMMAND]


def _scripts(tmp_path: Path) -> Path:
    bin_dir = tmp_path / "venv-bin"
    bin_dir.mkdir()
    write_console_script(bin_dir / "pi-desktop", "desktop.app:main")
    write_console_script(bin_dir / GUI_COMMAND, "desktop.app:gui_main")
    return bin_dir


def test_cli_flags_install_and_uninstall(tmp_path: Path) -> None:
    """Run as a user would, through a pip-style console script, with a redirected XDG_DATA_HOME."""
    bin_dir = _scripts(tmp_path)
    data_home = tmp_path / "share"
    env = first_run_env(XDG_DATA_HOME=str(data_home))
    run = subprocess.run(
        [str(bin_dir / "pi-desktop"), "--install-desktop-entry"], env=env, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    desktop_file = data_home / "applications" / DESKTOP_FILE_NAME
    assert f"installed {desktop_file}" in run.stdout
    assert parse_exec(read_desktop_entry(desktop_file)["Exec"]) == [str(bin_dir / GUI_COMMAND)]
    assert os.access(parse_exec(read_desktop_entry(desktop_file)["Exec"])[0], os.X_OK)

    run = subprocess.run(
        [str(bin_dir / "pi-desktop"), "--uninstall-desktop-entry"], env=env, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    assert f"removed {desktop_file}" in run.stdout
    assert not desktop_file.exists()


def test_install_and_uninstall_together_is_an_error(tmp_path: Path) -> None:
    run = subprocess.run(
        [str(_scripts(tmp_path) / "pi-desktop"), "--install-desktop-entry", "--uninstall-desktop-entry"],
        env=first_run_env(XDG_DATA_HOME=str(tmp_path / "share")),
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert run.returncode == 2 and "not allowed with" in run.stderr
    assert not (tmp_path / "share").exists()


def test_committed_entry_differs_from_installed_only_in_exec(tmp_path: Path) -> None:
    installed = render_desktop_entry(Path("/opt/pi/bin") / GUI_COMMAND).splitlines()
    committed = render_desktop_entry(GUI_COMMAND).splitlines()
    differing = [a.split("=")[0] for a, b in zip(installed, committed, strict=True) if a != b]
    assert differing == ["Exec", "TryExec"]
