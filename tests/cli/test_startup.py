"""The parser stays light: building it, `--help` and every `COMMAND --help` load no heavy dependency.

``pi-desktop --help`` is benchmarked against a bare Python start (``benchmarks/startup_bench.py``);
this is the part of that promise a test can hold without timing anything: the MCP SDK, the HTTP
client, Qt and pydantic are not even imported unless a command runs that needs them.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from desktop.cli import COMMANDS
from tests.cli.helpers import cli_env

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
    """Every module loaded once ``code`` ran, with each package's root listed too."""
    script = (
        "import sys, json\n"
        f"{code}\n"
        "names = sorted(set(sys.modules) | {m.split('.')[0] for m in sys.modules})\n"
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


def test_help_documents_the_exit_codes_and_opening_a_path() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "desktop", "--help"],
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=120,
    ).stdout
    for code in ("0 ", "1 ", "2 ", "3 ", "4 ", "130", "141"):
        assert f"\n  {code}" in out, code
    assert "[PATH ...]" in out and "./status" in out
    for name in COMMANDS:
        assert name in out


#: What ``status`` must not load on a session without MCP servers (design D6): besides the SDKs
#: above (pydantic too: the one row schema and the settings are msgspec types, design T10, T11),
#: the keyring (its backend search alone costs more
#: than the parse), the ignore matcher of the file tools, and the models.dev package's loader;
#: ``logging`` (only something to log loads it), ``socket`` (the writer lock's host name), the
#: incremental projector (``status`` builds no request), what only running a tool needs
#: (``subprocess`` for bash and hooks, ``difflib`` for edit), and the resource readers (the
#: bundled catalogs are read by path), the ignore-file matcher (only a running search reads
#: ignore files), the first-run route choice (a session that names its route needs none) and
#: the cloud signers (only a Bedrock or Vertex request is signed), the compaction engine
#: (``status`` compacts nothing), the sessions folder (one named file is opened) and the
#: writer's lock (a read-only open takes none); ``tempfile`` (a catalog refresh and a long bash
#: output write temporary files), ``random`` and ``secrets`` (row ids and throwaway keys read
#: ``os.urandom``), ``base64`` (only an image read encodes), and ``platformdirs`` where the
#: data folder is given (it loads ``tempfile``; only the platform's own folders need it);
#: ``gzip`` (the bundled models.dev snapshot is inflated by ``zlib`` in one pass, the Pi catalog
#: is plain JSON; only a gzipped refreshed copy loads it); ``textwrap`` (the commands'
#: descriptions are filled when help is shown, ``desktop.cli.RawDescriptionHelpFormatter``).
STATUS_HEAVY = (
    *HEAVY,
    "pathspec",
    "secretstorage",
    "jeepney",
    "cryptography",
    "logging",
    "socket",
    "desktop.pi.projection.incremental",
    "subprocess",
    "difflib",
    "importlib.resources.readers",
    "desktop.host.tools.ignore",
    "desktop.host.first_run",
    "desktop.host.providers.aws_sigv4",
    "desktop.host.providers.google_adc",
    "desktop.session.compaction",
    "desktop.host.journal.store",
    "desktop.host.journal.lock",
    "fcntl",
    "tempfile",
    "random",
    "secrets",
    "base64",
    "platformdirs",
    "gzip",
    "textwrap",
)


def status_heavy(loaded: list[str]) -> list[str]:
    """The modules of ``STATUS_HEAVY`` that ``loaded`` holds, but for what msgspec loads itself
    (``textwrap``): every read checks its lines against the one row schema (design T10)."""
    schema = set(loaded_after("import msgspec"))
    return [name for name in STATUS_HEAVY if name in loaded and name not in schema]


def test_status_loads_nothing_heavy(tmp_path: object) -> None:
    """The part of the status benchmark a test can hold without timing: ``status`` on a real
    session imports none of the heavy modules (``benchmarks/startup_bench.py`` times it)."""
    from pathlib import Path

    from tests.cli.helpers import make_session

    folder = Path(str(tmp_path))
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
    assert status_heavy(loaded) == []


def test_status_verifies_the_installations_section_without_the_keyring(tmp_path: object) -> None:
    """A session written here carries a ``tool_activation`` section sealed with this
    installation's secret; where that secret was made in the private file (no keyring backend),
    ``status`` verifies it from the file and never loads the keyring (design A8, D6)."""
    from pathlib import Path

    from tests.cli.helpers import make_session

    folder = Path(str(tmp_path))
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
    assert status_heavy(loaded) == []


def test_status_compiles_no_redaction_pattern(tmp_path: object) -> None:
    """``status`` redacts nothing, so the redaction patterns stay uncompiled (design D6); a tool
    result or a displayed header compiles them at the first redaction."""
    from pathlib import Path

    from tests.cli.helpers import make_session

    folder = Path(str(tmp_path))
    path = make_session(folder)
    code = (
        "import io, contextlib\n"
        "from desktop.app import main\n"
        "from desktop.host import redaction\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    rc = main(['status', {str(path)!r}, '--workspace', {str(folder)!r}])\n"
        "assert rc == 0, rc\n"
        "assert redaction._patterns.cache_info().currsize == 0, 'status compiled the redaction patterns'\n"
        "assert redaction.redact_text('x-api-key: abcdef') == 'x-api-key: [redacted]'\n"
        "assert redaction._patterns.cache_info().currsize == 1\n"
    )
    loaded = loaded_after(code)
    assert "desktop.host.redaction" in loaded  # imported (the executor holds it), not compiled


def test_status_decodes_only_the_routes_models_dev_provider(tmp_path: object) -> None:
    """The bundled models.dev document (2 MB) is not decoded whole on ``status``: only the
    route's provider is (design D6); its stamp, shown as the snapshot's date, is the same."""
    from pathlib import Path

    from tests.cli.helpers import make_session

    folder = Path(str(tmp_path))
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
