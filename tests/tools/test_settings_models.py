"""The settings are msgspec structs (design T11): defaults, unknown keys kept, and a bad value
said in one line that names the file and the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop.host.settings import (
    HookMatcher,
    McpServerConfig,
    Settings,
    SettingsError,
    SettingsValueError,
    ToolsConfig,
    load_settings,
)


def test_models_default_and_compare() -> None:
    first, second = Settings(), Settings()
    assert first == second and first.mcpServers is not second.mcpServers  # a fresh factory value
    assert first.tools == ToolsConfig() and first.tools.bash.inheritCredentials is False
    assert McpServerConfig(command="python") != McpServerConfig(command="node")


def test_validate_keeps_unknown_keys_and_fills_defaults() -> None:
    settings = Settings.model_validate({"mcpServers": {"a": {"command": "c", "note": 1}}, "other": 1})
    assert settings.extra == {"other": 1}
    assert settings.mcpServers["a"].extra == {"note": 1}
    assert settings.mcpServers["a"].startupTimeout == 20.0


@pytest.mark.parametrize(
    ("raw", "line"),
    [
        ({"mcpServers": {"a": {}}}, "mcpServers.a.command is missing"),
        ({"network": {"readTimeout": True}}, "network.readTimeout must be a number, not a boolean"),
        ({"hooks": {"PreToolUse": [{"matcher": "("}]}}, "hooks.PreToolUse[0]: matcher '(' is not"),
        ({"mcpServers": {"a b": {"command": "c"}}}, "mcpServers: MCP server name 'a b' must be"),
        ({"tools": {"bash": {"inheritCredentials": "yes"}}}, "tools.bash.inheritCredentials must be true"),
        (
            {"mcpServers": {"a": {"command": "x", "startupTimeout": "soon"}}},
            "mcpServers.a.startupTimeout must",
        ),
        ({"permissions": {"mode": "yolo"}}, "permissions.mode cannot be 'yolo'"),
        ({"extensions": ["ok", 3]}, "extensions[1] must be text"),
    ],
)
def test_a_bad_value_is_one_line_naming_the_file_and_the_field(
    tmp_path: Path, raw: dict[str, object], line: str
) -> None:
    with pytest.raises(SettingsValueError) as caught:
        Settings.model_validate(raw)
    assert str(caught.value).startswith(line) and "\n" not in str(caught.value)
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(raw))
    with pytest.raises(SettingsError) as loaded:
        load_settings(path)
    assert str(loaded.value).startswith(f"{path}: {line}") and "\n" not in str(loaded.value)


def test_a_model_built_in_code_is_checked_too() -> None:
    with pytest.raises(ValueError, match="matcher"):
        HookMatcher(matcher="(")
