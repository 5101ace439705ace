"""Fuzz: thousands of mutated session files through `status`, `payload` and `prompt` (design D6, T9, A8).

Each mutated file (``tests/cli/fuzz_sessions.py``, seeded) is given to the real ``main`` in this
process, with stdout and stderr captured, and a sample to real processes. What must hold:

* no traceback ever (``main`` always returns, stderr never holds one) and every failure is one
  line with a documented exit code;
* ``status`` and ``payload`` alter nothing: the folder holding the file is byte-for-byte and
  mtime-for-mtime the same afterwards (no lock file, no new session, no sidecar);
* ``prompt`` grants nothing: the prompt asks the scripted model to call a deferred extension tool
  that was never activated here (it needs no approval, so only activation stands in its way), to
  write a file and to run a shell command, and permission requests are declined; none of them
  may leave a trace.

The counts are printed (run with ``-s``) and held as assertions.

The second half is the structure-aware fuzz of every reader: Desktop, pi and Claude Code files
mutated where their structure lives, through the commands that read each format, the session
browser and the window's open and render path (see the section below).
"""

from __future__ import annotations

import collections
import contextlib
import json
import logging
import os
import re
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import keyring
import orjson
import pytest

from desktop.cli._args import EXIT_INTERNAL
from desktop.cli.whatif import DEFAULT_ROUTES
from desktop.emulator import Emulator
from desktop.host.journal import writer as journal_writer
from desktop.ui.inspect_ops import browse_listing
from tests.cli.fuzz_sessions import Case, Mutant, cases, materialize, structured_cases
from tests.cli.fuzz_window import WindowPath, where
from tests.cli.helpers import EMULATOR_MODEL, KEY_VARIABLES, REPO, Run, run_main, run_process, snapshot

SEED = 20_251_202
COUNT = int(os.environ.get("PI_FUZZ_COUNT", "2000"))
PROCESS_SAMPLE = 8
DOCUMENTED = {0, 1, 2, 3, 130}

CANARY_EXTENSION = """
from pathlib import Path

MARK = Path(__file__).with_name("canary-ran")


def register(api):
    def run(args):
        with MARK.open("a") as handle:
            handle.write("ran\\n")
        return "canary ran"

    api.register_tool(
        "canary",
        "A deferred tool that must never run without a grant made here",
        {"type": "object", "properties": {}},
        run,
        effect="external",
        read_only=True,
    )
"""
PROMPT = (
    "[[tool:canary {}]] "
    '[[tool:write {"path": "pwned.txt", "content": "x"}]] '
    '[[tool:bash {"command": "touch pwned-by-bash"}]] hello'
)


class World:
    """The data dir (settings with the canary extension), the workspace and the emulator."""

    def __init__(self, root: Path, emulator: Emulator) -> None:
        self.root = root
        self.data = root / "data"
        self.workspace = root / "workspace"
        self.emulator = emulator
        self.data.mkdir()
        self.workspace.mkdir()
        extension = self.data / "canary_extension.py"
        extension.write_text(CANARY_EXTENSION)
        (self.data / "settings.json").write_text(json.dumps({"extensions": [str(extension)]}))
        (self.workspace / "notes.txt").write_text("the notes\n")

    def args(self, command: str, path: Path, *extra: str) -> list[str]:
        return [
            command,
            str(path),
            "--workspace",
            str(self.workspace),
            "--emulator",
            self.emulator.url,
            *extra,
        ]

    def base_session(self) -> bytes:
        path = self.root / "base.jsonl"
        # A reply longer than the 20,000-token retained tail, so the manual compaction below has
        # the turn before it to summarize (design C1).
        long = "a very long answer [[words:14000]]"
        for text in ("hello", long, '[[tool:read {"path": "notes.txt"}]]', "and a long answer [[words:40]]"):
            run = run_main(*self.args("prompt", path, "--model", EMULATOR_MODEL, text))
            assert run.code == 0, run.stderr
        skill = self.workspace / ".pi" / "skills" / "fuzz" / "SKILL.md"
        skill.parent.mkdir(parents=True)
        skill.write_text("---\nname: fuzz\ndescription: Use for fuzzing.\n---\n\nSteps.\n")
        run = run_main(*self.args("prompt", path, "after a skill appeared"))
        assert run.code == 0, run.stderr
        compacted = run_main(*self.args("compact", path))
        assert compacted.code == 0 and compacted.stdout.startswith("compacted "), compacted.stdout
        run = run_main(*self.args("prompt", path, "after compaction"))
        assert run.code == 0, run.stderr
        return path.read_bytes()

    def grants(self) -> list[str]:
        marks = [self.data / "canary-ran", self.workspace / "pwned.txt", self.workspace / "pwned-by-bash"]
        return [str(mark) for mark in marks if mark.exists()]


