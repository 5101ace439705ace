"""The Host side of a session's tools, built from the settings file and started/stopped with it.

One object the runtime creates per session: the catalog (core tools, extension tools, MCP
tools), the Host executor (hooks, permission mode, workspace, bridge) and the MCP hub whose
servers live exactly as long as the session.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from desktop.host.paths import cache_dir
from desktop.host.permissions import PermissionBridge, PermissionMode
from desktop.host.settings import Settings, load_settings
from desktop.host.tools.catalog import ToolCatalog
from desktop.host.tools.executor import HostExecutor
from desktop.host.tools.extensions import ExtensionError, ExtensionRegistry
from desktop.host.tools.hooks import HookRunner
from desktop.host.tools.mcp_servers import McpEvent, McpHub
from desktop.host.tools.types import SkillIndex


class SessionTools:
    def __init__(
        self,
        workspace: Path,
        bridge: PermissionBridge,
        settings: Settings | None = None,
        *,
        skills: SkillIndex | None = None,
        on_event: Callable[[McpEvent], None] | None = None,
        temp_dir: Path | None = None,
    ) -> None:
        self.settings = settings if settings is not None else load_settings()
        self.problems: list[str] = []
        self.extensions = ExtensionRegistry()
        for entry in self.settings.extensions:
            try:
                self.extensions.load_file(Path(entry).expanduser())
            except ExtensionError as exc:
                self.problems.append(str(exc))
        self.hub = McpHub(self.settings.mcpServers, on_event=on_event)
        self.catalog = ToolCatalog(providers=[self.extensions, self.hub])
        matchers = self.settings.hooks.PreToolUse
        self.executor = HostExecutor(
            workspace,
            bridge,
            mode=PermissionMode.parse(self.settings.permissions.mode),
            hooks=HookRunner(matchers, Path(workspace)) if matchers else None,
            skills=skills,
            temp_dir=temp_dir or cache_dir() / "tool-output",
            inherit_credentials=self.settings.tools.bash.inheritCredentials,
        )

    def start(self) -> None:
        self.hub.start()

    def stop(self) -> None:
        self.hub.stop()

    def __enter__(self) -> SessionTools:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
