"""First request after open (design P7): what a resumed session's first request costs, against
pi-ai's first call in a fresh Node process on the same history.

A session of N messages (``projection_bench``'s tool-heavy transcript, one per API) is written to
a real journal; pi-ai gets the same messages as its ``Context`` in a JSON file. Every figure is
a fresh process, as a user meets it, all interleaved round by round:

- ``payload``: ``pi-desktop payload SESSION --model ROUTE --message TEXT``, the process CPU
  from start to exit (start-up, reading the file, the request, writing the body);
- ``request``: in a fresh process, the journal opened as ``chat`` opens it (``JournalWriter.open``)
  and the runtime's first ``next_request(draft)`` with its body bytes, CPU of that call only;
- ``turn``: the same open, then ``run_turn(TEXT)``: the user row journalled, the request built
  and encoded, CPU from the call to the bytes the dispatcher would send (the first turn is
  counted; nothing warms it);
- ``payload unchecked``: the same ``payload`` process with the reader's row checks (the value
  check and the row schema, design T9) replaced by ones that pass every row: not a path any user
  takes, but what those checks cost, which pi-ai's first call (handed a context it does not check)
  does not pay;
- the anchor, ``scripts/oracle/first_call.mjs``: pi-ai 1.0.3 in a fresh Node process, CPU from
  process start to the body reaching its (capturing) fetch, module load and reading the context
  file included (``node process``), and of the ``streamSimple`` call alone (``node call``).

Ratios: ``payload`` and ``payload unchecked`` over ``node process``; ``request`` and ``turn`` over ``node call``. Target:
<= 1.0 at 10,000 and 50,000 messages on anthropic-messages, openai-responses and
openai-completions. Needs Node and pi-ai's ``node_modules`` in ``--oracle`` (default
``scripts/oracle``; see its README).

Run: ``PYTHONPATH=. python benchmarks/first_request_bench.py [--sizes 10000,50000] [--rounds 3]
[--apis anthropic-messages,openai-responses,openai-completions] [--oracle DIR]``.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import orjson
from _bench import child_cpu_ms, interleave, load_average, min_median, ratio, table
from projection_bench import BENCH_KEY, ROOT, ROUTES, SESSION_ID, _catalog_model, _options, transcript

DRAFT = "Now run the tests."
#: ``payload`` with the reader's row checks passing every row (what the checks cost).
UNCHECKED = (
    "import desktop.host.journal.reader as reader\n"
    "reader.value_problem = lambda raw, value: None\n"
    "reader.row_problem = lambda row: None\n"
    "from desktop.app import main\n"
    "raise SystemExit(main())"
)
DEFAULT_APIS = "anthropic-messages,openai-responses,openai-completions"


def _write_session(folder: Path, api: str, size: int) -> tuple[Path, Path]:
    """The journal (the history without its last user message, which the turn brings) and
    pi-ai's case file (the whole history, that message included)."""
    from turn_bench import _identity, _row

    from desktop.host.journal import JournalWriter

    provider, model_id, pi_options, env = ROUTES[api]
    model = _catalog_model(provider, model_id)
    messages = transcript(model, size)
    messages[-1] = {**messages[-1], "content": DRAFT}  # type: ignore[typeddict-item]
    session = folder / f"{api}-{size}.jsonl"
    writer = JournalWriter.create(session, cwd=folder, app_version="bench")
    rows = [_row(m, _identity(model)) for m in messages[:-1]]
    for start in range(0, len(rows), 2000):
        writer.append(rows[start : start + 2000])
    writer.close()
    case = folder / f"{api}-{size}.json"
    options = {"apiKey": BENCH_KEY, "sessionId": SESSION_ID, **pi_options}
    case.write_bytes(
        orjson.dumps({"model": model, "context": {"messages": messages}, "options": options, "env": env})
    )
    return session, case


def _child(mode: str, session: str, api: str) -> None:
    """One fresh process: open the journal, then the first request or the first turn."""
    from turn_bench import _Answer, _identity, _Prompt, _Tools

    from desktop.host.journal import JournalWriter
    from desktop.host.journal.rows import new_row_id
    from desktop.session.runtime import SessionRoute, SessionRuntime
    from desktop.session.state import effective_state

    provider, model_id, pi_options, env = ROUTES[api]
    model = _catalog_model(provider, model_id)
    from desktop.host.journal.lines import keeping_decoded

    with keeping_decoded():  # as ``payload`` and ``chat`` open their session
        writer = JournalWriter.open(session, read_only=mode == "request")
    runtime = SessionRuntime(
        writer,
        SessionRoute(model, _identity(model), _options(pi_options, env)),
        _Answer(model),
        _Tools([]),
        _Prompt({}),
        new_id=new_row_id,
    )
    # The session's own state is the desired one: no system update is owed (as when nothing
    # changed since the session was last used).
    state = effective_state(list(m for m in runtime.view().messages if m["role"] == "system"))
    runtime.tools = _Tools(state.tools)
    runtime.prompt = _Prompt(state.sections)
    if mode == "request":
        start = time.thread_time()
        body = runtime.next_request(draft=DRAFT).body_bytes
        cpu = time.thread_time() - start
    else:
        answer = runtime.dispatcher
        assert isinstance(answer, _Answer)
        start = time.thread_time()  # what ``_Answer`` reads when the request arrives
        runtime.run_turn(DRAFT)
        assert answer.prepared is not None
        cpu = answer.prepared - start + answer.encode
        body = b""
    print(json.dumps({"ms": cpu * 1000, "length": len(body)}))
    writer.close()


