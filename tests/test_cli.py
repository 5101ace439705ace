"""The one program answers headless subcommands without loading Qt."""

from __future__ import annotations

import subprocess
import sys


def test_help_lists_every_subcommand() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "desktop", "--help"], capture_output=True, text=True, check=True
    ).stdout
    for name in ("payload", "prompt", "compact", "status", "emulator"):
        assert name in out


def test_headless_commands_do_not_import_qt() -> None:
    code = (
        "import sys; from desktop.cli import build_parser; build_parser(); "
        "print(any(m.startswith('PySide6') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
