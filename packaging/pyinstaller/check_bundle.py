"""Check a built bundle against the metadata it was built from (run by the bundles workflow).

    python packaging/pyinstaller/check_bundle.py dist

Linux and Windows: the executable is where packaging/README.md says. macOS: the ``.app``'s
``Info.plist`` carries every entry of ``bundle_metadata.info_plist`` (identifier, version,
session document types) and runs the ``pi-desktop`` executable. Prints one line per check and
exits non-zero on the first mismatch.
"""

from __future__ import annotations

import plistlib
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent.parent))

import bundle_metadata  # noqa: E402

from desktop import __version__  # noqa: E402
from desktop.identity import DISPLAY_NAME  # noqa: E402


def check(dist: Path, platform: str = sys.platform) -> list[str]:
    """Problems found (empty: the bundle matches)."""
    if platform == "darwin":
        plist_path = dist / f"{DISPLAY_NAME}.app" / "Contents" / "Info.plist"
        if not plist_path.is_file():
            return [f"{plist_path} is missing"]
        plist = plistlib.loads(plist_path.read_bytes())
        problems = [
            f"Info.plist {key}: {plist.get(key)!r} != {value!r}"
            for key, value in bundle_metadata.info_plist(__version__).items()
            if plist.get(key) != value
        ]
        executable = plist_path.parent / "MacOS" / str(plist.get("CFBundleExecutable"))
        if plist.get("CFBundleExecutable") != bundle_metadata.EXECUTABLE or not executable.is_file():
            problems.append(f"CFBundleExecutable {plist.get('CFBundleExecutable')!r} is not {executable}")
        return problems
    names = [bundle_metadata.EXECUTABLE]
    if platform == "win32":
        names = [f"{bundle_metadata.EXECUTABLE}.exe", f"{bundle_metadata.CONSOLE_EXECUTABLE}.exe"]
    return [
        f"{dist / 'pi-desktop' / name} is missing"
        for name in names
        if not (dist / "pi-desktop" / name).is_file()
    ]


def main(argv: list[str]) -> int:
    dist = Path(argv[1] if len(argv) > 1 else "dist")
    problems = check(dist)
    for problem in problems:
        print(f"bundle check: {problem}", file=sys.stderr)
    if not problems:
        print(f"bundle check: {dist} matches the metadata of Pi Desktop {__version__} ({sys.platform})")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
