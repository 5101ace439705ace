"""Deferred tools from MCP servers over stdio, with the official ``mcp`` SDK.

The SDK is asyncio (anyio) code; the rest of the Host is synchronous and runs on the worker
thread. ``McpHub`` owns one dedicated thread with its own event loop, runs one lifetime task
per configured server there, and offers a small blocking API (start, stop, call, tools).

Each server's tools are namespaced ``mcp__<server>__<tool>``. A ``tools/list_changed``
notification re-lists the server: a changed schema is a catalog change like any other. The
notification is counted the moment it arrives (before the answer of the call that caused it is
delivered) and ``settle`` waits for the re-list, so the catalog read right after a tool call
already holds the new schema (design S6: the very next request declares it).
A server that dies (during a call, or idle: a light ping notices) is recorded in
``McpHub.events``, its tools leave the catalog, and every other server keeps working.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import re
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TextIO

import anyio
import mcp.types as mcp_types
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from desktop.host.paths import log_dir
from desktop.host.private_files import make_private_dirs, open_private_append
from desktop.host.settings import McpServerConfig
from desktop.host.tools.types import JsonObject, Notifier, ToolContext, ToolFailure, ToolOutcome, ToolSpec

MAX_NAME = 64
WATCH_INTERVAL = 0.5
PING_TIMEOUT = 10.0
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")

EventKind = Literal["started", "tools_changed", "crashed", "failed", "stopped"]
ServerStatus = Literal["starting", "running", "crashed", "failed", "stopped"]


@dataclass(frozen=True)
class McpEvent:
    """Something that happened to a server (kept in ``McpHub.events``)."""

    server: str
    kind: EventKind
    message: str


def namespaced(server: str, tool: str) -> str:
    """``mcp__<server>__<tool>``, made provider-safe; over-long names keep a hash suffix."""
    plain = f"mcp__{server}__{tool}"
    safe = f"mcp__{server}__{_UNSAFE.sub('_', tool)}"
    if safe == plain and len(plain) <= MAX_NAME:
        return plain
    digest = hashlib.sha256(tool.encode("utf-8")).hexdigest()[:8]
    return f"{safe[: MAX_NAME - 9]}_{digest}"


@dataclass
class _Server:
    name: str
    config: McpServerConfig
    status: ServerStatus = "starting"
    tools: dict[str, ToolSpec] = field(default_factory=dict)
    remote: dict[str, str] = field(default_factory=dict)
    session: ClientSession | None = None
    stop: anyio.Event | None = None
    ready: threading.Event = field(default_factory=threading.Event)
    task: asyncio.Task[None] | None = None
    log_path: Path | None = None
    #: ``tools/list_changed`` notifications whose re-list has not finished yet.
    relisting: int = 0
    #: Set once the lifetime task has ended and the server's tools have left the catalog.
    finished: threading.Event = field(default_factory=threading.Event)


class McpHub(Notifier):
    """MCP servers started and stopped with the session; a ``DeferredToolProvider``."""

    def __init__(
        self,
        servers: Mapping[str, McpServerConfig],
        *,
        logs: Path | None = None,
    ) -> None:
        self._servers = {
            name: _Server(name, config) for name, config in sorted(servers.items()) if not config.disabled
        }
        self._logs = logs
        super().__init__()
        self._lock = threading.RLock()
        self._settled = threading.Condition(self._lock)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self.events: list[McpEvent] = []

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        """Start every enabled server; returns once each is running or has failed."""
        if self._thread is not None:
            return
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._thread = threading.Thread(target=loop.run_forever, name="mcp-hub", daemon=True)
        self._thread.start()
        for server in self._servers.values():
            self._launch(server)
        for server in self._servers.values():
            server.ready.wait(server.config.startupTimeout + 5)

    def _launch(self, server: _Server) -> None:
        assert self._loop is not None
        server.ready.clear()
        server.finished.clear()
        server.status = "starting"

        def create() -> None:
            server.task = asyncio.ensure_future(self._serve(server))

        self._loop.call_soon_threadsafe(create)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop every server (stdin closed, then the process tree killed) and the loop."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return

        async def shutdown() -> None:
            tasks = [s.task for s in self._servers.values() if s.task is not None and not s.task.done()]
            for server in self._servers.values():
                if server.stop is not None:
                    server.stop.set()
            if tasks:
                await asyncio.wait(tasks, timeout=timeout)

        with contextlib.suppress(FutureTimeout, RuntimeError):
            asyncio.run_coroutine_threadsafe(shutdown(), loop).result(timeout + 2)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout)
        if not thread.is_alive():
            loop.close()
        self._loop = None
        self._thread = None

    # -- DeferredToolProvider ----------------------------------------------------------------

    def deferred_tools(self) -> Sequence[ToolSpec]:
        with self._lock:
            return [spec for server in self._servers.values() for spec in server.tools.values()]

    def status(self) -> dict[str, ServerStatus]:
        return {name: server.status for name, server in self._servers.items()}

    def settle(self, timeout: float = 5.0) -> bool:
        """Wait until every announced tool-list change has been re-listed (False on timeout).

        Never waits on the hub's own thread, where the re-list runs.
        """
        if self._thread is None or threading.current_thread() is self._thread:
            return True
        with self._settled:
            return self._settled.wait_for(
                lambda: all(server.relisting == 0 for server in self._servers.values()), timeout
            )

    # -- the per-server task (runs on the hub loop) ------------------------------------------

    def _emit(self, server: _Server, kind: EventKind, what: str) -> None:
        """Record ``MCP server <name> <what>``."""
        with self._lock:
            self.events.append(McpEvent(server.name, kind, f"MCP server {server.name} {what}"))

    def _set_tools(self, server: _Server, tools: Mapping[str, ToolSpec], remote: Mapping[str, str]) -> bool:
        with self._lock:
            before = {name: spec.declaration() for name, spec in server.tools.items()}
            server.tools = dict(tools)
            server.remote = dict(remote)
            after = {name: spec.declaration() for name, spec in server.tools.items()}
        if before != after:
            self._notify()
            return True
        return False

    def _errlog(self, server: _Server) -> TextIO:

        directory = self._logs or log_dir()
        make_private_dirs(directory)  # design X22
        server.log_path = directory / f"mcp-{server.name}.log"
        handle = os.fdopen(open_private_append(server.log_path), "w", encoding="utf-8")
        handle.truncate(0)  # each start writes the log afresh, as "w" did
        return handle

    def _stderr_tail(self, server: _Server, limit: int = 600) -> str:
        if server.log_path is None or not server.log_path.exists():
            return ""
        text = server.log_path.read_text(encoding="utf-8", errors="replace").strip()
        return f" Server stderr (tail): {text[-limit:]}" if text else ""

    async def _serve(self, server: _Server) -> None:
        config = server.config
        params = StdioServerParameters(
            command=config.command, args=list(config.args), env=dict(config.env) or None, cwd=config.cwd
        )
        server.stop = anyio.Event()
        crashed = False
        errlog = self._errlog(server)
        try:
            async with stdio_client(params, errlog=errlog) as (read, write):
                relists: set[asyncio.Task[None]] = set()

                async def on_message(message: Any) -> None:
                    # Re-list outside the dispatcher callback: a request from inside it would wait on itself.
                    if isinstance(message, mcp_types.ToolListChangedNotification):
                        with self._lock:
                            server.relisting += 1
                        task = asyncio.ensure_future(self._relist(server, session))
                        relists.add(task)
                        task.add_done_callback(relists.discard)

                async with ClientSession(read, write, message_handler=on_message) as session:
                    with anyio.fail_after(config.startupTimeout):
                        await session.initialize()
                        await self._list(server, session)
                    server.session = session
                    server.status = "running"
                    server.ready.set()
                    self._emit(server, "started", f"started with {len(server.tools)} tools")
                    while not server.stop.is_set():
                        with anyio.move_on_after(WATCH_INTERVAL):
                            await server.stop.wait()
                        if server.stop.is_set():
                            break
                        try:
                            with anyio.move_on_after(PING_TIMEOUT):
                                await session.send_ping()
                        except MCPError:
                            crashed = True
                            break
        except Exception as exc:  # a failed start or a broken transport: report and survive
            if server.status == "running":
                crashed = True
            else:
                server.status = "failed"
                self._set_tools(server, {}, {})
                why = f"{type(exc).__name__}: {exc}.{self._stderr_tail(server)}"
                self._emit(server, "failed", f"failed to start: {why}")
        finally:
            server.session = None
            errlog.close()
            if crashed or server.status == "running":
                server.status = "crashed" if crashed else "stopped"
            server.ready.set()
        if server.status in ("crashed", "stopped"):
            self._set_tools(server, {}, {})
        if server.status == "crashed":
            why = f"its tools were removed from the catalog.{self._stderr_tail(server)}"
            self._emit(server, "crashed", f"exited unexpectedly; {why}")
        elif server.status == "stopped":
            self._emit(server, "stopped", "stopped")
        server.finished.set()

    async def _list(self, server: _Server, session: ClientSession) -> bool:
        listed: list[mcp_types.Tool] = []
        cursor: str | None = None
        while True:
            params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await session.list_tools(params=params)
            listed.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        tools: dict[str, ToolSpec] = {}
        remote: dict[str, str] = {}
        for tool in listed:
            name = namespaced(server.name, tool.name)
            if name in tools:
                name = namespaced(server.name, tool.name + "\x00dup")
            remote[name] = tool.name
            tools[name] = self._spec(server.name, name, tool)
        return self._set_tools(server, tools, remote)

    async def _relist(self, server: _Server, session: ClientSession) -> None:
        try:
            if await self._list(server, session):
                self._emit(server, "tools_changed", "changed its tools")
        except (MCPError, anyio.ClosedResourceError, anyio.BrokenResourceError):
            return
        finally:
            with self._settled:
                server.relisting -= 1
                self._settled.notify_all()

    def _spec(self, server: str, name: str, tool: mcp_types.Tool) -> ToolSpec:
        schema: JsonObject = (
            dict(tool.input_schema) if tool.input_schema else {"type": "object", "properties": {}}
        )
        schema.setdefault("type", "object")
        description = tool.description or tool.title or f"Tool {tool.name} from MCP server {server}"
        read_only = bool(tool.annotations and tool.annotations.read_only_hint)

        def runner(args: JsonObject, ctx: ToolContext) -> ToolOutcome:
            return self.call(name, args, cancel=ctx.cancel)

        return ToolSpec(
            name=name,
            description=description,
            parameters=schema,
            effect="external",
            runner=runner,
            source=f"mcp:{server}",
            deferred=True,
            read_only=read_only,
        )

    # -- calls (blocking, from the worker thread) --------------------------------------------

    def _owner(self, name: str) -> tuple[_Server, str]:
        with self._lock:
            for server in self._servers.values():
                if name in server.remote:
                    return server, server.remote[name]
        raise ToolFailure(f"MCP tool {name} is no longer offered by any running server")

    def call(self, name: str, arguments: JsonObject, *, cancel: threading.Event | None = None) -> ToolOutcome:
        server, remote = self._owner(name)
        session, loop = server.session, self._loop
        if session is None or loop is None or server.status != "running":
            raise ToolFailure(f"MCP server {server.name} is not running (status: {server.status})")
        timeout = server.config.callTimeout
        future: Future[mcp_types.CallToolResult] = asyncio.run_coroutine_threadsafe(
            session.call_tool(remote, arguments, read_timeout_seconds=timeout), loop
        )
        waited = 0.0
        while True:
            try:
                result = future.result(0.05)
                break
            except FutureTimeout:
                waited += 0.05
                if cancel is not None and cancel.is_set():
                    future.cancel()
                    raise ToolFailure("Operation aborted") from None
                if waited > timeout + 5:
                    future.cancel()
                    raise ToolFailure(f"MCP tool {name} did not answer within {timeout:g}s") from None
            except MCPError as exc:
                if "closed" in str(exc).lower():
                    # The server died: wait (bounded) until its tools have left the catalog, so
                    # the request after this result no longer declares them (design S6).
                    server.finished.wait(WATCH_INTERVAL + PING_TIMEOUT + 1)
                    raise ToolFailure(
                        f"MCP server {server.name} crashed or closed the connection during {name}: {exc}"
                    ) from exc
                raise ToolFailure(f"MCP tool {name} failed: {exc}") from exc
            except Exception as exc:
                raise ToolFailure(f"MCP tool {name} failed: {type(exc).__name__}: {exc}") from exc
        return _outcome(server.name, remote, result)


def _outcome(server: str, remote: str, result: mcp_types.CallToolResult) -> ToolOutcome:
    blocks: list[JsonObject] = []
    for item in result.content:
        if isinstance(item, mcp_types.TextContent):
            blocks.append({"type": "text", "text": item.text})
        elif isinstance(item, mcp_types.ImageContent):
            blocks.append({"type": "image", "data": item.data, "mimeType": item.mime_type})
        else:
            blocks.append({"type": "text", "text": item.model_dump_json(by_alias=True, exclude_none=True)})
    if not blocks:
        blocks.append({"type": "text", "text": "(no output)"})
    details: JsonObject = {"server": server, "tool": remote}
    if result.structured_content is not None:
        details["structuredContent"] = result.structured_content
    return ToolOutcome(content=tuple(blocks), is_error=bool(result.is_error), details=details)
