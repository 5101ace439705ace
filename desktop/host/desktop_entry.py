"""Put Pi Desktop into the Linux application menu, and take it out again.

A pip install creates ``pi-desktop-gui`` but no menu entry: freedesktop launchers only look
for ``.desktop`` files and icons under the XDG data dirs. ``pi-desktop --install-desktop-entry``
writes them to the user's own data dir (no root, nothing outside ``$XDG_DATA_HOME``), with an
absolute ``Exec`` path because a launcher's ``PATH`` often lacks ``~/.local/bin`` or a venv.

The entry takes files (``%F``) and declares the session file type, which a shared-mime-info
package (``render_mime_package``) defines by content only: a session's first line is the
journal's header, so a file is a Pi Desktop session when it starts with ``{"type":"session","v":``
and names ``"app":"pi-desktop"`` a few bytes later. There is deliberately no ``*.jsonl`` glob:
JSON Lines files of other programs stay what they were (design G8). After writing, the installer
refreshes the user's MIME and desktop databases when ``update-mime-database`` and
``update-desktop-database`` exist, and says so when they do not; the type is then known to file
managers at their next database read.

The committed ``packaging/linux`` entry and MIME package are ``render_desktop_entry(GUI_COMMAND)``
and ``render_mime_package()``, so the distro templates and the per-user install cannot drift apart.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final
from xml.sax.saxutils import quoteattr

from desktop.host.journal.envelope import APP_NAME
from desktop.identity import APP_ID, DISPLAY_NAME, GUI_COMMAND
from desktop.resources import ICON_SIZES, icon_png, icon_svg

DESKTOP_FILE_NAME = f"{APP_ID}.desktop"
#: The shared-mime-info package file (``<data dir>/mime/packages/``).
MIME_FILE_NAME = f"{APP_ID}.xml"
#: The file type of Pi Desktop session files.
SESSION_MIME_TYPE: Final = "application/x-pi-desktop-session"
#: How every session file starts: the journal writes its header row first, ``type`` then ``v``.
SESSION_HEADER_START: Final = '{"type":"session","v":'
#: The header names the app that wrote it, after the id and timestamp (well inside 256 bytes).
SESSION_APP_MARKER: Final = f'"app":"{APP_NAME}"'

#: Characters that force an Exec argument into double quotes (Desktop Entry Spec, "Exec key").
_RESERVED = set(" \t\n\"'\\><~|&;$*?#()`")
#: Characters that must be backslash-escaped inside a quoted Exec argument.
_ESCAPE_IN_QUOTES = set('"`$\\')


class DesktopEntryError(Exception):
    """The entry could not be installed; the message says what to do instead."""


@dataclass(frozen=True)
class InstallResult:
    desktop_file: Path
    icons: tuple[Path, ...]
    exec_path: Path
    mime_file: Path
    notes: tuple[str, ...] = ()
    """What the database refresh did or could not do, one line each, for the user."""


def xdg_data_home(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_DATA_HOME`` if set to an absolute path (the spec ignores relative ones), else ~/.local/share."""
    env = os.environ if environ is None else environ
    value = env.get("XDG_DATA_HOME", "")
    if value and Path(value).is_absolute():
        return Path(value)
    return Path.home() / ".local" / "share"


def quote_exec_arg(arg: str) -> str:
    """Quote one argument for an Exec value (before the string-level escaping of the file format)."""
    if "%" in arg:
        arg = arg.replace("%", "%%")
    if not arg or any(ch in _RESERVED for ch in arg):
        return '"' + "".join("\\" + ch if ch in _ESCAPE_IN_QUOTES else ch for ch in arg) + '"'
    return arg


def _escape_string_value(value: str) -> str:
    """Desktop files store string values with ``\\`` escaped (and newlines as ``\\n``)."""
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")


def render_desktop_entry(exec_command: str | Path) -> str:
    """The desktop entry text, launching ``exec_command`` (a bare name or an absolute path)."""
    exec_value = _escape_string_value(quote_exec_arg(str(exec_command)))
    try_exec = _escape_string_value(str(exec_command))  # a plain path: no Exec quoting rules
    return (
        "[Desktop Entry]\n"
        "Type=Application\n"
        "Version=1.4\n"
        f"Name={DISPLAY_NAME}\n"
        "GenericName=Coding Agent\n"
        "Comment=A coding agent that shows exactly what the model is told\n"
        f"Exec={exec_value} %F\n"
        f"TryExec={try_exec}\n"
        f"Icon={APP_ID}\n"
        "Terminal=false\n"
        "StartupNotify=true\n"
        f"StartupWMClass={APP_ID}\n"
        "Categories=Development;IDE;\n"
        "Keywords=AI;LLM;agent;coding;prompt;cache;inspector;\n"
        f"MimeType={SESSION_MIME_TYPE};\n"
    )


def render_mime_package() -> str:
    """The shared-mime-info package that defines the session type by its first bytes only."""
    start, marker = quoteattr(SESSION_HEADER_START), quoteattr(SESSION_APP_MARKER)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        "<!-- Pi Desktop session files, recognised by content: no glob, so other JSON Lines files"
        " keep their own type. -->\n"
        '<mime-info xmlns="http://www.freedesktop.org/standards/shared-mime-info">\n'
        f'  <mime-type type="{SESSION_MIME_TYPE}">\n'
        f"    <comment>{DISPLAY_NAME} session</comment>\n"
        '    <sub-class-of type="text/plain"/>\n'
        '    <generic-icon name="text-x-generic"/>\n'
        '    <magic priority="90">\n'
        f'      <match type="string" value={start} offset="0">\n'
        f'        <match type="string" value={marker} offset="{len(SESSION_HEADER_START)}:256"/>\n'
        "      </match>\n"
        "    </magic>\n"
        "  </mime-type>\n"
        "</mime-info>\n"
    )


