"""What a session may run besides its core tools: MCP servers, hooks and extensions, and whose
word each rests on (design A11).

Two settings files define them. The user's own (``<data dir>/settings.json``) is the user's
word. A repository's (``<workspace root>/.pi/settings.json``) is not: opening a folder someone
else wrote must never start their programs, so each project-level definition runs only after the
user allowed that exact command for that repository (asked once, as editors ask about workspace
trust), and the consent, kept in ``<data dir>/trust.json``, is keyed on the repository and the
SHA-256 of the definition, so a changed command asks again. A project file may define servers,
hooks and extensions only: the permission mode and the tool settings stay the user's.

Relative paths resolve against the folder of the settings file that names them, never the
current folder: an MCP server runs in that folder (unless its ``cwd`` says otherwise, itself
resolved there), a hook runs there, and an extension's path is read from there. So the
documented ``"args": ["server.py"]`` runs the ``server.py`` beside the user's settings, not one a
repository ships.

Looking (``status``, ``payload``, opening a session read-only) starts nothing: the definitions are
listed with why they are not running.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any, Literal, NamedTuple

import msgspec
import orjson

from desktop.host.settings import (
    HookCommand,
    HookMatcher,
    McpServerConfig,
    Settings,
    SettingsError,
    SettingsValueError,
    _read_raw,
)

Kind = Literal["mcp", "hook", "extension"]
Source = Literal["user", "project"]
PROJECT_SETTINGS = Path(".pi") / "settings.json"
#: The keys a repository's settings file may set; every other key there is ignored.
PROJECT_KEYS = ("mcpServers", "hooks", "extensions")
#: A repository's settings file larger than this is not read (it is untrusted input).
MAX_PROJECT_SETTINGS = 1_000_000


class Definition(NamedTuple):
    """One thing the session could run, resolved against the settings file that names it."""

    kind: Kind
    name: str
    command: str
    """The exact command, as the consent question shows it (program, arguments, folder)."""
    source: Source
    settings: Path
    digest: str
    """SHA-256 of the definition and its settings file: what a consent is given for."""


class Definitions(NamedTuple):
    """The resolved servers, hooks and extensions of one session, and their definitions."""

    servers: dict[str, tuple[McpServerConfig, Definition]]
    hooks: list[tuple[HookMatcher, HookCommand, Definition]]
    extensions: list[tuple[Path, Definition]]
    problems: list[str]

    def all(self) -> list[Definition]:
        return [
            *(d for _c, d in self.servers.values()),
            *(d for _m, _h, d in self.hooks),
            *(d for _p, d in self.extensions),
        ]


def _digest(kind: Kind, name: str, definition: Any, settings: Path) -> str:
    canonical = orjson.dumps(
        {"kind": kind, "name": name, "definition": definition, "settings": str(settings)},
        option=orjson.OPT_SORT_KEYS,
    )
    return hashlib.sha256(canonical).hexdigest()


def _program(command: str, base: Path) -> str:
    """A program named by a path (``./server``, ``bin/server``) resolves in ``base``; a bare
    name is looked up on ``PATH`` as before."""
    expanded = os.path.expanduser(command)
    if os.path.isabs(expanded) or not any(sep in expanded for sep in ("/", os.sep)):
        return expanded
    return str(base / expanded)


def resolve_server(config: McpServerConfig, base: Path) -> McpServerConfig:
    """``config`` with its program and folder made absolute against ``base`` (design A11)."""
    cwd = base if config.cwd is None else base / os.path.expanduser(config.cwd)
    return msgspec.structs.replace(config, command=_program(config.command, base), cwd=str(cwd))


def _collect(settings: Settings, path: Path, source: Source, into: Definitions) -> None:
    base = path.parent
    for name, config in sorted(settings.mcpServers.items()):
        if config.disabled:
            continue
        if name in into.servers:
            into.problems.append(
                f"{path}: MCP server {name!r} is also defined in your settings; that one is used"
            )
            continue
        resolved = resolve_server(config, base)
        shown = " ".join([resolved.command, *resolved.args]) + f"  (in {resolved.cwd})"
        raw = {"command": config.command, "args": config.args, "env": config.env, "cwd": config.cwd}
        into.servers[name] = (
            resolved,
            Definition("mcp", name, shown, source, path, _digest("mcp", name, raw, path)),
        )
    for matcher in settings.hooks.PreToolUse:
        for hook in matcher.hooks:
            shown = f"{hook.command}  (in {base})"
            digest = _digest("hook", matcher.matcher, hook.command, path)
            into.hooks.append(
                (matcher, hook, Definition("hook", matcher.matcher, shown, source, path, digest))
            )
    for entry in settings.extensions:
        expanded = Path(os.path.expanduser(entry))
        target = expanded if expanded.is_absolute() else base / expanded
        definition = Definition(
            "extension",
            entry,
            f"python extension {target}",
            source,
            path,
            _digest("extension", entry, str(target), path),
        )
        into.extensions.append((target, definition))


def project_settings(root: Path) -> Path:
    return root / PROJECT_SETTINGS


def load_project(path: Path) -> tuple[Settings | None, str | None]:
    """A repository's settings file (servers, hooks, extensions only), or why it is not used.

    A bad file is a problem to show, never an error that stops the session: it is untrusted.
    """
    if not path.is_file():
        return None, None
    try:
        if path.stat().st_size > MAX_PROJECT_SETTINGS:
            return None, f"{path}: larger than {MAX_PROJECT_SETTINGS} bytes (project settings not used)"
        raw = _read_raw(path)
        return Settings.model_validate({k: raw[k] for k in PROJECT_KEYS if k in raw}), None
    except SettingsError as exc:
        return None, f"{exc} (project settings not used)"
    except SettingsValueError as exc:
        return None, f"{path}: {exc} (project settings not used)"
    except OSError as exc:
        return None, f"{path}: {exc.strerror or exc} (project settings not used)"


def collect_definitions(
    user: Settings, user_file: Path, project: Settings | None = None, project_file: Path | None = None
) -> Definitions:
    """Every server, hook and extension of the session, the user's first (they win a name)."""
    found = Definitions({}, [], [], [])
    _collect(user, user_file, "user", found)
    if project is not None and project_file is not None:
        _collect(project, project_file, "project", found)
    return found
