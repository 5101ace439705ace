"""Entry points: ``pi-desktop`` (console) and ``pi-desktop-gui`` (no console window).

With no subcommand the window opens; with one, the same engine runs headless. The GUI
is imported lazily so headless commands never load Qt.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from desktop.cli import build_parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(list(argv) if argv is not None else None)
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
    return run_gui(args)


if __name__ == "__main__":
    raise SystemExit(main())
