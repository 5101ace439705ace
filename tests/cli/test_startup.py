"""The parser stays light: building it, `--help` and every `COMMAND --help` load no heavy dependency.

``pi-desktop --help`` is benchmarked against a bare Python start (``benchmarks/startup_bench.py``);
this is the part of that promise a test can hold without timing anything: the MCP SDK, the HTTP
client, Qt and pydantic are not even imported unless a command runs that needs them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from desktop.cli import COMMANDS
from tests.cli.helpers import cli_env, make_session, run_process

#: ``shutil`` loads ``bz2`` and ``lzma``: argparse imports it for the terminal width unless the
#: formatter is given one (``desktop.cli.HelpFormatter``).
HEAVY = (
    "mcp",
    "httpx",
    "PySide6",
    "pydantic",
    "anthropic",
    "openai",
    "jsonschema",
    "keyring",
    "models_dev",
    "shutil",
)


def loaded_after(code: str) -> list[str]:
    """Every module loaded once ``code`` ran, with each package's root listed too (an entry
    set to None marks a module as absent, and is not one loaded)."""
    script = (
        "import sys, json\n"
        f"{code}\n"
        "mods = [m for m, module in sys.modules.items() if module is not None]\n"
        "names = sorted(set(mods) | {m.split('.')[0] for m in mods})\n"
        "sys.__stdout__.write('\\n' + json.dumps(names) + '\\n')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=cli_env(), timeout=120, check=True
    ).stdout
    loaded: list[str] = json.loads(out.strip().splitlines()[-1])
    return loaded


def test_importing_the_cli_and_building_the_parser_loads_nothing_heavy() -> None:
    loaded = loaded_after("import desktop.cli, desktop.app; desktop.cli.build_parser()")
    assert [name for name in HEAVY if name in loaded] == []


@pytest.mark.parametrize("argv", [["--help"], *[[name, "--help"] for name in COMMANDS]])
def test_help_loads_nothing_heavy(argv: list[str]) -> None:
    code = f"from desktop.app import main\nrc = main({argv!r})\nassert rc == 0, rc"
    loaded = loaded_after(code)
    assert [name for name in HEAVY if name in loaded] == []


def test_help_documents_the_exit_codes_and_opening_a_path(tmp_path: Path) -> None:
    out = run_process("--help", cwd=tmp_path).stdout
    for code in ("0 ", "1 ", "2 ", "3 ", "4 ", "130", "141"):
        assert f"\n  {code}" in out, code
    assert "[PATH ...]" in out and "./status" in out
    for name in COMMANDS:
        assert name in out


#: What ``status`` must not load on a session without MCP servers: each of these alone costs a
#: large part of the status budget (``benchmarks/startup_bench.py`` times the rest): the keyring
#: (its backend search costs more than the parse), the JSON-schema validator of tool arguments,
#: the cloud signers, the incremental projector and the compaction engine (``status`` builds no
#: request and compacts nothing), the MCP hub, and pydantic (the one row schema and the
#: settings are msgspec types, design T10, T11).
STATUS_HEAVY = (
    *HEAVY,
    "pydantic",
    "secretstorage",
    "desktop.pi.projection.incremental",
    "desktop.host.providers.aws_sigv4",
    "desktop.host.providers.google_adc",
    "desktop.host.tools.mcp_servers",
    "desktop.session.compaction",
)


def test_status_loads_nothing_heavy(tmp_path: Path) -> None:
    """The part of the status benchmark a test can hold without timing: ``status`` on a real
    session imports none of the heavy modules (``benchmarks/startup_bench.py`` times it)."""
    folder = tmp_path
    path = make_session(folder)
    # Without a ``tool_activation`` section there is nothing the installation secret must
    # verify, so not even the keyring loads (a section makes ``status`` read it, design A8).
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for row in rows:
        message = (row.get("modelSystem") or {}).get("message") or {}
        (message.get("sections") or {}).pop("tool_activation", None)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    code = (
        "from desktop.app import main\n"
        f"rc = main(['status', {str(path)!r}, '--workspace', {str(folder)!r}])\n"
        "assert rc == 0, rc"
    )
    loaded = loaded_after(code)
    assert "desktop" in loaded  # the command really ran in that process
    assert [name for name in STATUS_HEAVY if name in loaded] == []


def test_status_verifies_the_installations_section_without_the_keyring(tmp_path: Path) -> None:
    """A session written here carries a ``tool_activation`` section sealed with this
    installation's secret; where that secret was made in the private file (no keyring backend),
    ``status`` verifies it from the file and never loads the keyring (design A8)."""
    folder = tmp_path
    path = make_session(folder)
    assert "tool_activation" in path.read_text()
    code = (
        "import io, contextlib\n"
        "from desktop.app import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        f"    rc = main(['status', {str(path)!r}, '--workspace', {str(folder)!r}, '--json'])\n"
        "assert rc == 0, rc\n"
        "info = json.loads(out.getvalue())\n"
        "assert info['activation']['source'] == 'section', info['activation']\n"
        "assert info['pendingUpdate'] is False, info\n"
    )
    loaded = loaded_after(code)
    assert "desktop" in loaded
    assert [name for name in STATUS_HEAVY if name in loaded] == []


def test_status_decodes_only_the_routes_models_dev_provider(tmp_path: Path) -> None:
    """The bundled models.dev document (2 MB) is not decoded whole on ``status``: only the
    route's provider is; its stamp, shown as the snapshot's date, is the same."""
    folder = tmp_path
    path = make_session(folder)
    code = (
        "import io, contextlib\n"
        "from desktop.app import main\n"
        "from desktop.pi.catalog import models_dev\n"
        "from desktop.pi.catalog.catalog import bundled_models_dev\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        f"    rc = main(['status', {str(path)!r}, '--workspace', {str(folder)!r}, '--json'])\n"
        "assert rc == 0, rc\n"
        "snapshot = bundled_models_dev()\n"
        "assert snapshot.providers._whole is None, 'the whole document was decoded'\n"
        "assert snapshot.providers._found, 'no provider was looked up'\n"
        "full = models_dev.parse_models_dev(models_dev.bundled_bytes(), 'x', check=False)\n"
        "made = json.loads(out.getvalue())['catalogs']['models.dev']['madeAt']\n"
        "assert made == full.stamp, (made, full.stamp)\n"
    )
    loaded = loaded_after(code)
    assert "desktop" in loaded
