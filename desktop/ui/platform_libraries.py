"""Before Qt starts on Linux: are the system libraries its platform plugin links against there?

Without them Qt aborts (exit 134) with a misleading hint: on a fresh Debian it asks for
``libxcb-cursor0`` when ``libxcb-icccm4`` and ``libxcb-keysyms1`` are what is missing. This
module reads the plugin's ELF ``NEEDED`` entries (and those of the Qt libraries it pulls in from
the wheel or the bundle), looks each one up where the dynamic loader would, and turns what is
missing into one line naming the Debian/Ubuntu and Fedora packages (design G13). It imports no
Qt: it runs before the first Qt library is loaded, so the app can still say something.
"""

from __future__ import annotations

import ctypes
import glob
import importlib.util
import os
import struct
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

#: Exit code of a start refused before Qt (usage or environment, as the headless commands' 2).
EXIT_NO_PLATFORM = 2

#: soname → (Debian/Ubuntu package, Fedora package) for what Qt's xcb and wayland plugins need.
PACKAGES: Mapping[str, tuple[str, str]] = {
    "libxcb-cursor.so.0": ("libxcb-cursor0", "xcb-util-cursor"),
    "libxcb-icccm.so.4": ("libxcb-icccm4", "xcb-util-wm"),
    "libxcb-keysyms.so.1": ("libxcb-keysyms1", "xcb-util-keysyms"),
    "libxcb-image.so.0": ("libxcb-image0", "xcb-util-image"),
    "libxcb-render-util.so.0": ("libxcb-render-util0", "xcb-util-renderutil"),
    "libxcb-util.so.1": ("libxcb-util1", "xcb-util"),
    "libxcb-randr.so.0": ("libxcb-randr0", "libxcb"),
    "libxcb-shape.so.0": ("libxcb-shape0", "libxcb"),
    "libxcb-shm.so.0": ("libxcb-shm0", "libxcb"),
    "libxcb-sync.so.1": ("libxcb-sync1", "libxcb"),
    "libxcb-xfixes.so.0": ("libxcb-xfixes0", "libxcb"),
    "libxcb-render.so.0": ("libxcb-render0", "libxcb"),
    "libxcb-xkb.so.1": ("libxcb-xkb1", "libxcb"),
    "libxcb-glx.so.0": ("libxcb-glx0", "libxcb"),
    "libxcb-xinerama.so.0": ("libxcb-xinerama0", "libxcb"),
    "libxcb-xinput.so.0": ("libxcb-xinput0", "libxcb"),
    "libxcb.so.1": ("libxcb1", "libxcb"),
    "libxkbcommon-x11.so.0": ("libxkbcommon-x11-0", "libxkbcommon-x11"),
    "libxkbcommon.so.0": ("libxkbcommon0", "libxkbcommon"),
    "libX11-xcb.so.1": ("libx11-xcb1", "libX11-xcb"),
    "libX11.so.6": ("libx11-6", "libX11"),
    "libSM.so.6": ("libsm6", "libSM"),
    "libICE.so.6": ("libice6", "libICE"),
    "libGL.so.1": ("libgl1", "libglvnd-glx"),
    "libOpenGL.so.0": ("libopengl0", "libglvnd-opengl"),
    "libEGL.so.1": ("libegl1", "libglvnd-egl"),
    "libfontconfig.so.1": ("libfontconfig1", "fontconfig"),
    "libfreetype.so.6": ("libfreetype6", "freetype"),
    "libdbus-1.so.3": ("libdbus-1-3", "dbus-libs"),
    "libglib-2.0.so.0": ("libglib2.0-0", "glib2"),
    "libgthread-2.0.so.0": ("libglib2.0-0", "glib2"),
    "libwayland-client.so.0": ("libwayland-client0", "libwayland-client"),
    "libwayland-cursor.so.0": ("libwayland-cursor0", "libwayland-cursor"),
    "libwayland-egl.so.1": ("libwayland-egl1", "libwayland-egl"),
}

_DT_NEEDED, _DT_RPATH, _DT_RUNPATH = 1, 15, 29
_SHT_DYNAMIC = 6
_DEFAULT_DIRS = ("/lib64", "/usr/lib64", "/lib", "/usr/lib")


def elf_dependencies(path: Path) -> tuple[list[str], list[str]]:
    """The ``NEEDED`` sonames and the run path folders (``$ORIGIN`` expanded) of an ELF file.

    Reads the headers, the dynamic section and its string table only: Qt's libraries are
    megabytes, and this runs on every start of the window.
    """
    with path.open("rb") as elf:

        def read(offset: int, size: int) -> bytes:
            elf.seek(offset)
            return elf.read(size)

        ident = read(0, 16)
        if ident[:4] != b"\x7fELF":
            raise ValueError(f"{path} is not an ELF file")
        wide, order = ident[4] == 2, "<" if ident[5] == 1 else ">"
        header_format = order + ("QQIHHHHHH" if wide else "IIIHHHHHH")
        header = struct.unpack(header_format, read(0x20 if wide else 0x1C, struct.calcsize(header_format)))
        shoff, shentsize, shnum = header[1], header[6], header[7]
        section_format = order + ("IIQQQQIIQQ" if wide else "IIIIIIIIII")
        table = read(shoff, shentsize * shnum)
        sections = [struct.unpack_from(section_format, table, i * shentsize) for i in range(shnum)]
        entry = order + ("qQ" if wide else "iI")
        needed: list[str] = []
        runpath: list[str] = []
        for _name, kind, _flags, _addr, offset, size, link, *_rest in sections:
            if kind != _SHT_DYNAMIC:
                continue
            strings = read(sections[link][4], sections[link][5])
            for tag, value in struct.iter_unpack(entry, read(offset, size - size % struct.calcsize(entry))):
                if tag in (_DT_NEEDED, _DT_RPATH, _DT_RUNPATH):
                    text = strings[value : strings.index(b"\0", value)].decode("utf-8", "replace")
                    (needed if tag == _DT_NEEDED else runpath).append(text)
    origin = str(path.parent)
    folders = [
        part.replace("$ORIGIN", origin).replace("${ORIGIN}", origin)
        for text in runpath
        for part in text.split(":")
        if part
    ]
    return needed, folders


