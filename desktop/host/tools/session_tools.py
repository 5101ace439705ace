"""The Host side of a session's tools, built from the settings files and started/stopped with it.

One object the runtime creates per session: the catalog (core tools, extension tools, MCP
tools), the Host executor (hooks, permission mode, workspace, bridge) and the MCP hub whose
servers live exactly as long as the session. The user's settings and the repository's own
(``desktop.host.tools.definitions``) are read when it is made; nothing runs before ``start``,
and a repository's definitions run only with consent (design A11).

The MCP SDK takes about a second to import, so it is imported only when a server is
configured; a session without servers gets ``NoMcpServers`` (headless commands start in a blink).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from desktop.host.guidance import workspace_root
from desktop.host.paths import cache_dir
from desktop.host.permissions import PermissionBridge, PermissionMode
from desktop.host.settings import Settings, load_settings, settings_path
from desktop.host.tools.catalog import ToolCatalog
from desktop.host.tools.definitions import Definition, collect_definitions, load_project, project_settings
from desktop.host.tools.executor import HostExecutor
from desktop.host.tools.extensions import ExtensionError, ExtensionRegistry
from desktop.host.tools.hooks import HookRunner
from desktop.host.tools.types import SkillIndex, ToolSpec
from desktop.host.trust import TrustStore

if TYPE_CHECKING:
    from desktop.host.tools.mcp_servers import McpHub


#: Asked before project-level definitions first run: the ones not yet allowed for this
#: repository; answers whether they may run (the window's dialog, the command line's flag).
Consent = Callable[[Sequence[Definition]], bool]

STARTED = "started"
NOT_STARTED = "not started"
NEEDS_CONSENT = "not started: needs consent"
DECLINED = "not started: not allowed"


class SessionTools:
    """The session's tools. Constructing it starts and imports nothing: servers start, hooks
    arm and extensions load in ``start``, which looking commands never call, and a repository's
    own definitions only with the user's consent (design A11)."""

    def __init__(
        self,
        workspace: Path,
        bridge: PermissionBridge,
        settings: Settings | None = None,
        *,
        skills: SkillIndex | None = None,
    ) -> None:
        self.settings = settings if settings is not None else load_settings()
        self.problems: list[str] = []
        self.extensions = ExtensionRegistry()
        self.trust = TrustStore.at()
        self.root = workspace_root(Path(workspace))
        project_file = project_settings(self.root)
        project_config, problem = load_project(project_file)
        if problem is not None:
            self.problems.append(problem)
        self.definitions = collect_definitions(self.settings, settings_path(), project_config, project_file)
        self.problems.extend(self.definitions.problems)
        self.states: dict[Definition, str] = dict.fromkeys(self.definitions.all(), NOT_STARTED)
        for definition in self.states:
            if definition.source == "project" and not self.trust.consented(self.root, definition.digest):
                self.states[definition] = NEEDS_CONSENT
        self.hub: McpHub | NoMcpServers = NoMcpServers()
        self.catalog = ToolCatalog(providers=[self.extensions])
        self.executor = HostExecutor(
            workspace,
            bridge,
            mode=PermissionMode.parse(self.settings.permissions.mode),
            skills=skills,
            temp_dir=cache_dir() / "tool-output",
            inherit_credentials=self.settings.tools.bash.inheritCredentials,
        )
        self._workspace = Path(workspace)
        self._started = False

    def listing(self) -> list[dict[str, str]]:
        """Every server, hook and extension with its source and whether it runs, for ``status``."""
        return [
            {
                "kind": d.kind,
                "name": d.name,
                "command": d.command,
                "source": d.source,
                "settings": str(d.settings),
                "state": state,
            }
            for d, state in self.states.items()
        ]

    def load_extensions(self) -> None:
        """Import the extensions the user gave or allowed, and no other: the catalog a looking
        command shows (``status``, ``payload``) holds the user's own extension tools, never a
        repository's that was not allowed, and no MCP server's (servers start only in ``start``).
        """
        for path, definition in self.definitions.extensions:
            if self.states[definition] != NOT_STARTED:
                continue
            try:
                self.extensions.load_file(path)
                self.states[definition] = STARTED
            except ExtensionError as exc:
                self.states[definition] = "failed"
                self.problems.append(str(exc))

    def start(self, consent: Consent | None = None) -> None:
        """Load extensions, arm hooks and start servers; project ones need ``consent`` first."""
        if self._started:
            return
        self._started = True
        waiting = [d for d, state in self.states.items() if state == NEEDS_CONSENT]
        if waiting:
            if consent is not None and consent(waiting):
                self.trust.consent(self.root, [d.digest for d in waiting])
                for definition in waiting:
                    self.states[definition] = NOT_STARTED
            else:
                for definition in waiting:
                    self.states[definition] = DECLINED
                names = ", ".join(f"{d.kind} {d.name}" for d in waiting)
                self.problems.append(
                    f"{project_settings(self.root)}: not run without your consent: {names} "
                    "(the window asks; headless commands take --trust-project)"
                )
        self.load_extensions()
        allowed = {d for d, state in self.states.items() if state == NOT_STARTED}
        hooks = [(m, h, d.settings.parent) for m, h, d in self.definitions.hooks if d in allowed]
        if hooks:
            self.executor.hooks = HookRunner(hooks, self._workspace)
            for _m, _h, definition in self.definitions.hooks:
                if definition in allowed:
                    self.states[definition] = STARTED
        servers = {name: config for name, (config, d) in self.definitions.servers.items() if d in allowed}
        if servers:
            # Lazy: the status budget.
            from desktop.host.tools.mcp_servers import McpHub

            self.hub = McpHub(servers)
            self.catalog.add_provider(self.hub)
            self.hub.start()
            # A server that could not start is said where the session's other problems are
            # (the window's notes, a command's warnings), not only kept in the hub's events.
            self.problems.extend(event.message for event in self.hub.events if event.kind == "failed")
            for _config, definition in self.definitions.servers.values():
                if definition in allowed:
                    self.states[definition] = STARTED

    def stop(self) -> None:
        self.hub.stop()

    def __enter__(self) -> SessionTools:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


class NoMcpServers:
    """The hub of a session with no MCP server configured: no tools, nothing to start."""

    def deferred_tools(self) -> Sequence[ToolSpec]:
        return ()

    def subscribe(self, callback: Callable[[], None]) -> None:
        """Nothing here ever changes, so nobody is ever called back."""

    def stop(self) -> None:
        """No server to stop."""
