"""A real MCP stdio server for the tests, written with the official SDK (``MCPServer``).

``PI_TEST_TOOL_COUNT`` generated tools (``metric_000`` ...) make the catalog as large as a
test needs; ``reshape`` changes a schema and adds a tool, then sends
``notifications/tools/list_changed``; ``crash`` kills the process mid-call; ``pid``
tells the test which process to kill from outside.
"""

from __future__ import annotations

import os
import sys

from mcp.server.mcpserver import Context, MCPServer

TOPICS = [
    "weather forecast for a city",
    "stock price quote for a ticker",
    "translate text between languages",
    "convert currency amounts",
    "count words in a document",
    "look up a dictionary definition",
    "compute a file checksum",
    "resolve a DNS hostname",
    "query calendar events",
    "send a chat notification",
]

server = MCPServer("pi-test")


def _make_metric(index: int) -> None:
    def metric(value: int) -> str:
        return f"metric_{index:03d}:{value * 2}"

    topic = TOPICS[index % len(TOPICS)]
    server.add_tool(
        metric, name=f"metric_{index:03d}", description=f"Tool {index}: {topic} (variant {index // 10})."
    )


for i in range(int(os.environ.get("PI_TEST_TOOL_COUNT", "3"))):
    _make_metric(i)


@server.tool(description="Echo the given text back, prefixed with 'echo:'.")
def echo(text: str) -> str:
    return f"echo:{text}"


@server.tool(description="Return this server's process id.")
def pid() -> str:
    return str(os.getpid())


@server.tool(description="Terminate the server process immediately (crash simulation).")
def crash() -> str:
    sys.stdout.flush()
    os._exit(3)


@server.tool(description="Change the echo schema and add a new tool, then announce tools/list_changed.")
async def reshape(ctx: Context) -> str:
    server.remove_tool("echo")

    def echo(text: str, times: int = 1) -> str:
        return "echo:" + text * times

    def added_tool(city: str) -> str:
        return f"sunny in {city}"

    server.add_tool(echo, name="echo", description="Echo the given text back, repeated 'times' times.")
    server.add_tool(added_tool, name="sunshine", description="Report sunshine hours for a city.")
    await ctx.session.send_tool_list_changed()
    return "reshaped"


if __name__ == "__main__":
    print("pi-test MCP server starting", file=sys.stderr)
    server.run()
