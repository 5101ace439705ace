"""Headless start benchmark: `pi-desktop --help` and `pi-desktop status` against a bare Python start.

Run from the repository root::

    PYTHONPATH=$PWD python benchmarks/startup_bench.py [--rounds 15] [--rows 10000] [--json out.json]

The comparisons, each a ratio against an anchor measured in the same run (design D6, D7):

* ``help``: ``pi-desktop --help`` against ``python -c "import orjson"`` (target <= 1.5x);
* ``status``: ``pi-desktop status FILE`` on a 10,000-row session against a script that starts
  Python and parses the same file with orjson, garbage collector off (its best case; target
  <= 2x);
* ``status`` again on the same session plus one ``tool_activation`` section, as every session
  the app writes has, sealed with the installation secret of the private data dir, made as the
  app makes it where no keyring backend exists (a private file, read without the keyring,
  design A8);
* ``status`` on the same session with a foreign section (a throwaway key): the file's secret
  does not verify it, so the keyring is asked too (its import and backend search).

Each run is a fresh process; its CPU time (user + system) comes from
``resource.getrusage(RUSAGE_CHILDREN)`` before and after, so other load on the machine does
not count. The two sides alternate within every round (which one goes first alternates too),
and min and median over the rounds are reported. The command is the installed ``pi-desktop``
console script when there is one next to this interpreter (the path a user takes), else
``python -m desktop``. A private data dir keeps the real one out of it, and byte-code caches
are allowed (``PYTHONDONTWRITEBYTECODE`` is dropped for the runs), as in an installed app.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

ANCHOR_IMPORT = ["-c", "import orjson"]
ANCHOR_PARSE = [
    "-c",
    "import gc, sys, orjson\n"
    "gc.disable()\n"
    "data = open(sys.argv[1], 'rb').read()\n"
    "rows = [orjson.loads(line) for line in data.splitlines() if line]\n",
]


def pi_desktop() -> list[str]:
    script = Path(sys.executable).with_name("pi-desktop")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "desktop"]


def cpu_of(argv: Sequence[str], env: dict[str, str]) -> float:
    """CPU seconds (user + system) of one run of ``argv`` as a child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(list(argv), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.decode()[-500:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def compare(
    name: str, subject: Sequence[str], anchor: Sequence[str], rounds: int, env: dict[str, str]
) -> dict[str, object]:
    cpu_of(subject, env)  # warm the page cache and byte-code caches for both sides
    cpu_of(anchor, env)
    subject_times: list[float] = []
    anchor_times: list[float] = []
    for index in range(rounds):
        pair = [(subject, subject_times), (anchor, anchor_times)]
        for argv, out in pair if index % 2 == 0 else reversed(pair):
            out.append(cpu_of(argv, env))
    result = {
        "name": name,
        "rounds": rounds,
        "subject_ms": {"min": min(subject_times) * 1000, "median": statistics.median(subject_times) * 1000},
        "anchor_ms": {"min": min(anchor_times) * 1000, "median": statistics.median(anchor_times) * 1000},
    }
    result["ratio_min"] = min(subject_times) / min(anchor_times)
    result["ratio_median"] = statistics.median(subject_times) / statistics.median(anchor_times)
    return result


def make_session(path: Path, rows: int) -> None:
    sys.path.insert(0, str(ROOT))
    from benchmarks.timeline_bench import make_session as timeline_session

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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--json", type=Path, help="also write the results here")
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
        results = [
            compare("help", [*command, "--help"], [*python, *ANCHOR_IMPORT], args.rounds, env),
            compare(
                f"status ({args.rows:,} rows, {session.stat().st_size / 1e6:.1f} MB)",
                [*command, "status", str(session)],
                [*python, *ANCHOR_PARSE, str(session)],
                args.rounds,
                env,
            ),
            compare(
                "status, with a section",
                [*command, "status", str(sealed)],
                [*python, *ANCHOR_PARSE, str(sealed)],
                args.rounds,
                env,
            ),
            compare(
                "status, a foreign section",
                [*command, "status", str(foreign)],
                [*python, *ANCHOR_PARSE, str(foreign)],
                args.rounds,
                env,
            ),
        ]
    print(
        f"{'comparison':<32} {'pi-desktop min/median ms':>26} {'anchor min/median ms':>22} {'ratio min/median':>18}"
    )
    for result in results:
        subject, anchor = result["subject_ms"], result["anchor_ms"]
        assert isinstance(subject, dict) and isinstance(anchor, dict)
        print(
            f"{result['name']:<32} {subject['min']:>12.1f} / {subject['median']:<11.1f} "
            f"{anchor['min']:>9.1f} / {anchor['median']:<10.1f} "
            f"{result['ratio_min']:>7.2f}x / {result['ratio_median']:.2f}x"
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
