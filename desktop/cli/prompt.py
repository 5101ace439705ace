"""`pi-desktop prompt`: run one user turn to completion and print the answer, usage and cost."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from desktop.cli._args import EXIT_LOCAL, EXIT_TURN_FAILED, CliError, add_session_arguments


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "prompt",
        help="run one user turn to completion",
        description="Run one user turn and print the answer. Creates the session file when it is "
        "missing and its folder exists (and says so on stderr).",
    )
    add_session_arguments(parser, thresholds=True)
    parser.add_argument("text", help="what to say")
    parser.set_defaults(handler=run)


def stream_text(event: Mapping[str, Any]) -> None:
    """Print the answer as it streams, and one line per tool result."""
    if event.get("type") == "stream":
        inner = event["event"]
        kind = inner.get("type") if isinstance(inner, dict) else getattr(inner, "type", None)
        delta = inner.get("delta") if isinstance(inner, dict) else getattr(inner, "delta", None)
        if kind == "text_delta" and delta:
            sys.stdout.write(delta)
            sys.stdout.flush()
    elif event.get("type") == "row" and event["row"].get("type") == "toolResult":
        message = event["row"]["message"]
        status = "error" if message.get("isError") else "ok"
        sys.stdout.write(f"\n[tool {message['toolName']}: {status}]\n")


def usage_totals(messages: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Summed usage of a turn's assistant messages (tokens and cost)."""
    totals: dict[str, Any] = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "cost": 0.0}
    for message in messages:
        usage = message.get("usage") or {}
        for key in ("input", "output", "cacheRead", "cacheWrite"):
            totals[key] += int(usage.get(key, 0) or 0)
        totals["cost"] += float((usage.get("cost") or {}).get("total", 0.0) or 0.0)
    # Lazy: the --help budget.
    from desktop.pi.money import tidy

    totals["cost"] = tidy(totals["cost"])  # a sum of products: shown without float noise (G7)
    return totals


def usage_line(requests: int, stopped: str, totals: Mapping[str, Any]) -> str:
    # Lazy: the --help budget.
    from desktop.pi.money import format_cost

    return (
        f"# {requests} request(s), stop: {stopped}; input {totals['input']}, "
        f"cache read {totals['cacheRead']}, cache write {totals['cacheWrite']}, output {totals['output']}, "
        f"cost {format_cost(totals['cost'])}"
    )


def run(args: argparse.Namespace) -> int:
    # Lazy: the --help budget.
    from desktop.cli._session import opened, require_writable
    from desktop.host.journal import LocalPreparationFailure

    with opened(args) as (session, _emulator):
        require_writable(session)
        print(f"# route: {session.config.route.label()} — {session.capability().summary()}", file=sys.stderr)
        try:
            result = session.runtime.run_turn(args.text, on_event=stream_text)
        except LocalPreparationFailure as error:
            raise CliError(f"local preparation failure: {error}", code=EXIT_LOCAL, path=error.path) from error
    print()
    print(usage_line(result.requests, result.stopped, usage_totals(result.assistant)), file=sys.stderr)
    if result.error:
        raise CliError(f"the turn failed: {result.error}", code=EXIT_TURN_FAILED)
    return 0
