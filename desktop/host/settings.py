"""The user settings file (``<data dir>/settings.json``): MCP servers, hooks, mode, extensions.

The shape follows Claude Code where it has one, so an existing ``mcpServers`` block can be
pasted in unchanged::

    {
      "permissions": {"mode": "ask"},
      "mcpServers": {"files": {"command": "python", "args": ["server.py"], "env": {"K": "V"}}},
      "hooks": {"PreToolUse": [{"matcher": "bash|write",
                                "hooks": [{"type": "command", "command": "./check.sh", "timeout": 30}]}]},
      "extensions": ["~/pi-extensions/words.py"],
      "tools": {"declarations": "auto", "bash": {"inheritCredentials": false}}
    }

Unknown keys are kept (other parts of the app add their own); a bad value is reported with
the file and the field so the user can fix it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from desktop.host.paths import data_dir

SETTINGS_FILE = "settings.json"
SERVER_NAME = re.compile(r"^[A-Za-z0-9_-]{1,40}$")


class SettingsError(Exception):
    """The settings file is unreadable or invalid; the message names the file and the field."""


class McpServerConfig(BaseModel):
    model_config = ConfigDict(extra="allow")
    command: str
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    disabled: bool = False
    startupTimeout: float = 20.0
    callTimeout: float = 120.0


class HookCommand(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: Literal["command"] = "command"
    command: str
    timeout: float = 30.0


class HookMatcher(BaseModel):
    model_config = ConfigDict(extra="allow")
    matcher: str = ""
    hooks: list[HookCommand] = Field(default_factory=list)

    @field_validator("matcher")
    @classmethod
    def _valid_regex(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"matcher {value!r} is not a valid regular expression: {exc}") from exc
        return value


class HooksConfig(BaseModel):
    model_config = ConfigDict(extra="allow")
    PreToolUse: list[HookMatcher] = Field(default_factory=list)


class PermissionsConfig(BaseModel):
    model_config = ConfigDict(extra="allow")
    mode: Literal["ask", "accept-edits", "read-only", "full-access"] = "ask"


class BashConfig(BaseModel):
    """``inheritCredentials``: ``false`` (default) runs ``bash`` without the provider credential
    variables (``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY``, ``AWS_SECRET_ACCESS_KEY``, ...) in its
    environment, so a command the model runs cannot read them; ``true`` passes them through
    (known values are still redacted from what the command prints, design A9)."""

    model_config = ConfigDict(extra="allow")
    inheritCredentials: bool = False


class ToolsConfig(BaseModel):
    """``declarations``: ``"auto"`` (the route decides: the complete catalog from the first
    request on the verified deepseek-flash binding, on demand elsewhere) or ``"on-demand"``
    (publish deferred schemas only when ToolSearch activates them, on every route).
    ``bash``: see ``BashConfig``."""

    model_config = ConfigDict(extra="allow")
    declarations: Literal["auto", "on-demand"] = "auto"
    bash: BashConfig = Field(default_factory=BashConfig)


class Settings(BaseModel):
    model_config = ConfigDict(extra="allow")
    permissions: PermissionsConfig = Field(default_factory=PermissionsConfig)
    mcpServers: dict[str, McpServerConfig] = Field(default_factory=dict)
    hooks: HooksConfig = Field(default_factory=HooksConfig)
    extensions: list[str] = Field(default_factory=list)
    tools: ToolsConfig = Field(default_factory=ToolsConfig)

    @field_validator("mcpServers")
    @classmethod
    def _server_names(cls, value: dict[str, McpServerConfig]) -> dict[str, McpServerConfig]:
        for name in value:
            if not SERVER_NAME.match(name):
                raise ValueError(
                    f"MCP server name {name!r} must be 1-40 letters, digits, '_' or '-' (it prefixes tool names)"
                )
        return value


def settings_path(override: str | os.PathLike[str] | None = None) -> Path:
    return data_dir(override) / SETTINGS_FILE


def load_settings(path: Path | None = None) -> Settings:
    """Read the settings file; a missing file means defaults."""
    target = path or settings_path()
    if not target.exists():
        return Settings()
    try:
        raw: Any = orjson.loads(target.read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        raise SettingsError(f"{target}: not readable as JSON ({exc}); fix or remove the file") from exc
    if not isinstance(raw, dict):
        raise SettingsError(f"{target}: the top level must be a JSON object")
    try:
        return Settings.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in err['loc'])}: {err['msg']}" for err in exc.errors()
        )
        raise SettingsError(f"{target}: {problems}") from exc
