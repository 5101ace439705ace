"""Child processes for the journal tests (run as a script, never collected by pytest).

Modes:
  zygote <session>   imports the journal once, then forks one writer child per ``fork`` command
                     read from stdin, so a hundred SIGKILLs cost milliseconds each instead of an
                     interpreter start each. Children print ``BEGIN``/``ACK`` lines; an ``ACK`` is
                     printed only after ``append`` returned, so it proves an acknowledgement.
  hold <session>     opens the session for writing and holds it until stdin says ``close``.
  bigwrite <session> starts one very long append so the parent can kill it in the middle.
  fsize <session>    runs appends under RLIMIT_FSIZE so the OS refuses the write (EFBIG).
  prompts <log dir>  imports the whole app once, then forks one child per ``fork <argv as JSON>``
                     command that runs the real command line (``desktop.app.main``, exactly what the
                     ``pi-desktop`` script runs) with its output in ``<log dir>/<pid>.out``; the
                     parent kills it with SIGKILL at a moment of its choosing.

Every line written to stdout goes through one ``os.write`` (atomic on a pipe), never through the
inherited ``sys.stdout`` buffer, so a killed child can never leave a half message.
"""

from __future__ import annotations

import hashlib
import os
import random
import resource
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from desktop.host.journal import (
    JournalWriter,
    LocalPreparationFailure,
    ModelSystem,
    NoteRow,
    SystemRow,
    ToolResultRow,
    UserRow,
    new_row_id,
    read_session,
)
from desktop.host.journal.rows import RowBase


def emit(*parts: object) -> None:
    os.write(1, (" ".join(str(p) for p in parts) + "\n").encode())


