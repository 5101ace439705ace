"""Headless start benchmark: `pi-desktop --help` and `pi-desktop status` against their anchors.

Run from the repository root::

    PYTHONPATH=$PWD python benchmarks/startup_bench.py [--rounds 15] [--rows 10000]

The comparisons, each a ratio against an anchor measured in the same run (design X40), with
the budget's verdict printed (design X41):

* ``help``: ``pi-desktop --help`` against ``python -c "import orjson"`` (budget <= 2x);
* ``status``: ``pi-desktop status FILE`` on a 10,000-row session against a script that starts
  Python and parses the same file with orjson, garbage collector off (its best case; budget
  <= 4x);
* ``status`` again on the same session plus one ``tool_activation`` section, as every session
  the app writes has, sealed with the installation secret of the private data dir, made as the
  app makes it where no keyring backend exists (a private file, read without the keyring,
  design A8);
* ``status`` on the same session with a foreign section (a throwaway key): the file's secret
  does not verify it, so the keyring is asked too (its import and backend search);
* ``status`` of a 10,000-entry pi session against pi-coding-agent 1.0.3's own session manager
  in a fresh Node process (``SessionManager.open`` and ``buildSessionContext``, the context the
  next request carries; budget <= 1.0x); it needs ``npm install`` in ``scripts/oracle-agent``
  (or ``--oracle-agent DIR``) and is skipped, saying so, without it.

Every run is a fresh process on both sides; its CPU time (user + system) comes from
``RUSAGE_CHILDREN`` (``_bench.child_cpu_ms``), interleaved round by round through
``_bench.compare``, which runs each side once first, uncounted (page and byte-code caches warm on
both sides). The command is the installed ``pi-desktop`` console script when there is one next
to this interpreter (the path a user takes), else ``python -m desktop``. A private data dir keeps
the real one out of it, and byte-code caches are allowed (``PYTHONDONTWRITEBYTECODE`` is dropped
for the runs), as in an installed app.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import child_cpu_ms, compare, pi_desktop, report
from foreign_bench import pi_entries
from timeline_bench import make_session as timeline_session

ROOT = Path(__file__).resolve().parent.parent

ANCHOR_IMPORT = ["-c", "import orjson"]
ANCHOR_PARSE = [
    "-c",
    "import gc, sys, orjson\n"
    "gc.disable()\n"
    "data = open(sys.argv[1], 'rb').read()\n"
    "rows = [orjson.loads(line) for line in data.splitlines() if line]\n",
]
#: pi-coding-agent's session manager opening a session and building its context, in Node.
#: Arguments: the package's ``dist/core`` folder, the session file, a session folder.
PI_SESSION_MANAGER = [
    "--input-type=module",
    "-e",
    "const [core, path, dir] = process.argv.slice(1);\n"
    'const { SessionManager } = await import(core + "/session-manager.js");\n'
    "const context = SessionManager.open(path, dir).buildSessionContext();\n"
    'if (!context.messages.length) throw new Error("no context");\n',
]


def cpu_ms(argv: Sequence[str], env: dict[str, str]) -> float:
    return child_cpu_ms(argv, env=env)[0]


def measure(
    name: str,
    subject: Sequence[str],
    anchor: Sequence[str],
    anchor_name: str,
    budget: float,
    rounds: int,
    env: dict[str, str],
    headline: bool = True,
) -> None:
    times = compare(
        {
            "subject": functools.partial(cpu_ms, subject, env),
            "anchor": functools.partial(cpu_ms, anchor, env),
        },
        rounds,
    )
    report(
        name,
        times["subject"],
        times["anchor"],
        anchor_name=anchor_name,
        unit="ms CPU",
        budget=budget,
        headline=headline,
    )


def make_session(path: Path, rows: int) -> None:
    timeline_session(path, rows)


def with_activation_section(path: Path, target: Path, data: Path | None) -> None:
    """A copy of ``path`` whose last row is a hidden system row carrying a ``tool_activation``
    section, as every session the app writes has. With ``data``, sealed with that data
    folder's installation secret, made as the app makes it where no keyring backend exists (a
    private file); without, with a throwaway key (a foreign section: it verifies nothing, but
    it must be checked, so the keyring is asked too)."""
    import keyring
    import keyring.backends.fail

    from desktop.host.installation_secret import load_installation_secret
    from desktop.host.journal import JournalWriter
    from desktop.session.activation import (
        ActivationSigner,
        ActivationState,
        activation_message,
    )

    target.write_bytes(path.read_bytes())
    with JournalWriter.open(target) as writer:
        if data is None:
            signer = ActivationSigner.ephemeral(writer.session_id)
        else:
            previous = keyring.get_keyring()
            keyring.set_keyring(keyring.backends.fail.Keyring())  # never the user's real keyring
            try:
                secret = load_installation_secret(data)
            finally:
                keyring.set_keyring(previous)
            assert secret is not None and secret.source == "file"
            signer = ActivationSigner.from_secret(secret.value, writer.session_id)
        state = signer.seal(ActivationState(identity="0" * 64))
        message = activation_message(state, timestamp=1_700_000_000_000)
        row = {"type": "system", "v": 1, "id": "bench-activation", "ts": 1_700_000_000_000}
        row["modelSystem"] = {"v": 1, "message": message}
        writer.append([row])


def write_pi_session(path: Path, entries: int) -> None:
    """A pi session of ``entries`` entries (``foreign_bench``'s mix: reads, tool results, answers)."""
    with path.open("wb") as handle:
        for entry in itertools.islice(pi_entries(), entries + 1):  # the header and the entries
            handle.write(orjson.dumps(entry) + b"\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument(
        "--oracle-agent",
        type=Path,
        default=ROOT / "scripts" / "oracle-agent",
        help="a folder holding pi-coding-agent 1.0.3's node_modules",
    )
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="pi-startup-") as tmp:
        folder = Path(tmp)
        session = folder / "session.jsonl"
        make_session(session, args.rows)
        data = folder / "data"
        data.mkdir()
        sealed = folder / "sealed.jsonl"
        with_activation_section(session, sealed, data)
        foreign = folder / "foreign.jsonl"
        with_activation_section(session, foreign, None)
        for made in (session, sealed, foreign):
            (folder / f"{made.name}.lock").unlink(missing_ok=True)
        env = {**os.environ, "PYTHONPATH": str(ROOT), "PI_DESKTOP_DATA_DIR": str(data)}
        # An installed app has its byte code compiled; without the caches every run would
        # compile every module from source (the warm-up run writes them).
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        command = pi_desktop()
        python = [sys.executable]
        parse = "python + orjson parse, collector off"
        size = f"{args.rows:,} rows, {session.stat().st_size / 1e6:.1f} MB"
        measure(
            "--help",
            [*command, "--help"],
            [*python, *ANCHOR_IMPORT],
            "python -c 'import orjson'",
            2.0,
            args.rounds,
            env,
        )
        for name, path, headline in (
            (f"status ({size})", session, True),
            ("status, with a section (as the app writes it)", sealed, True),
            ("status, a foreign section (the keyring asked too)", foreign, False),
        ):
            measure(
                name,
                [*command, "status", str(path)],
                [*python, *ANCHOR_PARSE, str(path)],
                parse,
                4.0,
                args.rounds,
                env,
                headline,
            )

        core = args.oracle_agent / "node_modules" / "@earendil-works" / "pi-coding-agent" / "dist" / "core"
        node = shutil.which("node")
        if node is None or not (core / "session-manager.js").is_file():
            print(f"status against pi-coding-agent's session manager: skipped (no node or no {core})")
            return 0
        pi_session = folder / "pi-session.jsonl"
        write_pi_session(pi_session, args.rows)
        sessions = folder / "pi-sessions"
        sessions.mkdir()
        measure(
            f"status of a pi session ({args.rows:,} entries, {pi_session.stat().st_size / 1e6:.1f} MB)",
            [*command, "status", str(pi_session)],
            [node, *PI_SESSION_MANAGER, str(core), str(pi_session), str(sessions)],
            "pi-coding-agent SessionManager.open + buildSessionContext (node)",
            1.0,
            args.rounds,
            env,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
