"""User-configured pre-tool hooks: shell commands that see each call and may block it.

A hook receives the call as JSON on stdin::

    {"hook_event_name": "PreToolUse", "tool_name": ..., "tool_input": {...},
     "tool_call_id": ..., "cwd": ...}

It blocks the call by exiting non-zero (stderr, else stdout, is the message) or by printing
``{"decision": "block", "reason": "..."}``; ``{"decision": "allow"}`` or an empty output
lets it through. A hook that cannot start or times out blocks too: a safety check that
did not run must not be read as approval. Hooks run before any approval prompt and
before the tool, so a block never leaves a side effect of the tool behind.

A hook from a settings file runs in that file's folder, so ``./check.sh`` is the script beside
the settings, never one the workspace ships (design A11); the workspace is ``cwd`` on stdin.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import NamedTuple

import orjson

from desktop.host.settings import HookCommand, HookMatcher
from desktop.host.tools.bash import shell_argv
from desktop.host.tools.types import JsonObject


class HookVerdict(NamedTuple):
    """Whether a ``PreToolUse`` hook blocked the call, and its message."""

    blocked: bool
    message: str = ""
    hook: str = ""


class HookRunner:
    """The session's hooks, each with the folder it runs in (its settings file's)."""

    def __init__(self, hooks: list[tuple[HookMatcher, HookCommand, Path]], workspace: Path) -> None:
        self._hooks = list(hooks)
        self._workspace = workspace

    def check(self, tool_name: str, tool_call_id: str, arguments: JsonObject) -> HookVerdict:
        payload = orjson.dumps(
            {
                "hook_event_name": "PreToolUse",
                "tool_name": tool_name,
                "tool_input": arguments,
                "tool_call_id": tool_call_id,
                "cwd": str(self._workspace),
            }
        )
        for matcher, hook, folder in self._hooks:
            if matcher.matcher and not re.fullmatch(matcher.matcher, tool_name):
                continue
            verdict = self._run(hook.command, hook.timeout, payload, folder)
            if verdict.blocked:
                return verdict
        return HookVerdict(False)

    def _run(self, command: str, timeout: float, payload: bytes, folder: Path) -> HookVerdict:
        # Lazy: the status budget.
        import subprocess

        try:
            done = subprocess.run(
                shell_argv(command),
                input=payload,
                capture_output=True,
                cwd=folder,
                timeout=timeout,
                check=False,
                start_new_session=sys.platform != "win32",
            )
        except subprocess.TimeoutExpired:
            return HookVerdict(True, f"hook timed out after {timeout:g}s, so the call was blocked", command)
        except OSError as exc:
            return HookVerdict(True, f"hook could not start ({exc}), so the call was blocked", command)
        stdout = done.stdout.decode("utf-8", errors="replace").strip()
        stderr = done.stderr.decode("utf-8", errors="replace").strip()
        if done.returncode != 0:
            detail = stderr or stdout or f"exit code {done.returncode}"
            return HookVerdict(True, detail, command)
        if stdout.startswith("{"):
            try:
                answer = orjson.loads(stdout)
            except orjson.JSONDecodeError:
                return HookVerdict(False)
            if isinstance(answer, dict) and answer.get("decision") in ("block", "deny"):
                reason = answer.get("reason")
                return HookVerdict(True, str(reason) if reason else "blocked by hook", command)
        return HookVerdict(False)
