"""`pi-desktop prompt`: run one user turn to completion and print the answer, usage and cost."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from desktop.cli._args import CliError, add_session_arguments


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "prompt",
        help="run one user turn to completion",
        description="Run one user turn and print the answer.",
    )
    add_session_arguments(parser)
    parser.add_argument("text", help="what to say")
    parser.set_defaults(handler=run)


def _stream(event: Any) -> None:
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


def run(args: argparse.Namespace) -> int:
    from desktop.cli._session import opened
    from desktop.host.journal import LocalPreparationFailure

    try:
        with opened(args) as (session, _emulator):
            if session.read_only:
                raise CliError(session.writer.read_only_reason or "the session is read-only")
            print(
                f"# route: {session.config.route.label()} — {session.capability().summary()}", file=sys.stderr
            )
            result = session.runtime.run_turn(args.text, on_event=_stream)
    except CliError as error:
        print(f"pi-desktop prompt: {error}", file=sys.stderr)
        return 2
    except LocalPreparationFailure as error:
        print(f"pi-desktop prompt: local preparation failure: {error}", file=sys.stderr)
        return 3
    print()
    totals = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "cost": 0.0}
    for message in result.assistant:
        usage = message["usage"]
        for key in ("input", "output", "cacheRead", "cacheWrite"):
            totals[key] += int(usage.get(key, 0))  # type: ignore[call-overload]
        totals["cost"] += float(usage["cost"]["total"])
    print(
        f"# {result.requests} request(s), stop: {result.stopped}; input {totals['input']}, "
        f"cache read {totals['cacheRead']}, cache write {totals['cacheWrite']}, output {totals['output']}, "
        f"cost ${totals['cost']:.6f}",
        file=sys.stderr,
    )
    if result.error:
        print(f"pi-desktop prompt: {result.error}", file=sys.stderr)
        return 1
    return 0