def payload_for(row_id: str) -> str:
    """Content derived from the id alone, so a retry rebuilds exactly the same row."""
    digest = hashlib.sha256(row_id.encode()).digest()
    size = 40 + digest[0] * 6
    if digest[1] < 4:  # about 1.5%: a large tool output, so some kills land inside a long write
        size = 200_000 + digest[2] * 100
    seed = digest.hex()
    return (seed * (size // len(seed) + 1))[:size]


def check_of(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def row_for(row_id: str) -> RowBase:
    """A deterministic row of a type picked by the id; ``check`` is an unknown field on purpose."""
    text = payload_for(row_id)
    kind = hashlib.sha256(row_id.encode()).digest()[3] % 3
    extra: dict[str, Any] = {"check": check_of(text)}
    if kind == 0:
        row: RowBase = UserRow(id=row_id, ts=1, message={"role": "user", "content": text, "timestamp": 1})
    elif kind == 1:
        message = {
            "role": "toolResult",
            "toolCallId": "call_" + row_id,
            "toolName": "bash",
            "content": [{"type": "text", "text": text}],
            "isError": False,
            "timestamp": 1,
        }
        row = ToolResultRow(id=row_id, ts=1, message=message)
    else:
        system = {
            "role": "system",
            "content": text,
            "sections": {"env": text[:20], "old": None},
            "timestamp": 1,
        }
        row = SystemRow(id=row_id, ts=1, modelSystem=ModelSystem(message=system), label="test")
    row.extra.update(extra)
    return row


def row_text(row: dict[str, Any]) -> str:
    message = row.get("message") or row.get("modelSystem", {}).get("message")
    assert isinstance(message, dict)
    content = message["content"]
    return content if isinstance(content, str) else str(content[0]["text"])


# --- zygote ----------------------------------------------------------------------------------


def writer_child(session: Path, retry: list[str], seed: int) -> None:
    writer = JournalWriter.open(session)
    if writer.read_only:
        emit("READONLY", writer.read_only_reason)
        os._exit(3)
    if retry:
        ack = writer.append([row_for(i) for i in retry])
        emit("ACK", *ack.ids)
    rng = random.Random(seed)
    while True:
        ids = [new_row_id() for _ in range(rng.randint(1, 4))]
        emit("BEGIN", *ids)
        ack = writer.append([row_for(i) for i in ids])
        emit("ACK", *ack.ids)


def serve(child: Callable[[str], None], **commands: Callable[[str], None]) -> None:
    """Answer ``fork ARG`` (``child(ARG)`` in a forked process, which ends with ``os._exit``),
    ``wait PID``, ``quit`` and ``commands`` read from stdin."""
    for line in sys.stdin:
        command, _, arg = line.strip().partition(" ")
        if command == "fork":
            pid = os.fork()
            if pid == 0:
                child(arg)
            emit("forked", pid)
        elif command == "wait":
            _, status = os.waitpid(int(arg), 0)
            emit("dead", int(arg), status)
        elif command == "quit":
            return
        elif command in commands:
            commands[command](arg)


def zygote(session: Path) -> None:
    def child(arg: str) -> None:
        spec = orjson.loads(arg)
        try:
            writer_child(session, spec["retry"], spec["seed"])
        except BaseException as exc:
            emit("CRASH", repr(exc))
        finally:
            os._exit(4)

    emit("ready")
    serve(child)


# --- hold ------------------------------------------------------------------------------------


def hold(session: Path) -> None:
    writer = JournalWriter.open(session)
    emit("ready", "read-only" if writer.read_only else "writable")
    for line in sys.stdin:
        if line.strip() == "append":
            ack = writer.append([NoteRow(level="info", text="from holder")])
            emit("ACK", *ack.ids)
        elif line.strip() == "close":
            break
    writer.close()
    emit("closed")


# --- bigwrite --------------------------------------------------------------------------------


def bigwrite(session: Path) -> None:
    """Acknowledge a small row, then start one very long write for the parent to kill mid-way."""
    writer = JournalWriter.open(session)
    ack = writer.append([NoteRow(level="info", text="before the long write")])
    emit("ACK", *ack.ids)
    huge = ToolResultRow(
        message={
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "bash",
            "content": [{"type": "text", "text": "y" * (96 << 20)}],
            "isError": False,
            "timestamp": 1,
        }
    )
    emit("BIG", huge.id)
    writer.append([huge])
    emit("ACK", huge.id)


# --- fsize -----------------------------------------------------------------------------------


def fsize(session: Path) -> None:
    """Make the OS refuse writes with EFBIG, check the failure, lift the limit, retry."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # else the kernel kills us instead of failing write
    report: dict[str, Any] = {}
    writer = JournalWriter.create(session, cwd="/project", app_version="test")
    first = UserRow(message={"role": "user", "content": "fits", "timestamp": 1})
    writer.append([first])
    size = session.stat().st_size
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size + 300, hard))

    small = NoteRow(level="info", text="small enough to fit under the limit")
    big = UserRow(message={"role": "user", "content": "x" * 5000, "timestamp": 1})
    failures: list[dict[str, Any] | None] = []
    for batch in ([big], [small, big]):
        try:
            writer.append(batch)
            failures.append(None)
        except LocalPreparationFailure as exc:
            failures.append(
                {
                    "kind": exc.kind,
                    "message": exc.user_message,
                    "row_ids": list(exc.row_ids),
                    "errno": getattr(exc.cause, "errno", None),
                    "size_after": session.stat().st_size,
                }
            )
    report["size_before"] = size
    report["failures"] = failures
    held = {row["id"] for row in writer.rows}
    report["held_after_failure"] = [small.id in held, big.id in held]

    resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    retry = writer.append([small, big])
    again = writer.append([small, big])
    report["retry_written"] = list(retry.written)
    report["again_written"] = list(again.written)
    report["ids"] = {"first": first.id, "small": small.id, "big": big.id}
    writer.close()
    log = read_session(session)
    report["reread_ids"] = [row["id"] for row in log.rows]
    report["diagnostics"] = [str(d) for d in log.diagnostics]
    emit(orjson.dumps(report).decode())


# --- prompts ---------------------------------------------------------------------------------


def prompts(log_dir: Path) -> None:
    """Fork ``pi-desktop`` command lines on demand; the interpreter start and imports are paid once."""
    # What ``prompt`` loads on its way, so each child starts where the user's process would be
    # after its imports (no threads are started here: fork copies only this one).
    import desktop.cli._session
    import desktop.cli.compact
    import desktop.cli.prompt
    import desktop.host.journal.rows
    import desktop.session.assembly
    import desktop.session.dispatch  # noqa: F401
    from desktop.app import main
    from desktop.pi.catalog import active_catalog

    active_catalog()

    def child(arg: str) -> None:
        code = 4
        try:
            out = os.open(log_dir / f"{os.getpid()}.out", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.dup2(out, 1)
            os.dup2(out, 2)
            code = main(orjson.loads(arg))
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)

    def warm(arg: str) -> None:
        # One real command in this process first (on a scratch session), so the lazy imports
        # and caches are loaded once here instead of in every child.
        saved = os.dup(1), os.dup(2)
        out = os.open(log_dir / "warm.out", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(out, 1)
        os.dup2(out, 2)
        try:
            code = main(orjson.loads(arg))
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
        emit("warmed", code, threading.active_count())

    emit("ready")
    serve(child, warm=warm)


if __name__ == "__main__":
    mode, target = sys.argv[1], Path(sys.argv[2])
    {"zygote": zygote, "hold": hold, "fsize": fsize, "bigwrite": bigwrite, "prompts": prompts}[mode](target)
