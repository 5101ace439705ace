"""``bash``: one shell command in the workspace, in its own process group.

The whole group is killed on timeout or cancel (SIGTERM, then SIGKILL after a grace
period), so a command that forks a server cannot outlive its tool call. Output is merged,
kept in memory up to a bound, and spilled to a file once it passes the output limit; the
model sees the tail.

``shutil`` and ``tempfile`` are imported when a command runs: the catalog imports this module
for its declaration, and a command that runs no tool (``status``) should not load them (the status budget).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from desktop.host.private_files import make_private_dirs
from desktop.host.tools.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, format_size, truncate_tail
from desktop.host.tools.types import JsonObject, ToolContext, ToolFailure, ToolOutcome, ToolSpec

if TYPE_CHECKING:
    import subprocess

NAME = "bash"
DESCRIPTION = (
    "Execute a bash command in the current working directory. Returns stdout and stderr. Output is "
    f"truncated to last {DEFAULT_MAX_LINES} lines or {DEFAULT_MAX_BYTES // 1024}KB (whichever is hit first). "
    "If truncated, full output is saved to a temp file. Optionally provide a timeout in seconds."
)
PARAMETERS: JsonObject = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "description": "Bash command to execute"},
        "timeout": {"type": "number", "description": "Timeout in seconds (optional, no default timeout)"},
    },
    "required": ["command"],
}

KILL_GRACE_SECONDS = 2.0
_MEMORY_LIMIT = 4 * DEFAULT_MAX_BYTES


def shell_argv(command: str) -> list[str]:
    # Lazy: the status budget.
    import shutil

    shell = shutil.which("bash") or ("/bin/sh" if sys.platform != "win32" else None)
    if shell is None:
        raise ToolFailure("No bash found on PATH; install Git Bash or WSL to run commands on Windows.")
    return [shell, "-c", command]


class _Output:
    """Collects output: a bounded in-memory tail plus a spill file once the limit is passed."""

    def __init__(self, temp_dir: Path | None) -> None:
        self._chunks: list[bytes] = []
        self._size = 0
        self.total = 0
        self._temp_dir = temp_dir
        self._spill: IO[bytes] | None = None
        self.spill_path: Path | None = None
        self.lock = threading.Lock()

    def append(self, data: bytes) -> None:
        with self.lock:
            self.total += len(data)
            if self._spill is None and self.total > DEFAULT_MAX_BYTES:
                # Lazy: the status budget.
                import tempfile

                directory = self._temp_dir or Path(tempfile.gettempdir())
                make_private_dirs(directory)  # design X22; the spill file itself is 0600
                handle = tempfile.NamedTemporaryFile(  # noqa: SIM115 - kept open while output streams in
                    prefix="pi-bash-", suffix=".log", dir=directory, delete=False
                )
                handle.write(b"".join(self._chunks))
                self._spill = handle
                self.spill_path = Path(handle.name)
            if self._spill is not None:
                self._spill.write(data)
            self._chunks.append(data)
            self._size += len(data)
            while self._size > _MEMORY_LIMIT and len(self._chunks) > 1:
                self._size -= len(self._chunks.pop(0))

    def close(self) -> None:
        with self.lock:
            if self._spill is not None:
                self._spill.close()

    def text(self) -> str:
        with self.lock:
            return b"".join(self._chunks).decode("utf-8", errors="replace")


def _pump(stream: IO[bytes], sink: _Output) -> None:
    while True:
        chunk = stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536)
        if not chunk:
            return
        sink.append(chunk)


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Terminate the command's whole process group; escalate to SIGKILL after a grace period."""
    # Lazy: the status budget.
    import signal
    import subprocess

    if sys.platform == "win32":
        if proc.poll() is None:
            subprocess.run(["taskkill", "/F", "/T", "/PID", str(proc.pid)], capture_output=True, check=False)
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + KILL_GRACE_SECONDS
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        time.sleep(0.02)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


def run(args: JsonObject, ctx: ToolContext) -> ToolOutcome:
    # Lazy: the status budget.
    import subprocess

    command = str(args["command"])
    timeout_arg = args.get("timeout")
    timeout = float(timeout_arg) if timeout_arg else None
    if not ctx.workspace.is_dir():
        raise ToolFailure(f"Working directory does not exist: {ctx.workspace}\nCannot execute bash commands.")
    extra: dict[str, Any] = (
        {"creationflags": getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)}
        if sys.platform == "win32"
        else {"start_new_session": True}
    )
    proc = subprocess.Popen(
        shell_argv(command),
        cwd=ctx.workspace,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=dict(ctx.env) if ctx.env is not None else None,
        **extra,
    )
    assert proc.stdout is not None
    sink = _Output(ctx.temp_dir)
    reader = threading.Thread(target=_pump, args=(proc.stdout, sink), daemon=True)
    reader.start()
    started = time.monotonic()
    status: str | None = None
    while proc.poll() is None:
        if ctx.cancel.wait(0.02):
            status = "Command aborted"
        elif timeout is not None and timeout > 0 and time.monotonic() - started > timeout:
            status = f"Command timed out after {timeout:g} seconds"
        if status:
            kill_group(proc)
            break
    if status is None and sys.platform != "win32":
        # The shell exited; a background child still holding the pipe must not hang the reader.
        try:
            os.killpg(proc.pid, 0)
            reader.join(0.2)
            if reader.is_alive():
                kill_group(proc)
        except ProcessLookupError:
            pass
    proc.wait()
    reader.join(5)
    proc.stdout.close()
    sink.close()
    text, details = _format(sink)
    if status:
        return ToolOutcome.error(f"{text}\n\n{status}" if text else status, details=details)
    if proc.returncode != 0:
        code = proc.returncode
        label = f"Command exited with code {code}" if code > 0 else f"Command killed by signal {-code}"
        return ToolOutcome.error(f"{text or '(no output)'}\n\n{label}", details=details)
    return ToolOutcome.text(text or "(no output)", details=details)


def _format(sink: _Output) -> tuple[str, JsonObject | None]:
    cut = truncate_tail(sink.text())
    if not cut.truncated and sink.spill_path is None:
        return cut.content, None
    full = str(sink.spill_path) if sink.spill_path else None
    details: JsonObject = {"truncation": cut.details(), "fullOutputPath": full}
    end = cut.total_lines
    start = end - cut.output_lines + 1
    text = cut.content
    if cut.last_line_partial:
        text += f"\n\n[Showing last {format_size(cut.output_bytes)} of line {end}. Full output: {full}]"
    elif cut.truncated_by == "lines":
        text += f"\n\n[Showing lines {start}-{end} of {cut.total_lines}. Full output: {full}]"
    else:
        text += f"\n\n[Showing lines {start}-{end} of {cut.total_lines} ({format_size(DEFAULT_MAX_BYTES)} limit). Full output: {full}]"
    return text, details


TOOL_SPEC = ToolSpec(NAME, DESCRIPTION, PARAMETERS, effect="execute", runner=run)