def _script_name(name: str) -> str:
    return f"{name}.exe" if sys.platform == "win32" else name


def candidate_gui_paths(argv0: str, scripts_dirs: Sequence[Path]) -> list[Path]:
    """Where ``pi-desktop-gui`` may be, best first: beside the running console script, then install dirs."""
    name = _script_name(GUI_COMMAND)
    found: list[Path] = []
    if argv0:
        found.append(Path(argv0).absolute().parent / name)
    found.extend(Path(d) / name for d in scripts_dirs)
    on_path = shutil.which(GUI_COMMAND)
    if on_path:
        found.append(Path(on_path))
    return found


def appimage_file() -> Path | None:
    """The AppImage this frozen app runs from: the file to launch again, not the temporary mount
    it runs in. Its runtime sets ``APPIMAGE`` and ``APPDIR``; both are inherited by whatever it
    starts, so the file counts only when this executable is inside that ``APPDIR``."""
    appimage, appdir = os.environ.get("APPIMAGE"), os.environ.get("APPDIR")
    if not appimage or not appdir:
        return None
    if not Path(sys.executable).resolve().is_relative_to(Path(appdir).resolve()):
        return None
    return Path(appimage).absolute()


def find_gui_executable(argv0: str | None = None) -> Path:
    """The absolute path a launcher should run; a frozen bundle runs itself."""
    if getattr(sys, "frozen", False):
        return appimage_file() or Path(sys.executable).absolute()
    schemes = [sysconfig.get_path("scripts")]
    user_scheme = f"{os.name}_user"
    if user_scheme in sysconfig.get_scheme_names():
        schemes.append(sysconfig.get_path("scripts", user_scheme))
    candidates = candidate_gui_paths(sys.argv[0] if argv0 is None else argv0, [Path(s) for s in schemes])
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return path.absolute()
    looked = "\n  ".join(str(p) for p in dict.fromkeys(candidates))
    raise DesktopEntryError(
        f"could not find the {GUI_COMMAND} program to put in the desktop entry; looked in:\n  {looked}\n"
        "Install Pi Desktop with pip or pipx (which creates it), then run "
        "`pi-desktop --install-desktop-entry` again from that installation."
    )


def installed_paths(data_home: Path) -> tuple[Path, list[Path]]:
    """The desktop file and every icon file the installer owns under ``data_home``."""
    hicolor = data_home / "icons" / "hicolor"
    icons = [hicolor / f"{size}x{size}" / "apps" / f"{APP_ID}.png" for size in ICON_SIZES]
    icons.append(hicolor / "scalable" / "apps" / f"{APP_ID}.svg")
    return data_home / "applications" / DESKTOP_FILE_NAME, icons


def mime_package_path(data_home: Path) -> Path:
    return data_home / "mime" / "packages" / MIME_FILE_NAME


def install_desktop_entry(data_home: Path, gui_executable: Path) -> InstallResult:
    if not gui_executable.is_absolute():
        raise DesktopEntryError(f"the Exec path must be absolute, got {gui_executable}")
    desktop_file, icons = installed_paths(data_home)
    sources = [icon_png(size) for size in ICON_SIZES] + [icon_svg()]
    for source, target in zip(sources, icons, strict=True):
        _write_atomically(target, source.read_bytes())
    mime_file = mime_package_path(data_home)
    _write_atomically(mime_file, render_mime_package().encode("utf-8"))
    _write_atomically(desktop_file, render_desktop_entry(gui_executable).encode("utf-8"))
    _touch_icon_theme(data_home)
    return InstallResult(
        desktop_file=desktop_file,
        icons=tuple(icons),
        exec_path=gui_executable,
        mime_file=mime_file,
        notes=refresh_databases(data_home),
    )


def uninstall_desktop_entry(data_home: Path) -> list[Path]:
    """Remove what ``install_desktop_entry`` wrote; returns the files that were there."""
    desktop_file, icons = installed_paths(data_home)
    removed = []
    for path in [desktop_file, mime_package_path(data_home), *icons]:
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        removed.append(path)
    if removed:
        _touch_icon_theme(data_home)
        refresh_databases(data_home)
    return removed


def refresh_databases(data_home: Path) -> tuple[str, ...]:
    """Rebuild the user's MIME and desktop-file databases if the tools exist; notes for the user.

    Neither tool is required: without them the files are in place and desktops that watch these
    folders, or the next login, pick them up. A tool that fails is reported, never fatal.
    """
    notes: list[str] = []
    jobs = (
        ("update-mime-database", data_home / "mime", "the session file type"),
        ("update-desktop-database", data_home / "applications", "the file associations"),
    )
    for tool, folder, what in jobs:
        path = shutil.which(tool)
        if path is None:
            notes.append(
                f"{tool} is not installed; the desktop picks up {what} when it next rebuilds its database"
            )
            continue
        if not folder.is_dir():
            continue
        try:
            done = subprocess.run([path, str(folder)], capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired) as exc:
            notes.append(f"{tool} {folder} did not run: {exc}")
            continue
        if done.returncode != 0:
            detail = (done.stderr or done.stdout).strip().splitlines()
            notes.append(f"{tool} {folder} failed: {detail[0] if detail else f'exit {done.returncode}'}")
    return tuple(notes)


def _write_atomically(path: Path, data: bytes) -> None:
    """Launchers watch these folders; a half-written entry would be shown broken."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def _touch_icon_theme(data_home: Path) -> None:
    """GTK re-reads an icon theme whose folder mtime changed (there is no user-level cache to rebuild)."""
    hicolor = data_home / "icons" / "hicolor"
    if hicolor.is_dir():
        os.utime(hicolor)
