"""Host execution: the last two stages of the gate (hooks, then mode/approval/confinement).

The session's activation check runs first (``desktop.session.gate``); everything here
happens after it, in this order, and every refusal returns before the tool body runs:

1. argument preparation and validation against the tool's JSON schema;
2. user pre-tool hooks (may block with a message);
3. the permission mode's verdict for the tool's effect (deny ends here);
4. workspace confinement of the file tools' path arguments;
5. approval through the permission bridge when the mode asks;
6. the tool body; expected failures become error results, never exceptions.

Whatever comes back, refusals included, has every credential value the app holds replaced by
``<redacted:NAME>`` before anyone journals, shows or sends it (design A9), and commands run
without the provider credential variables unless the settings allow them.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from desktop.host.accounts import credential_env_names, known_secrets
from desktop.host.permissions import (
    PermissionBridge,
    PermissionMode,
    PermissionRequest,
    decide,
)
from desktop.host.private_files import create_private
from desktop.host.redaction import MIN_SECRET_LENGTH, redact_value
from desktop.host.tools.hooks import HookRunner
from desktop.host.tools.types import JsonObject, SkillIndex, ToolContext, ToolFailure, ToolOutcome, ToolSpec
from desktop.host.tools.workspace import WorkspaceEscape, confine


class ToolCallRequest(NamedTuple):
    """A model's tool call as the gate sees it (pi-ai ``ToolCall`` id/name/arguments)."""

    id: str
    name: str
    arguments: JsonObject

    @classmethod
    def from_block(cls, block: JsonObject) -> ToolCallRequest:
        args = block.get("arguments")
        return cls(
            str(block.get("id", "")), str(block.get("name", "")), args if isinstance(args, dict) else {}
        )


def refusal(reason: str, *, stage: str) -> ToolOutcome:
    """An error result whose text states why the call did not run."""
    return ToolOutcome.error(reason, details={"refused": stage})


def _summary(spec: ToolSpec, args: JsonObject) -> str:
    if spec.name == "bash":
        return f"Run command: {args.get('command', '')}"
    if spec.name in ("write", "edit"):
        return f"{spec.name.capitalize()} file: {args.get('path', '')}"
    return f"Call {spec.name} with {orjson.dumps(args).decode()[:400]}"


