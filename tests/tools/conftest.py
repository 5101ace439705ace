"""Shared fixtures: a real workspace, the core catalog, a headless host and the two routes."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop.host.permissions import HeadlessBridge, PermissionMode
from desktop.host.settings import HookCommand, HookMatcher, McpServerConfig
from desktop.host.tools.catalog import CORE_TOOLS, ToolCatalog
from desktop.host.tools.executor import HostExecutor, ToolCallRequest
from desktop.host.tools.extensions import ExtensionRegistry
from desktop.host.tools.hooks import HookRunner
from desktop.host.tools.mcp_servers import McpHub
from desktop.host.tools.types import ToolOutcome
from desktop.session.declarations import RouteBinding

SERVER = Path(__file__).resolve().parent / "mcp_server.py"
REPO = Path(__file__).resolve().parents[2]

FLASH = RouteBinding(
    provider="deepseek",
    model_id="deepseek-flash",
    api="openai-completions",
    base_url="https://api.deepseek.com",
    transport_verified=True,
    supports_mid_convo_system_messages=True,
    context_window=1_000_000,
    account="deepseek-main",
)
OTHER = RouteBinding(
    provider="openai",
    model_id="gpt-5",
    api="openai-responses",
    base_url="https://api.openai.com/v1",
    transport_verified=True,
    supports_mid_convo_system_messages=False,
    context_window=400_000,
    account="openai-main",
)


def call(name: str, arguments: dict[str, Any] | None = None, call_id: str = "call_1") -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments or {}}


SPECS = {spec.name: spec for spec in CORE_TOOLS}


def run_tool(host: HostExecutor, tool: str, **args: Any) -> ToolOutcome:
    """Core tool ``tool`` called with ``args`` through the Host, as the model calls it."""
    return host.run(SPECS[tool], ToolCallRequest("c1", tool, args))


def text_of(result: dict[str, Any] | ToolOutcome) -> str:
    """The text blocks of a tool result message or of a tool's outcome."""
    content = result.content if isinstance(result, ToolOutcome) else result["content"]
    return "\n".join(block["text"] for block in content if block["type"] == "text")


def hook_runner(workspace: Path, command: str, matcher: str = "", timeout: float = 30.0) -> HookRunner:
    """One pre-tool hook running ``command``, from a settings file in the workspace."""
    hook = HookCommand(command=command, timeout=timeout)
    return HookRunner([(HookMatcher(matcher=matcher, hooks=[hook]), hook, workspace)], workspace)


def tool_in_child(tool: str, root: Path, pattern: str, timeout: float) -> str:
    """What core tool ``tool`` answers for ``pattern`` under ``root``, run in a child process
    so that a search that hangs fails the test at ``timeout`` instead of holding it."""
    script = (
        f"import sys; from pathlib import Path; from desktop.host.tools.{tool} import run;"
        "from desktop.host.tools.types import ToolContext;"
        "print(run({'pattern': sys.argv[2]}, ToolContext(Path(sys.argv[1]))).content[0]['text'])"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(root), pattern], capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return done.stdout.strip()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "hello.txt").write_text("hello world\n", encoding="utf-8")
    return root


@pytest.fixture
def bridge() -> HeadlessBridge:
    return HeadlessBridge(True)


@pytest.fixture
def host(workspace: Path, bridge: HeadlessBridge, tmp_path: Path) -> HostExecutor:
    return HostExecutor(workspace, bridge, mode=PermissionMode.FULL_ACCESS, temp_dir=tmp_path / "tmp")


@pytest.fixture
def extensions() -> ExtensionRegistry:
    registry = ExtensionRegistry()
    registry.register_tool(
        "word_count",
        "Count the words in a text.",
        {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        lambda args: str(len(str(args["text"]).split())),
    )
    registry.register_tool(
        "touch_marker",
        "Create a marker file named in the arguments (side effect probe).",
        {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        lambda args: Path(args["path"]).write_text("touched") and "touched",
    )
    return registry


@pytest.fixture
def catalog(extensions: ExtensionRegistry) -> ToolCatalog:
    return ToolCatalog(providers=[extensions])


@pytest.fixture
def start_hub(tmp_path: Path) -> Iterator[Callable[..., McpHub]]:
    hubs: list[McpHub] = []

    def factory(tool_count: int = 3, names: tuple[str, ...] = ("t",)) -> McpHub:
        config = McpServerConfig(
            command=sys.executable,
            args=[str(SERVER)],
            env={"PI_TEST_TOOL_COUNT": str(tool_count), "PYTHONPATH": str(REPO)},
            cwd=str(REPO),
        )
        hub = McpHub({name: config for name in names}, logs=tmp_path / "logs")
        hub.start()
        hubs.append(hub)
        return hub

    yield factory
    for hub in hubs:
        hub.stop()