def _measure(
    api: str, session: Path, case: Path, oracle: Path, node: str, env: dict[str, str], rounds: int
) -> tuple[dict[str, list[float]], dict[str, int]]:
    """The four figures of one session, interleaved, and the body length each side built."""
    provider, model_id, _pi_options, _env = ROUTES[api]
    python = sys.executable
    node_call: list[float] = []
    seen: dict[str, int] = {}
    # The script resolves pi-ai from its own folder: a copy runs inside the oracle folder.
    script = ROOT / "scripts" / "oracle" / "first_call.mjs"
    target = oracle / script.name
    if not target.exists():
        shutil.copy(script, target)

    def node_process() -> float:
        _cpu, _wall, out = child_cpu_ms([node, str(target), str(case)], cwd=str(oracle))
        result = json.loads(out)
        node_call.append(result["buildCpuMs"])
        seen["node"] = result["length"]
        return float(result["cpuMs"])

    def payload(checked: bool = True) -> float:
        command = ["-m", "desktop"] if checked else ["-c", UNCHECKED]
        argv = [python, *command, "payload", str(session), "--model", f"{provider}/{model_id}"]
        cpu, _wall, out = child_cpu_ms([*argv, "--message", DRAFT], env=env)
        seen["payload" if checked else "unchecked"] = len(out) - 1  # the newline after the body
        return cpu

    def child(mode: str) -> float:
        path = session
        if mode == "turn":  # the turn appends rows: it runs on a copy, each time the same file
            path = session.with_suffix(".turn.jsonl")
            shutil.copyfile(session, path)
        _cpu, _wall, out = child_cpu_ms([python, __file__, "--child", mode, str(path), api], env=env)
        result = json.loads(out)
        if mode == "request":
            seen["request"] = result["length"]
        return float(result["ms"])

    times = interleave(
        {
            "node process": node_process,
            "payload": payload,
            "payload unchecked": lambda: payload(checked=False),
            "request": lambda: child("request"),
            "turn": lambda: child("turn"),
        },
        rounds,
    )
    times["node call"] = node_call
    return times, seen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000,50000")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--apis", default=DEFAULT_APIS)
    parser.add_argument(
        "--oracle", default=str(ROOT / "scripts" / "oracle"), help="folder with pi-ai's node_modules"
    )
    parser.add_argument("--child", nargs=3, metavar=("MODE", "SESSION", "API"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(*args.child)
        return
    node = shutil.which("node")
    oracle = Path(args.oracle)
    if node is None or not (oracle / "node_modules" / "@earendil-works" / "pi-ai").exists():
        raise SystemExit(f"needs node and pi-ai in {oracle}/node_modules (cd scripts/oracle && npm install)")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PI_DESKTOP_DATA_DIR": ""}
    # An installed app has its modules' bytecode; a checkout compiles them on every start
    # (always, under PYTHONDONTWRITEBYTECODE): the measured processes read it as a user's do.
    compileall.compile_dir(str(ROOT / "desktop"), quiet=1)
    print(f"first request after open, {args.rounds} rounds, {load_average()} at the start")
    rows: list[list[Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        env["PI_DESKTOP_DATA_DIR"] = str(Path(tmp) / "data")
        for api in args.apis.split(","):
            for size in (int(s) for s in args.sizes.split(",")):
                session, case = _write_session(Path(tmp), api, size)
                times, seen = _measure(api, session, case, oracle, node, env, args.rounds)
                for name, anchor in (
                    ("payload", "node process"),
                    ("payload unchecked", "node process"),
                    ("request", "node call"),
                    ("turn", "node call"),
                ):
                    low, mid = min_median(times[name])
                    a_low, a_mid = min_median(times[anchor])
                    r_low, r_mid = ratio(times[name], times[anchor])
                    rows.append(
                        [
                            api,
                            size,
                            name,
                            f"{low:.0f} / {mid:.0f}",
                            anchor,
                            f"{a_low:.0f} / {a_mid:.0f}",
                            f"{r_low:.2f} / {r_mid:.2f}",
                        ]
                    )
                print(f"  {api} {size}: body bytes {seen} ({load_average()})", flush=True)
                session.unlink()
                session.with_suffix(".turn.jsonl").unlink(missing_ok=True)
                case.unlink()
    print(
        table(
            [
                "api",
                "messages",
                "ours",
                "CPU ms min / median",
                "anchor",
                "anchor ms min / median",
                "ratio min / median",
            ],
            rows,
        )
    )
    print(f"{load_average()} at the end; target: every ratio <= 1.0")


if __name__ == "__main__":
    main()