class HostExecutor:
    """Runs the model's tool calls through the policy, the hooks and the user's approval."""

    def __init__(
        self,
        workspace: Path,
        bridge: PermissionBridge,
        mode: PermissionMode = PermissionMode.ASK,
        skills: SkillIndex | None = None,
        temp_dir: Path | None = None,
        inherit_credentials: bool = False,
    ) -> None:
        self.workspace = Path(workspace).absolute()
        self.bridge = bridge
        self.mode = mode
        self.hooks: HookRunner | None = None  # armed by ``SessionTools.start``
        self.skills = skills
        self.temp_dir = temp_dir
        self.remembered: set[str] = set()
        #: Environment variables that hold provider credentials (kept from commands unless inherited).
        self.credential_env = credential_env_names()
        #: Settings ``tools.bash.inheritCredentials``.
        self.inherit_credentials = inherit_credentials
        #: Every credential value the app holds, by name (``accounts.known_secrets``).
        self.secrets: Callable[[], Mapping[str, str]] = known_secrets

    def command_env(self) -> dict[str, str] | None:
        """The environment a command runs with: the process's, minus credential variables."""
        if self.inherit_credentials:
            return None
        fold = str.upper if sys.platform == "win32" else str
        hidden = {fold(name) for name in self.credential_env}
        return {name: value for name, value in os.environ.items() if fold(name) not in hidden}

    def run(
        self,
        spec: ToolSpec,
        call: ToolCallRequest,
        *,
        deferred_tools: tuple[ToolSpec, ...] = (),
        cancel: threading.Event | None = None,
    ) -> ToolOutcome:
        outcome = self._run(spec, call, deferred_tools=deferred_tools, cancel=cancel)
        return self.redact(outcome)

    def redact(self, outcome: ToolOutcome) -> ToolOutcome:
        """``outcome`` with every known credential value named instead of shown (design A9)."""
        secrets = {name: value for name, value in self.secrets().items() if len(value) >= MIN_SECRET_LENGTH}
        if not secrets:
            return outcome
        details = outcome.details
        spill = details.get("fullOutputPath") if isinstance(details, dict) else None
        if isinstance(spill, str):
            _redact_file(Path(spill), secrets)
        content = tuple(redact_value(dict(block), secrets) for block in outcome.content)
        return outcome._replace(
            content=content,  # type: ignore[arg-type]
            details=redact_value(details, secrets) if details is not None else None,  # type: ignore[arg-type]
        )

    def _run(
        self,
        spec: ToolSpec,
        call: ToolCallRequest,
        *,
        deferred_tools: tuple[ToolSpec, ...],
        cancel: threading.Event | None,
    ) -> ToolOutcome:
        args = dict(call.arguments)
        if spec.prepare is not None:
            args = spec.prepare(args)
        problem = _validate(spec, args)
        if problem:
            return refusal(f"Invalid arguments for {spec.name}: {problem}", stage="arguments")
        if self.hooks is not None:
            verdict = self.hooks.check(spec.name, call.id, args)
            if verdict.blocked:
                return refusal(
                    f"Blocked by a pre-tool hook ({verdict.hook}): {verdict.message}", stage="hook"
                )
        decision, why = decide(self.mode, spec.effect, read_only_tool=spec.read_only)
        if decision == "deny":
            return refusal(f"Refused by permission mode: {why}.", stage="mode")
        run_args = dict(args)
        for key in spec.path_args:
            raw = run_args.get(key)
            if raw is None and spec.default_path is not None:
                raw = spec.default_path
            if raw is None:
                continue
            try:
                run_args[key] = str(confine(str(raw), self.workspace))
            except WorkspaceEscape as exc:
                return refusal(f"Refused: {exc}.", stage="workspace")
        if decision == "ask" and spec.name not in self.remembered:
            answer = self.bridge.request_permission(
                PermissionRequest(call.id, spec.name, spec.effect, args, _summary(spec, args), self.mode)
            )
            if not answer.allowed:
                detail = f": {answer.reason}" if answer.reason else ""
                return refusal(f"Refused: the user did not approve {spec.name}{detail}.", stage="approval")
            if answer.remember_for_session:
                self.remembered.add(spec.name)
        ctx = ToolContext(
            workspace=self.workspace,
            cancel=cancel or threading.Event(),
            temp_dir=self.temp_dir,
            deferred_tools=deferred_tools,
            skills=self.skills,
            env=self.command_env(),
        )
        try:
            return spec.runner(run_args, ctx)
        except ToolFailure as exc:
            return ToolOutcome.error(str(exc))
        except OSError as exc:
            return ToolOutcome.error(
                f"{spec.name} failed: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": ")
            )
        except Exception as exc:  # a tool bug must not take the turn down
            return ToolOutcome.error(f"{spec.name} failed unexpectedly: {type(exc).__name__}: {exc}")


def _validate(spec: ToolSpec, args: JsonObject) -> str | None:
    # Lazy: the status budget.
    import jsonschema

    try:
        validator_cls: Any = jsonschema.validators.validator_for(
            spec.parameters, default=jsonschema.Draft202012Validator
        )
        validator = validator_cls(spec.parameters)
        errors = sorted(validator.iter_errors(args), key=lambda e: list(e.absolute_path))
    except jsonschema.SchemaError:
        return None
    if not errors:
        return None
    first = errors[0]
    where = "/".join(str(part) for part in first.absolute_path) or "(root)"
    return f"{where}: {first.message}"


def _redact_file(path: Path, secrets: Mapping[str, str]) -> None:
    """Rewrite a spilled output file with the known values named, streaming with an overlap so a
    value split across two reads is still found; replaced atomically."""
    values = [(f"<redacted:{name}>".encode(), value.encode()) for name, value in secrets.items()]
    values.sort(key=lambda pair: len(pair[1]), reverse=True)
    keep = max(len(value) for _, value in values) - 1

    temp = path.with_name(path.name + ".redacting")
    temp.unlink(missing_ok=True)
    try:
        with path.open("rb") as source, os.fdopen(create_private(temp), "wb") as target:
            carry = b""
            while chunk := source.read(1 << 20):
                data = carry + chunk
                for label, value in values:
                    data = data.replace(value, label)
                cut = max(0, len(data) - keep)
                target.write(data[:cut])
                carry = data[cut:]
            for label, value in values:
                carry = carry.replace(value, label)
            target.write(carry)
        os.replace(temp, path)
    except OSError:
        temp.unlink(missing_ok=True)
        raise
