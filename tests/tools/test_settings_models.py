"""The settings models are built by ``_Model``, not ``@dataclass`` (design D6): they must still
construct, default, compare and refuse arguments as the dataclasses they were did."""

from __future__ import annotations

import pytest

from desktop.host.settings import HookMatcher, McpServerConfig, Settings, SettingsValueError, ToolsConfig


def test_models_construct_default_and_compare_as_dataclasses_did() -> None:
    assert McpServerConfig("python") == McpServerConfig(command="python")
    assert McpServerConfig("python") != McpServerConfig("node")
    first, second = Settings(), Settings()
    assert first == second and first.mcpServers is not second.mcpServers  # a fresh factory value
    assert first.tools == ToolsConfig() and first.tools.bash.inheritCredentials is False
    assert repr(McpServerConfig("p", ["a"])).startswith("McpServerConfig(command='p', args=['a'], env={}")
    with pytest.raises(TypeError):
        hash(first)


def test_models_refuse_what_a_dataclass_refuses() -> None:
    with pytest.raises(TypeError, match="command"):
        McpServerConfig()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="cmd"):
        McpServerConfig(command="p", cmd="q")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="multiple values"):
        McpServerConfig("p", command="q")  # type: ignore[misc]
    with pytest.raises(SettingsValueError, match="matcher"):
        HookMatcher(matcher="(")


def test_validate_keeps_unknown_keys_and_fills_defaults() -> None:
    settings = Settings.model_validate({"mcpServers": {"a": {"command": "c"}}, "other": 1})
    assert settings.model_extra == {"other": 1}
    assert settings.mcpServers == {"a": McpServerConfig("c")}
    assert settings.mcpServers["a"].startupTimeout == 20.0
    with pytest.raises(SettingsValueError, match="Field required"):
        Settings.model_validate({"mcpServers": {"a": {}}})
