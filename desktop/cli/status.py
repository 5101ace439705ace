"""`pi-desktop status`: the effective state the next request will carry, and why."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from desktop.cli._args import PERMISSION_MODES, add_branch_argument, add_session_arguments


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "status",
        help="show effective sections, tools, activation, token estimate and route capability",
        description="Show what the next request carries (reads the session; never writes it).",
    )
    add_session_arguments(parser, approvals=False, creates=False, mode=False)
    parser.add_argument(
        "--mode",
        choices=PERMISSION_MODES,
        help="permission mode to evaluate activation under, as `prompt --mode` would run (default: settings)",
    )
    add_branch_argument(parser)
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(handler=run)


def activation(gate: Any) -> dict[str, Any]:
    """What the runtime would grant on open, and why (the same restore, run read-only)."""
    restore = gate.last_restore
    return {
        "active": sorted(gate.state.active),
        "epoch": gate.epoch,
        "identity": gate.identity(),
        "mode": gate.mode.value,
        "source": restore.source if restore is not None else "none",
        "why": restore.reason if restore is not None else "not restored",
        "recovered": list(restore.recovered) if restore is not None else [],
        "refusedEvidence": list(restore.refused_evidence) if restore is not None else [],
    }


def cache_figures(session: Any) -> dict[str, Any]:
    """The route's provider cache now (design P9): warm, expired, cold or unknown, the time
    left and the next send's cost now and after expiry, from the journal's timestamps."""
    # Lazy: the --help budget.
    from desktop.pi.cache_misses import transcript_summary
    from desktop.pi.cache_retention import cache_status
    from desktop.pi.cache_rules import rule_for
    from desktop.pi.projection._cache import resolve_cache_retention

    model = session.resolved.model
    rule = rule_for(str(model.get("api", "")), str(model.get("provider", ""))).name
    long = resolve_cache_retention(session.runtime.route.options) == "long"
    now = time.time_ns() // 1_000_000
    # Decoded once for the two walks below (the cache clock and the miss summary): each walk of
    # the view decodes every message row again (the status budget).
    messages = list(session.runtime.view().messages)
    summary = transcript_summary(messages).to_json()
    del summary["missList"]
    return {**cache_status(messages, model, rule, now, long=long), "session": summary}


def collect(session: Any) -> dict[str, Any]:
    # Lazy: the --help budget.
    from desktop.host.catalog_cache import route_flags

    runtime = session.runtime
    state = runtime.current_state()  # the system messages only, shared with the pending check
    capability = session.capability()
    gate = session.gate
    flagged = route_flags(session.resolved)
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
            "flags": flagged["flags"],
        },
        "catalogs": flagged["catalogs"],
        "sections": {name: len(text) for name, text in state.sections.items()},
        "guidance": session.prompt.guidance.to_json(),
        "commands": session.tools.listing(),
        "tools": sorted(t["name"] for t in state.tools),
        "declarationPolicy": {
            "mode": gate.policy.mode,
            "reason": gate.policy.reason,
            "fallback": gate.policy.fallback,
        },
        "activation": activation(gate),
        "pendingUpdate": runtime.has_pending_update(),
        "contextTokens": runtime.context_tokens(),
        "cache": cache_figures(session),
        "contextWindow": session.resolved.model.get("contextWindow"),
        "network": network(session),
    }


def network(session: Any) -> dict[str, Any]:
    """The proxy, extra CAs, timeouts and retries the route's requests use (design W3)."""
    # Lazy: the --help budget.
    from desktop.host.providers.network import NetworkSettings

    settings = NetworkSettings.from_settings(session.tools.settings.network)
    base_url = session.resolved.model.get("baseUrl")
    return settings.describe(base_url if isinstance(base_url, str) else "")


