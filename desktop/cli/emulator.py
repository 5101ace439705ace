"""`pi-desktop emulator`: run the loopback provider emulator in the foreground.

Point a route's base URL at one of the printed addresses (or use the built-in offline
Emulator route); stop with Ctrl+C. See ``desktop.emulator`` for the reply conventions.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "emulator",
        help="run the offline provider emulator on loopback",
        description="Serve Anthropic, OpenAI (chat, responses, Azure, Codex), DeepSeek, Mistral and "
        "Google streaming endpoints on 127.0.0.1 with deterministic replies and prompt-cache figures.",
    )
    parser.add_argument("--port", type=int, default=8787, help="TCP port (0 picks a free one; default 8787)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument(
        "--require-auth", action="store_true", help="answer 401 when no API key header is sent"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    # Lazy: the --help budget.
    from desktop.emulator import BASE_PATHS, Emulator

    emulator = Emulator(args.host, args.port, require_auth=args.require_auth)
    try:
        emulator.start()
    except OSError as exc:
        print(f"pi-desktop emulator: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        print("Choose another port with --port N (0 picks a free one).", file=sys.stderr)
        return 1
    print(f"pi-desktop emulator listening on {emulator.url}", flush=True)
    for family in BASE_PATHS:
        print(f"  {family:<10} {emulator.base_url(family)}", flush=True)
    print("Press Ctrl+C to stop.", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        print("stopping", file=sys.stderr)
    finally:
        emulator.stop()
    return 0
