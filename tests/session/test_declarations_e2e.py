"""Declarations over real requests (design A2, A3): on the verified deepseek-flash route the
request-level tool list never changes while ToolSearch activates tools; elsewhere a deferred
schema first appears in the request after its activation, and an unactivated one never runs."""

from __future__ import annotations

import json
from pathlib import Path

from desktop.emulator import Emulator
from desktop.host.settings import Settings
from tests.session.support import config, open_

EXTENSION = """
def register(api):
    props = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    api.register_tool("weather_lookup", "Look up the weather forecast for a city", props,
                      lambda a: "sunny in " + a["city"])
    api.register_tool("currency_convert", "Convert an amount between currencies", {"type": "object", "properties": {}},
                      lambda a: "1.1")
"""


def run(tmp_path: Path, model: str) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    ext = tmp_path / "ext.py"
    ext.write_text(EXTENSION, encoding="utf-8")
    settings = Settings.model_validate({"extensions": [str(ext)], "permissions": {"mode": "full-access"}})
    with Emulator() as emu:
        with open_(tmp_path / "s.jsonl", config(emu, tmp_path / "ws", model, settings=settings)) as session:
            runtime = session.runtime
            runtime.run_turn(f"too early [[tool:weather_lookup {json.dumps({'city': 'Oslo'})}]]")
            runtime.run_turn("[[search:weather forecast]]")
            runtime.run_turn(f"now [[tool:weather_lookup {json.dumps({'city': 'Oslo'})}]]")
            results = [r["message"] for r in session.writer.rows if r["type"] == "toolResult"]
        return [r.json() for r in emu.requests], results


def tool_names(body: dict[str, object]) -> list[str]:
    return [t["function"]["name"] if "function" in t else t["name"] for t in body.get("tools") or []]  # type: ignore[index, union-attr]


def test_fixed_route_keeps_the_request_level_list_byte_identical(tmp_path: Path) -> None:
    bodies, results = run(tmp_path, "deepseek/deepseek-flash")
    lists = {json.dumps(body["tools"], separators=(",", ":")) for body in bodies}
    assert len(lists) == 1, "the tool list changed between requests"
    assert "weather_lookup" in tool_names(bodies[0])  # declared from the first request
    # ...but declaring is not permission: the first call was refused, the later one ran.
    assert results[0]["isError"] and "not activated" in results[0]["content"][0]["text"]
    assert any(not r["isError"] and "sunny in Oslo" in r["content"][0]["text"] for r in results)


def test_other_routes_publish_schemas_only_after_activation(tmp_path: Path) -> None:
    bodies, results = run(tmp_path, "anthropic/claude-opus-5-5")
    first = json.dumps(bodies[0])
    assert (
        "weather_lookup" not in tool_names(bodies[0]) and '"name":"weather_lookup","description"' not in first
    )
    later = json.dumps(bodies[-1])
    assert "tool_addition" in later and "weather_lookup" in later  # added in place, by value
    assert results[0]["isError"] and any("sunny in Oslo" in r["content"][0]["text"] for r in results)