def run(args: argparse.Namespace) -> int:
    # Lazy: the --help budget.
    from desktop.cli._foreign import detected_foreign, foreign_status, render_status
    from desktop.cli._session import opened
    from desktop.host.guidance import MAX_GUIDANCE_BYTES

    detected = detected_foreign(Path(args.session))
    if detected is not None:  # another agent's session: read through the foreign engine
        found = foreign_status(args, Path(args.session), detected)
        print(json.dumps(found, indent=2) if args.json else render_status(found))
        return 0
    args.yes, args.no = False, True
    with opened(args, read_only=True, builds_requests=False) as (session, _emulator):
        info = collect(session)
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    print(f"session   {info['session']}{' (read-only)' if info['readOnly'] else ''}, {info['rows']} rows")
    print(f"route     {info['route']}")
    print(f"          {'verified' if info['transportVerified'] else 'fallback'}: {info['routeReason']}")
    print(f"delivery  {info['capability']['delivery']} — {info['capability']['explanation']}")
    for flag in info["capability"]["flags"]:
        print(f"  {flag['flag']:<34} {str(flag['value']).lower():<5} from {flag['from']}")
    for kind, source in info["catalogs"].items():
        made = f", made {source['madeAt']}" if source["madeAt"] else ""
        print(f"catalog   {kind}: {source['origin']} {source['file']}{made} ({source['age']} old)")
    print(f"tools     {', '.join(info['tools']) or '(none)'}")
    print(f"policy    {info['declarationPolicy']['mode']}: {info['declarationPolicy']['reason']}")
    active = ", ".join(info["activation"]["active"]) or "(none)"
    print(f"active    {active} (epoch {info['activation']['epoch']}, mode {info['activation']['mode']})")
    print(f"          restored from {info['activation']['source']}: {info['activation']['why']}")
    for refused in info["activation"]["refusedEvidence"]:
        print(f"          ToolSearch result not accepted: {refused}")
    print(f"tokens    ~{info['contextTokens']} of {info['contextWindow']}")
    net = info["network"]
    proxy = f"proxy {net['proxy']}" if net["proxy"] else "no proxy"
    cas = ", ".join(f"{ca['path']} ({ca['source']})" for ca in net["caBundles"]) or "system CAs only"
    print(f"network   {proxy} ({net['proxySource']}); {cas}")
    print(
        f"          timeouts: connect {net['connectTimeout']:g}s, read {net['readTimeout']:g}s;"
        f" {net['maxRetries']} retries"
    )
    cache = info["cache"]
    cost = cache["nextSend"]
    costs = (
        f"; next send ${cost['now']:.4f} now, ${cost['afterExpiry']:.4f} after expiry"
        if cost["priceKnown"]
        else "; price unknown"
    )
    print(f"cache     {cache['label'].removeprefix('cache ')}{costs} ({cache['note']})")
    figures = cache["session"]
    causes = ", ".join(f"{name} {count}" for name, count in figures["causes"].items())
    print(
        f"          hit ratio {figures['hitRatio']:.0%}, {figures['misses']} miss(es)"
        f"{' (' + causes + ')' if causes else ''}, {figures['recachedTokens']:,} tokens re-cached"
    )
    print("sections")
    for name, size in info["sections"].items():
        print(f"  {name:<28} {size:>7} chars")
    guidance = info["guidance"]
    if guidance["read"] or guidance["skipped"]:
        print(f"guidance  instruction files under {guidance['root']}")
    for read in guidance["read"]:
        cut = f", cut at {MAX_GUIDANCE_BYTES} bytes" if read["cut"] else ""
        print(f"  read     {read['path']} ({read['bytes']} bytes{cut})")
    for skipped in guidance["skipped"]:
        print(f"  skipped  {skipped['path']}: {skipped['reason']}")
    for listed in info["commands"]:
        print(
            f"{listed['kind']:<9} {listed['name']} ({listed['source']}): {listed['state']} — {listed['command']}"
        )
    if info["pendingUpdate"]:
        print("(a system update is pending; it is appended with the next turn)")
    return 0