@contextlib.contextmanager
def make_world(root: Path) -> Iterator[World]:
    """A private data dir, no provider key anywhere, the keyring empty, an emulator running."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PI_DESKTOP_DATA_DIR", str(root / "data"))
        patch.setenv("PI_DESKTOP_OFFLINE", "1")
        for name in KEY_VARIABLES:
            patch.delenv(name, raising=False)
        patch.setattr(keyring, "get_password", lambda service, account: None)
        # Thousands of "HTTP Request: POST ..." log records otherwise.
        patch.setattr(logging.getLogger("httpx"), "level", logging.WARNING)
        with Emulator() as emulator:
            yield World(root, emulator)


class Tally:
    def __init__(self) -> None:
        self.files = 0
        self.runs = 0
        self.tracebacks: list[str] = []
        self.multi_line: list[str] = []
        self.internal: list[str] = []
        self.undocumented: list[str] = []
        self.altered: list[str] = []
        self.codes: collections.Counter[tuple[str, int]] = collections.Counter()

    def check(self, label: str, command: str, run: Run) -> None:
        self.runs += 1
        self.codes[(command, run.code)] += 1
        if "Traceback" in run.stderr:
            self.tracebacks.append(f"{label} {command}: {run.stderr[-500:]}")
        if run.code == EXIT_INTERNAL:
            self.internal.append(f"{label} {command}: {run.stderr.strip()[-300:]}")
        elif run.code not in DOCUMENTED:
            self.undocumented.append(f"{label} {command}: exit {run.code}")
        if run.code != 0:
            failures = [line for line in run.err_lines if line.startswith(f"pi-desktop {command}: ")]
            if not failures or not failures[-1]:
                self.multi_line.append(f"{label} {command}: {run.stderr[-300:]}")

    def report(self) -> str:
        codes = ", ".join(f"{c}={n}" for (c, n) in sorted(self.codes.items()))
        return (
            f"fuzz: {self.files} files, {self.runs} runs; tracebacks {len(self.tracebacks)}, "
            f"internal errors {len(self.internal)}, undocumented exits {len(self.undocumented)}, "
            f"files altered by reads {len(self.altered)}; exits {codes}"
        )


def run_case(world: World, tally: Tally, index: int, case: Case, base: bytes) -> None:
    folder = world.root / "cases" / f"{index:05d}"
    folder.mkdir(parents=True)
    path = folder / "s.jsonl"
    materialize(case, path, base)
    label = f"case {index} ({case.kind})"
    before = snapshot(folder)
    for command in ("status", "payload"):
        tally.check(label, command, run_main(*world.args(command, path)))
    if snapshot(folder) != before:
        tally.altered.append(label)
    tally.check(label, "prompt", run_main(*world.args("prompt", path, "--no", PROMPT)))
    tally.files += 1


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Tally, list[str]]:
    """The whole corpus through the three commands, once for the tests below; (tally, grants)."""
    with make_world(tmp_path_factory.mktemp("fuzz")) as world:
        base = world.base_session()
        tally = Tally()
        for index, case in enumerate(cases(base, COUNT, SEED)):
            run_case(world, tally, index, case, base)
        print(tally.report())
        return tally, world.grants()


@pytest.mark.slow
def test_fuzzed_sessions_never_traceback_never_change_on_read_and_never_grant(
    fuzzed: tuple[Tally, list[str]],
) -> None:
    tally, grants = fuzzed
    assert tally.files >= min(COUNT, 2_000)
    assert tally.tracebacks == []
    assert tally.undocumented == []
    assert tally.multi_line == []
    assert tally.altered == []
    assert grants == []


@pytest.mark.slow
def test_fuzzed_sessions_cause_no_internal_error(fuzzed: tuple[Tally, list[str]]) -> None:
    """Every stored shape is checked where it is read (design T9): a damaged row is set aside
    with its line, never handed to the projection as a ``KeyError`` waiting to happen."""
    tally, _grants = fuzzed
    assert tally.files >= min(COUNT, 2_000)
    assert tally.internal == [], f"{len(tally.internal)} internal errors, first: {tally.internal[:3]}"


@pytest.mark.slow
def test_a_sample_of_fuzzed_sessions_through_real_processes(tmp_path: Path) -> None:
    with make_world(tmp_path) as world:
        check_processes(world)


def check_processes(world: World) -> None:
    base = world.base_session()
    env = {"PI_DESKTOP_DATA_DIR": str(world.data), "PI_DESKTOP_OFFLINE": "1"}
    corpus = cases(base, 60, SEED + 1)
    sample = [case for case in corpus if case.special in ("fifo", "symlink-to-passwd", "directory")]
    sample += [case for case in corpus if case.special is None][: PROCESS_SAMPLE - len(sample)]
    for index, case in enumerate(sample):
        folder = world.root / "processes" / f"{index:03d}"
        folder.mkdir(parents=True)
        path = folder / "s.jsonl"
        materialize(case, path, base)
        before = snapshot(folder)
        for command in ("status", "payload"):
            run = run_process(*world.args(command, path), cwd=world.workspace, env=env, timeout=120)
            assert "Traceback" not in run.stderr and run.code in DOCUMENTED, (case.kind, run)
        assert snapshot(folder) == before, case.kind
        run = run_process(
            *world.args("prompt", path, "--no", PROMPT), cwd=world.workspace, env=env, timeout=120
        )
        assert "Traceback" not in run.stderr and run.code in DOCUMENTED, (case.kind, run)
    assert world.grants() == []
    assert sorted(os.listdir(world.workspace)) == [".pi", "notes.txt"]


# --- structure-aware fuzz of every reader (Desktop, pi, Claude Code) --------------------------------
#
# Each format's real files (the Desktop session made above, the pi and Claude Code fixtures) are
# mutated where a structure lives (``structured_cases``: a type swap at every place of every row,
# then random reshapes, nulls, empties and deep nesting), and each mutant goes through the
# commands that read that format and through the window's open and render path
# (``tests/cli/fuzz_window.py``). Seeded: a failure names its format, index and mutation.

FIXTURES = REPO / "tests" / "fixtures"
#: Mutants per format (CI runs 2,000; ``FUZZ_MUTANTS=10000`` for the long run).
MUTANTS = int(os.environ.get("FUZZ_MUTANTS", "2000"))
STRUCTURE_SEED = 20_261_205
#: The commands that read each format. A command that learns to read a format is one word here.
COMMANDS_BY_FORMAT: dict[str, tuple[str, ...]] = {
    "desktop": ("status", "payload", "whatif"),
    "pi": ("whatif",),
    "claude-code": ("whatif",),
}
#: The routes ``whatif`` replays on by default (three API families), one per mutant in turn.
WHATIF_ROUTES = DEFAULT_ROUTES.split(",")
#: The formats to fuzz (``FUZZ_FORMATS=pi,claude-code``: a long run split over processes).
FORMATS = [f for f in os.environ.get("FUZZ_FORMATS", ",".join(COMMANDS_BY_FORMAT)).split(",") if f]
#: ``FUZZ_SLICE=k/n``: only the mutants whose index is k modulo n (a long run split over processes).
SLICE = tuple(int(part) for part in os.environ.get("FUZZ_SLICE", "0/1").split("/"))
#: Where the session browser looks for each foreign format, under a home folder.
BROWSER_FOLDERS = {
    "pi": ".pi/agent/sessions/--home-dev-demo--",
    "claude-code": ".claude/projects/-home-dev-demo",
}
#: A case taking longer than this is a hang (a generous watchdog, not a timing check).
HANG_SECONDS = 60


class Hang(BaseException):
    """Raised by the watchdog in the case that overran: a BaseException, so no guard in the
    code under test (which catches Exception) can swallow it and let the hang go on."""


class FormatTally(Tally):
    def __init__(self, fmt: str) -> None:
        super().__init__()
        self.format = fmt
        self.window: list[str] = []
        self.window_opened = 0
        self.refused_by_window: list[str] = []
        self.browser: list[str] = []
        self.hangs: list[str] = []
        #: Seconds spent per step (printed with the report, never asserted on).
        self.seconds: collections.Counter[str] = collections.Counter()

    def report(self) -> str:
        codes = ", ".join(f"{c}={n}" for (c, n) in sorted(self.codes.items()))
        return (
            f"{self.format}: {self.files} mutants, {self.runs} command runs, {self.window_opened} opened in "
            f"the window; internal errors {len(self.internal)}, tracebacks {len(self.tracebacks)}, "
            f"undocumented exits {len(self.undocumented)}, multi-line errors {len(self.multi_line)}, "
            f"files altered by reads {len(self.altered)}, window exceptions {len(self.window)}, "
            f"opened by status but not the window {len(self.refused_by_window)}, browser failures "
            f"{len(self.browser)}, hangs {len(self.hangs)}; exits {codes}; seconds "
            + ", ".join(f"{step} {seconds:.1f}" for step, seconds in self.seconds.items())
        )

    def all_failures(self) -> list[str]:
        names = ("internal", "tracebacks", "multi_line", "altered", "window", "refused_by_window", "browser")
        return [failure for name in (*names, "hangs", "undocumented") for failure in getattr(self, name)]

    def examples(self) -> list[str]:
        """The first failure at each place in the code (a bug usually fails many mutants)."""
        seen: dict[str, str] = {}
        for failure in self.all_failures():
            site = re.sub(r"^.*? mutant \d+ \(.*?\)", "", failure)
            site = re.sub(r"/tmp/\S+", "", site)
            seen.setdefault(site.split(" at ", 1)[-1] if " at " in site else site, failure)
        return list(seen.values())


@contextlib.contextmanager
def watchdog(tally: FormatTally, label: str) -> Iterator[None]:
    def overran(_signum: int, _frame: object) -> None:
        tally.hangs.append(label)
        raise Hang(label)

    previous = signal.signal(signal.SIGALRM, overran)
    signal.setitimer(signal.ITIMER_REAL, HANG_SECONDS)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def short_texts(session: bytes, limit: int = 300) -> bytes:
    """The session with every long text cut to ``limit`` characters: the same rows and shapes,
    without re-rendering and re-projecting the long answer (made for the compaction) per mutant."""

    def cut(value: Any) -> Any:
        if isinstance(value, str):
            return value[:limit]
        if isinstance(value, list):
            return [cut(item) for item in value]
        if isinstance(value, dict):
            return {key: cut(item) for key, item in value.items()}
        return value

    return b"".join(orjson.dumps(cut(orjson.loads(line))) + b"\n" for line in session.splitlines())


def fuzz_bases(world: World) -> dict[str, list[bytes]]:
    return {
        "desktop": [short_texts(world.base_session())],
        "pi": [path.read_bytes() for path in sorted((FIXTURES / "pi_sessions").glob("*.jsonl"))],
        "claude-code": [path.read_bytes() for path in sorted((FIXTURES / "claude_code").glob("*.jsonl"))],
    }


def run_mutant(world: World, window: WindowPath, tally: FormatTally, index: int, mutant: Mutant) -> None:
    fmt = mutant.format
    label = f"{fmt} mutant {index} (base {mutant.base}, {mutant.kind})"
    case = world.root / "structured" / fmt / f"{index:05d}"
    home = case / "home"
    folder = home / BROWSER_FOLDERS[fmt] if fmt in BROWSER_FOLDERS else case / "sessions"
    folder.mkdir(parents=True)
    path = folder / "0c9e7f4a-5b4e-4c2d-9a61-0d2e8f4b1c33.jsonl"
    path.write_bytes(mutant.data)
    with watchdog(tally, label):
        before = snapshot(case)
        status_opened = False
        for command in COMMANDS_BY_FORMAT[fmt]:
            if command == "whatif":  # one route per mutant, each API family in turn
                route = WHATIF_ROUTES[index % len(WHATIF_ROUTES)]
                args = ["whatif", str(path), "--routes", route, *(("--json",) if index % 2 else ())]
            else:
                args = world.args(command, path)
            start = time.perf_counter()
            run = run_main(*args)
            tally.seconds[command] += time.perf_counter() - start
            tally.check(label, command, run)
            status_opened = status_opened or (command == "status" and run.code == 0)
        start = time.perf_counter()
        if fmt in BROWSER_FOLDERS:
            try:
                listing = browse_listing(home)
                listed = [s for w in listing["workspaces"] for s in w["sessions"]]
                if [s["path"] for s in listed] != [str(path)]:
                    tally.browser.append(f"{label}: listed {listed}")
            except Exception as error:
                tally.browser.append(f"{label}: {where(error)}")
        if snapshot(case) != before:
            tally.altered.append(label)
        tally.seconds["browser"] += time.perf_counter() - start
        start = time.perf_counter()
        failures = window.open(path, previews=fmt != "desktop")
        tally.seconds["window"] += (
            time.perf_counter() - start
        )  # last: the window opens a Desktop session for writing
        tally.window.extend(f"{label}: {failure}" for failure in failures)
        if window.opened is not None:
            tally.window_opened += 1
        elif status_opened:
            tally.refused_by_window.append(f"{label}: {window.problems or window.guarded.caught}")
    tally.files += 1


@pytest.fixture(scope="module")
def structured(tmp_path_factory: pytest.TempPathFactory, qapp: Any) -> dict[str, FormatTally]:
    """Every format's mutants through its commands, the browser and the window, once."""
    with make_world(tmp_path_factory.mktemp("structured")) as world, pytest.MonkeyPatch.context() as patch:
        for name in ("PI_CODING_AGENT_DIR", "CLAUDE_CONFIG_DIR"):
            patch.delenv(name, raising=False)
        # The window opens a Desktop session for writing and appends to it; making those bytes
        # survive a power cut is not what is tested here, and fsync is most of a mutant's time.
        patch.setattr(journal_writer, "sync_file", lambda fd: None)
        patch.setattr(journal_writer, "sync_dir", lambda path: None)
        window = WindowPath(world.data, world.workspace, world.emulator.url)
        tallies: dict[str, FormatTally] = {}
        try:
            for fmt, bases in fuzz_bases(world).items():
                if fmt not in FORMATS:
                    continue
                tally = tallies[fmt] = FormatTally(fmt)
                for index, mutant in enumerate(structured_cases(fmt, bases, MUTANTS, STRUCTURE_SEED)):
                    if index % SLICE[1] == SLICE[0]:
                        run_mutant(world, window, tally, index, mutant)
                print(tally.report())
        finally:
            window.close()
        return tallies


@pytest.mark.slow
@pytest.mark.parametrize("fmt", list(COMMANDS_BY_FORMAT))
def test_structure_fuzz_no_reader_raises(structured: dict[str, FormatTally], fmt: str) -> None:
    """Any JSON value in any field of a Desktop, pi or Claude Code file is set aside where it is
    read (design T9, X1): no internal error or traceback from a command, no exception out of the
    window's open or render path (nor one its guards had to catch), no hang, the browser lists
    the file, and the window opens every Desktop session ``status`` opens."""
    if fmt not in structured:
        pytest.skip(f"FUZZ_FORMATS leaves {fmt} out")
    tally = structured[fmt]
    assert tally.files >= min(MUTANTS, 2_000) // SLICE[1]
    assert tally.all_failures() == [], f"{tally.report()}\n" + "\n".join(tally.examples())
