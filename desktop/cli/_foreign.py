"""`status` and `payload` on another agent's session: pi, Claude Code, Codex CLI (design X1).

The commands read these files through the same engine as ``whatif`` and the window
(``desktop.session.foreign``): recognized by content, read once with ``open(..., "rb")``,
never locked, repaired or given a sidecar. Every problem names the format that was detected
("FILE: a pi-coding-agent session, format v3: ...") so a user knows what the file was read as.
The body ``payload`` prints is ``next_request``'s: for a pi file the request pi-ai builds from
the context pi rebuilds (checked byte for byte against pi-ai in ``tests/foreign``), for a
Claude Code file the conversation as Claude Code sent it, projected on the route.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from desktop.cli._args import CliError
from desktop.cli._files import detected_foreign
from desktop.cli._session import choose_route, report_problems
from desktop.pi.cache_rules import estimate_tokens
from desktop.pi.catalog import RouteError
from desktop.pi.projection import ProjectionError, project
from desktop.pi.routes import resolve_model
from desktop.pi.transcript import current_system_message, current_tools

if TYPE_CHECKING:
    from desktop.host.foreign.detect import Detected
    from desktop.pi.projection import ProviderRequest
    from desktop.pi.types import Message
    from desktop.session.foreign import ForeignSession


def open_read_only(command: str, path: Path, detected: Detected) -> ForeignSession:
    """Open the session (never writing it) and report the lines it set aside, file and line."""
    # Lazy: the status budget.
    from desktop.session.foreign import ForeignOpenError, open_foreign

    try:
        session = open_foreign(path)
    except ForeignOpenError as error:
        raise CliError(str(error)) from error
    except OSError as error:
        raise CliError(f"{detected}: cannot be read ({error.strerror or error})") from error
    report_problems(command, session.diagnostics, path)
    return session


def _leaf(session: ForeignSession, detected: Detected, branch: str | None) -> str | None:
    # Lazy: the status budget.
    from desktop.session.foreign import BranchNotFound

    try:
        session.leaf_position(branch)
    except BranchNotFound as error:
        raise CliError(f"{detected}: no entry {branch!r} in this session (--branch)") from error
    return branch or session.default_leaf


def _route_spec(
    args: argparse.Namespace, session: ForeignSession, leaf: str | None, detected: Detected
) -> str:
    spec = getattr(args, "model", None)
    if spec:
        return str(spec)
    model = session.context(leaf).model
    if model is None:
        raise CliError(f"{detected}: the session names no model; give one with --model provider/model-id")
    return f"{model[0]}/{model[1]}"


def foreign_request(
    args: argparse.Namespace, path: Path, detected: Detected, session: ForeignSession | None = None
) -> tuple[ProviderRequest, bool, ForeignSession]:
    """The session's next request on the route (``--model``, else the model it last used),
    with ``--message`` appended as the user turn the agent would add; and whether the route
    is the offline emulator."""
    # Lazy: the status budget.
    from desktop.session.foreign import request_options

    if session is None:
        session = open_read_only("payload", path, detected)
    leaf = _leaf(session, detected, getattr(args, "branch", None))
    spec = _route_spec(args, session, leaf, detected)
    try:
        route, _emulator = choose_route(args, spec, read_only=True)
        model = resolve_model(route).model
    except (CliError, RouteError, ValueError) as error:
        text = error.message if isinstance(error, CliError) else str(error)
        hint = "" if getattr(args, "model", None) else " (the model the session last used; give --model)"
        raise CliError(f"{detected}: {text}{hint}") from error
    context = session.context(leaf)
    messages: list[Message] = list(context.messages)
    draft = getattr(args, "message", None)
    if draft is not None:
        messages.append(_user_turn(session.format, draft))
    try:
        request = project(model, messages, request_options(session, context))  # type: ignore[arg-type]
    except (ProjectionError, ValueError) as error:
        raise CliError(f"{detected}: {error}") from error
    return request, route.offline, session


def _user_turn(fmt: str, text: str) -> Message:
    """The user message the agent appends for a typed prompt, in the shape it writes it: pi
    (pi-agent-core's ``prompt``) as one text block, Claude Code and Codex as plain text."""
    now = int(time.time() * 1000)
    if fmt == "pi":
        return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": now}
    return {"role": "user", "content": text, "timestamp": now}


def foreign_status(args: argparse.Namespace, path: Path, detected: Detected) -> dict[str, Any]:
    """What the next request of the session would carry: context, model, tools and sections
    (pi records them), usage so far; with ``--model`` the request's size on that route."""

    session = open_read_only("status", path, detected)
    leaf = _leaf(session, detected, getattr(args, "branch", None))
    context = session.context(leaf)
    roles = dict(Counter(message["role"] for message in context.messages))
    system = current_system_message(context.messages)
    sections = system.get("sections") if system is not None else None
    usage = session.usage(leaf)
    last = usage[-1].usage if usage else None
    branches = session.branches()
    info: dict[str, Any] = {
        "session": str(path),
        "format": session.format,
        "detected": detected.description,
        "version": session.version,
        "id": session.session_id,
        "cwd": session.cwd,
        "title": session.title,
        "readOnly": True,
        "entries": len(session.entries),
        "branches": sum(not b.sidechain for b in branches),
        "subAgents": sum(b.sidechain for b in branches),
        "leaf": leaf,
        "problems": len(session.diagnostics),
        "messages": len(context.messages),
        "roles": roles,
        "model": "/".join(context.model) if context.model else None,
        "thinkingLevel": context.thinking_level,
        "systemKnown": context.system_known,
        "notes": list(context.notes),
        "sections": {str(n): len(str(t)) for n, t in sections.items()} if isinstance(sections, dict) else {},
        "tools": sorted(str(t.get("name")) for t in current_tools(context.messages)),
        "modelCalls": len(usage),
        "lastInput": (last["input"] + last["cacheRead"] + last["cacheWrite"]) if last else None,
        "contextTokens": estimate_tokens(orjson.dumps(context.messages, default=str).decode()),
    }
    if getattr(args, "model", None):
        request, _offline, _session = foreign_request(args, path, detected, session)
        info["route"] = str(args.model)
        info["requestBytes"] = len(request.body_bytes)
        info["requestTokens"] = estimate_tokens(request.body_bytes.decode("utf-8", errors="replace"))
    return info


def render_status(info: dict[str, Any]) -> str:
    lines = [
        f"session   {info['session']} (read-only)",
        f"format    {info['detected'].split(': ', 1)[-1]}",
        f"title     {info['title']}",
        f"id        {info['id']}  cwd {info['cwd'] or '(not recorded)'}",
        f"entries   {info['entries']}, {info['branches']} branch(es)"
        + (f", {info['subAgents']} sub-agent chain(s)" if info["subAgents"] else "")
        + (f", {info['problems']} problem line(s) (listed above)" if info["problems"] else ""),
        f"leaf      {info['leaf']}",
        f"context   {info['messages']} message(s): "
        + ", ".join(f"{n} {role}" for role, n in info["roles"].items())
        + f"; ~{info['contextTokens']:,} tokens",
        f"model     {info['model'] or '(none recorded)'}"
        + (f", thinking {info['thinkingLevel']}" if info["thinkingLevel"] else ""),
        f"usage     {info['modelCalls']} model call(s)"
        + (
            f"; the last was given {info['lastInput']:,} input tokens"
            if info["lastInput"] is not None
            else ""
        ),
        f"tools     {', '.join(info['tools']) or '(none in the context)'}",
    ]
    if info["sections"]:
        lines.append("sections")
        lines += [f"  {name:<28} {size:>7} chars" for name, size in info["sections"].items()]
    lines += [f"note      {note}" for note in info["notes"]]
    if "route" in info:
        lines.append(
            f"route     {info['route']}: next request {info['requestBytes']:,} bytes, ~{info['requestTokens']:,} tokens"
        )
    return "\n".join(lines)


__all__ = ["detected_foreign", "foreign_request", "foreign_status", "open_read_only", "render_status"]
