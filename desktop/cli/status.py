"""`pi-desktop status`: the effective state the next request will carry, and why."""

from __future__ import annotations

import argparse
import json
from typing import Any

from desktop.cli._args import add_session_arguments


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "status",
        help="show effective sections, tools, activation, token estimate and route capability",
        description="Show what the next request carries (reads the session; never writes it).",
    )
    add_session_arguments(parser, approvals=False, creates=False, mode=False)
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(handler=run)


def collect(session: Any) -> dict[str, Any]:
    from desktop.session.state import effective_state

    runtime = session.runtime
    state = effective_state(runtime.view().messages)
    capability = session.capability()
    gate = session.gate
    return {
        "session": str(session.writer.path),
        "readOnly": session.read_only,
        "rows": len(session.writer.rows),
        "route": session.config.route.label(),
        "transportVerified": session.resolved.transport_verified,
        "routeReason": session.resolved.reason,
        "capability": {
            "delivery": capability.delivery,
            "toolPath": capability.tool_path,
            "explanation": capability.explanation,
        },
        "sections": {name: len(text) for name, text in state.sections.items()},
        "tools": sorted(t["name"] for t in state.tools),
        "declarationPolicy": {
            "mode": gate.policy.mode,
            "reason": gate.policy.reason,
            "fallback": gate.policy.fallback,
        },
        "activation": {"active": sorted(gate.state.active), "epoch": gate.epoch, "identity": gate.identity()},
        "pendingUpdate": runtime.pending_system_fields() is not None,
        "contextTokens": runtime.context_tokens(),
        "contextWindow": session.resolved.model.get("contextWindow"),
    }


def run(args: argparse.Namespace) -> int:
    from desktop.cli._session import opened

    args.yes, args.no = False, True
    with opened(args, read_only=True) as (session, _emulator):
        info = collect(session)
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    print(f"session   {info['session']}{' (read-only)' if info['readOnly'] else ''}, {info['rows']} rows")
    print(f"route     {info['route']}")
    print(f"          {'verified' if info['transportVerified'] else 'fallback'}: {info['routeReason']}")
    print(f"delivery  {info['capability']['delivery']} — {info['capability']['explanation']}")
    print(f"tools     {', '.join(info['tools']) or '(none)'}")
    print(f"policy    {info['declarationPolicy']['mode']}: {info['declarationPolicy']['reason']}")
    active = ", ".join(info["activation"]["active"]) or "(none)"
    print(f"active    {active} (epoch {info['activation']['epoch']})")
    print(f"tokens    ~{info['contextTokens']} of {info['contextWindow']}")
    print("sections")
    for name, size in info["sections"].items():
        print(f"  {name:<28} {size:>7} chars")
    if info["pendingUpdate"]:
        print("(a system update is pending; it is appended with the next turn)")
    return 0
