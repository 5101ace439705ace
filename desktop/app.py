"""Entry points: ``pi-desktop`` (console) and ``pi-desktop-gui`` (no console window).

With no subcommand the window opens; with one, the same engine runs headless. The GUI
is imported lazily so headless commands never load Qt.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from desktop.cli import build_parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(list(argv) if argv is not None else None)
    status = run_launcher_flags(args)
    if status is not None:
        return status
    handler = getattr(args, "handler", None)
    if handler is None:
        from desktop.ui.launch import run_gui

        return run_gui(args)
    result: int = handler(args)
    return result


def gui_main() -> int:
    """Double-click entry point: never a console subcommand, always the window."""
    from desktop.ui.launch import run_gui

    parser = build_parser()
    args, _unknown = parser.parse_known_args(sys.argv[1:])
    status = run_launcher_flags(args)
    if status is not None:
        return status
    return run_gui(args)


def run_launcher_flags(args: argparse.Namespace) -> int | None:
    """Handle ``--(un)install-desktop-entry``; ``None`` when neither was given."""
    install = getattr(args, "install_desktop_entry", False)
    if not install and not getattr(args, "uninstall_desktop_entry", False):
        return None
    from desktop.host import desktop_entry

    if sys.platform in ("win32", "darwin"):
        print(
            "error: desktop entries are a Linux (freedesktop) feature; on Windows and macOS "
            "build the app bundle as described in packaging/README.md",
            file=sys.stderr,
        )
        return 2
    data_home = desktop_entry.xdg_data_home()
    if not install:
        removed = desktop_entry.uninstall_desktop_entry(data_home)
        if not removed:
            print(f"nothing to remove: no Pi Desktop entry under {data_home}")
        for path in removed:
            print(f"removed {path}")
        return 0
    try:
        result = desktop_entry.install_desktop_entry(data_home, desktop_entry.find_gui_executable())
    except (desktop_entry.DesktopEntryError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"installed {result.desktop_file}")
    print(f"  Exec={result.exec_path}")
    print(f"  icons under {data_home / 'icons' / 'hicolor'} ({len(result.icons)} files)")
    print(f"  session file type in {result.mime_file}")
    for note in result.notes:
        print(f"  note: {note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