def system_library_dirs(environ: Mapping[str, str] = os.environ) -> list[Path]:
    """Where the dynamic loader looks: ``LD_LIBRARY_PATH``, ``/etc/ld.so.conf`` (with its
    includes), then the default folders."""
    found = [p for p in environ.get("LD_LIBRARY_PATH", "").split(os.pathsep) if p]
    pending, seen = [Path("/etc/ld.so.conf")], set()
    while pending:
        conf = pending.pop(0)
        if conf in seen or not conf.is_file():
            continue
        seen.add(conf)
        for line in conf.read_text(encoding="utf-8", errors="replace").splitlines():
            line = line.split("#", 1)[0].strip()
            if line.startswith("include "):
                pattern = line.split(None, 1)[1]
                pattern = pattern if pattern.startswith("/") else str(conf.parent / pattern)
                pending.extend(Path(p) for p in sorted(glob.glob(pattern)))
            elif line:
                found.append(line)
    return [Path(p) for p in dict.fromkeys([*found, *_DEFAULT_DIRS])]


def loadable(soname: str) -> bool:
    """The loader's own answer, for a library that lives where no folder above says."""
    try:
        ctypes.CDLL(soname)
    except OSError:
        return False
    return True


def missing_libraries(
    plugin: Path,
    app_dirs: Sequence[Path],
    system_dirs: Sequence[Path],
    can_load: Callable[[str], bool] = loadable,
) -> list[str]:
    """The sonames ``plugin`` needs, directly or through the app's own libraries, that are
    nowhere: not next to it, not in ``app_dirs`` (Qt's folder, the bundle), not on the system."""
    missing: list[str] = []
    pending, seen = [plugin], {plugin.name}
    while pending:
        library = pending.pop()
        needed, runpath = elf_dependencies(library)
        own = [library.parent, *map(Path, runpath), *app_dirs]
        for name in needed:
            if name in seen:
                continue
            seen.add(name)
            local = next((d / name for d in own if (d / name).is_file()), None)
            if local is not None:
                pending.append(local)  # the app's own copy: what it links against counts too
            elif not any((d / name).exists() for d in system_dirs) and not can_load(name):
                missing.append(name)
    return missing


def candidate_platforms(environ: Mapping[str, str]) -> list[str]:
    """The platform plugins Qt will try, as ``QT_QPA_PLATFORM`` or the session says."""
    wanted = environ.get("QT_QPA_PLATFORM", "").strip()
    if wanted:
        return [part.split(":", 1)[0].strip() for part in wanted.split(";") if part.strip()]
    return ["wayland", "xcb"] if environ.get("WAYLAND_DISPLAY") else ["xcb"]


def install_hint(names: Iterable[str]) -> str:
    debian = dict.fromkeys(PACKAGES.get(n, (n, n))[0] for n in names)
    fedora = dict.fromkeys(PACKAGES.get(n, (n, n))[1] for n in names)
    return f"Debian/Ubuntu: sudo apt install {' '.join(debian)}; Fedora: sudo dnf install {' '.join(fedora)}"


def qt_folder() -> Path | None:
    spec = importlib.util.find_spec("PySide6")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "Qt"


def platform_problem(
    environ: Mapping[str, str] = os.environ,
    qt: Path | None = None,
    system_dirs: Sequence[Path] | None = None,
    can_load: Callable[[str], bool] = loadable,
) -> str | None:
    """One line saying why Qt cannot show a window here, or None (also off Linux, and for a
    platform plugin this cannot find, which Qt then reports itself)."""
    if not sys.platform.startswith("linux"):
        return None
    qt = qt or qt_folder()
    if qt is None:
        return None
    platforms = candidate_platforms(environ)
    if (
        set(platforms) <= {"xcb", "wayland"}
        and not environ.get("DISPLAY")
        and not environ.get("WAYLAND_DISPLAY")
    ):
        return (
            "pi-desktop: no display to open the window on (DISPLAY and WAYLAND_DISPLAY are not set); "
            "start it from a desktop session, or use the headless commands (pi-desktop --help)"
        )
    bundled = getattr(sys, "_MEIPASS", None)  # a PyInstaller bundle's own libraries
    app_dirs = [qt / "lib", *([Path(bundled)] if bundled else [])]
    system = system_library_dirs(environ) if system_dirs is None else system_dirs
    first: tuple[str, list[str]] | None = None
    for name in platforms:
        plugin = qt / "plugins" / "platforms" / f"libq{name}.so"
        if not plugin.is_file():
            return None
        missing = missing_libraries(plugin, app_dirs, system, can_load)
        if not missing:
            return None
        first = first or (name, missing)
    assert first is not None
    name, missing = first
    return (
        f"pi-desktop: the window needs system libraries that are missing ({', '.join(missing)}, for "
        f"Qt's {name} platform). {install_hint(missing)}. The headless commands work without them."
    )
