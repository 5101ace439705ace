"""Entry points: ``pi-desktop`` (console) and ``pi-desktop-gui`` (no console window).

With no subcommand the window opens (on the session files given as PATH, if any); with one,
the same engine runs headless behind one error boundary (design D6). The GUI is imported
lazily so headless commands never load Qt, and the parser imports no engine module.

``--data-dir`` becomes ``PI_DESKTOP_DATA_DIR`` here, once, before anything reads a path, so
settings, MCP servers, extensions, hooks, logs and caches all follow it in every command.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from desktop.cli import build_parser, command_word, split_open_paths
from desktop.cli._args import EXIT_USAGE, CliError
from desktop.cli._boundary import report, run_handler

DATA_DIR_ENV = "PI_DESKTOP_DATA_DIR"  # desktop.host.paths.DATA_DIR_ENV, without importing it
ENDS_WITH_OUTPUT = frozenset({"payload"})
"""Read-only commands whose process is over once their output is written: run as the process's
own command line, they end without freeing the session they built (design X27). A 50,000-message
``payload`` holds a few hundred thousand objects; freeing them one by one at exit cost about
0.2 s of CPU the user waits through for nothing."""


@functools.cache
def parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser (of one command, or all), built once per process (in-process callers such as
    tests run many commands)."""
    return build_parser(only)


def parse(argv: Sequence[str]) -> argparse.Namespace:
    """Parse the command line; ``args.open_paths`` lists the session files to open in the window."""
    words, open_paths = split_open_paths(argv)
    args = parser(command_word(words)).parse_args(words)
    args.open_paths = open_paths
    return args


def apply_data_dir(args: argparse.Namespace) -> None:
    """Turn ``--data-dir`` into the environment variable every path lookup reads."""
    data_dir = getattr(args, "data_dir", None)
    if data_dir:
        os.environ[DATA_DIR_ENV] = str(Path(data_dir).expanduser().absolute())


def _tolerant_stdout() -> None:
    """Unencodable characters (a file name in a strange encoding) print escaped, not as a crash."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):
                reconfigure(errors="backslashreplace")


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    _tolerant_stdout()
    try:
        args = parse(words)
    except SystemExit as exit_request:  # --help, --version and usage errors (already printed)
        code = exit_request.code
        return code if isinstance(code, int) else (0 if code is None else EXIT_USAGE)
    except BaseException as error:  # a broken command module is still one line, not a traceback
        return report("", error)
    apply_data_dir(args)
    status = run_launcher_flags(args)
    if status is not None:
        return status
    handler = getattr(args, "handler", None)
    if handler is None:
        return open_window(args)
    code = run_handler(str(args.command), handler, args)
    if argv is None and args.command in ENDS_WITH_OUTPUT:  # this process's own command line
        _end_now(code)
    return code


def _end_now(code: int) -> None:
    """End the process with ``code`` once everything written is out, skipping the interpreter's
    teardown (nothing is open: the command wrote nothing and closed what it read)."""
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
    if "logging" in sys.modules:
        import logging

        logging.shutdown()
    os._exit(code)


def gui_main() -> int:
    """Double-click entry point: never a console subcommand, always the window."""
    words, open_paths = split_open_paths(sys.argv[1:])
    try:
        args, _unknown = parser().parse_known_args(words)
    except SystemExit as exit_request:
        code = exit_request.code
        return code if isinstance(code, int) else (0 if code is None else EXIT_USAGE)
    args.open_paths = open_paths
    apply_data_dir(args)
    status = run_launcher_flags(args)
    if status is not None:
        return status
    return open_window(args, console=False)


def bundle_main() -> int:
    """The bundle's entry: ``pi-desktop prompt …`` (any subcommand, ``--help``, ``--version``)
    runs headless as from a pip install; anything else is the double-click window (design G13).

    A PyInstaller bundle has one entry script. On Windows the windowed executable has no
    standard streams, so the bundle also carries ``pi-desktop-cli.exe`` for the terminal.
    """
    words, _paths = split_open_paths(sys.argv[1:])
    if command_word(words) is None and not {"-h", "--help", "--version"} & set(words):
        return gui_main()
    return main()


def open_window(args: argparse.Namespace, *, console: bool = True) -> int:
    """Check the files to open, then start Qt (or hand them to the window already running).

    A missing file, or one that is no session the window can open, is refused before Qt starts
    with the text the window's File → Open shows for it (design G8): one line on the terminal,
    or a message box for the no-console launcher (a file manager shows no terminal).
    """
    # Before any Qt library loads: a missing system library or no display is one line and exit
    # code 2, not Qt's abort (design G13).
    # Lazy: the --help budget.
    from desktop.ui.platform_libraries import EXIT_NO_PLATFORM, platform_problem

    problem = platform_problem()
    if problem is not None:
        print(problem, file=sys.stderr)
        return EXIT_NO_PLATFORM
    # Lazy: the --help budget.
    from desktop.ui.pyside_features import skip_source_scan

    skip_source_scan()  # before the first Qt module: PySide's hook reads no module's source (X28)
    # Lazy: the --help budget.
    from desktop.ui.quit_signals import catch_quit_signals

    # First: from here on SIGTERM/SIGINT quit the window cleanly, even during start-up (design
    # G10; tests/ui/test_clean_exit.py signals the app from the moment it logs that it starts).
    catch_quit_signals()
    # Lazy: the --help budget.
    from desktop.cli._files import check_session_file
    from desktop.host.foreign.detect import detect_format

    paths = [str(path) for path in getattr(args, "open_paths", []) or []]
    for path in paths:
        try:
            try:
                check_session_file(Path(path))
            except CliError as error:
                # Another agent's file may start with a damaged line the window reads past
                # (pi and Claude Code files are recognized from their first few lines).
                if error.line != 1 or not detect_format(Path(path)).known:
                    raise
            detected = detect_format(Path(path))
            if detected.format == "unknown":
                raise CliError(detected.description)
        except CliError as error:
            if console:
                return report("", error)
            # Lazy: the --help budget.
            from desktop.ui.launch import refuse_in_window

            return refuse_in_window(error.message if error.path is None else f"{error.path}: {error.message}")
    args.open_paths = paths
    # A window already running for this data folder takes the files: ask it before loading the
    # window's modules, so the second launch exits within a fraction of a second (design G8).
    # Lazy: the --help budget.
    from desktop.ui.smoke import smoke_requested

    if not smoke_requested(getattr(args, "smoke_test", False)):
        # Lazy: the --help budget.
        from desktop.host.paths import data_dir
        from desktop.ui.single_instance import hand_over_early

        if hand_over_early(data_dir(getattr(args, "data_dir", None)), paths):
            return 0
    # Lazy: the --help budget.
    from desktop.ui.launch import run_gui

    return run_gui(args)


def run_launcher_flags(args: argparse.Namespace) -> int | None:
    """Handle ``--(un)install-desktop-entry``; ``None`` when neither was given."""
    install = getattr(args, "install_desktop_entry", False)
    if not install and not getattr(args, "uninstall_desktop_entry", False):
        return None
    # Lazy: the --help budget.
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
