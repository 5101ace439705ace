"""`pi-desktop payload`: print the exact next request body, as the window's preview shows it.

The body printed is byte for byte what the dispatch would send (SPEC P4). With
``--headers`` the method, URL and headers come first, secrets redacted; no key is ever
read for a preview.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import orjson

from desktop.cli._args import CliError
from desktop.pi.catalog import RouteError
from desktop.pi.delivery import FALLBACKS, deliver
from desktop.pi.projection import (
    CREDENTIAL_PLACEHOLDER,
    ProjectionError,
    ProviderRequest,
    RequestOptions,
    project,
)
from desktop.pi.routes import Account, resolve_model, route_from_string
from desktop.pi.transcript import normalize_context
from desktop.pi.types import KNOWN_APIS

PREVIEW_KEY = CREDENTIAL_PLACEHOLDER


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "payload",
        help="print the exact JSON body of the next request for a session and route",
        description="Print the exact JSON body of the next provider request (byte-exact).",
    )
    parser.add_argument("session", nargs="?", help="a session file (JSONL)")
    parser.add_argument(
        "--context", metavar="FILE", help="a pi-ai style request document instead of a session"
    )
    parser.add_argument("--model", help='route as "provider/model-id", e.g. anthropic/claude-opus-5-5')
    parser.add_argument("--endpoint", help="account endpoint override (disables transport flags)")
    parser.add_argument(
        "--fallback", choices=FALLBACKS, default="folded", help="delivery for unflagged routes"
    )
    parser.add_argument("--headers", action="store_true", help="also print method, URL and redacted headers")
    parser.set_defaults(handler=run)


def _model_from_spec(spec: Any, endpoint: str | None) -> dict[str, Any]:
    if isinstance(spec, dict):
        missing = [k for k in ("id", "api", "provider", "baseUrl") if k not in spec]
        if missing:
            raise CliError(f"context document: field 'model' is missing {', '.join(missing)}")
        if spec["api"] not in KNOWN_APIS:
            raise CliError(f"context document: field 'model.api' has unknown API {spec['api']!r}")
        return spec
    if not isinstance(spec, str):
        raise CliError('the model must be "provider/model-id" or a pi-ai Model object')
    account = Account.make(base_url=endpoint) if endpoint else None
    try:
        return resolve_model(route_from_string(spec, account=account)).model
    except RouteError as error:
        raise CliError(str(error)) from error


_ROLES = ("system", "user", "assistant", "toolResult")


def _check_context(context: Any) -> None:
    if not isinstance(context, dict) or not isinstance(context.get("messages"), list):
        raise CliError("context document: field 'context.messages' must be a list")
    for index, message in enumerate(context["messages"]):
        role = message.get("role") if isinstance(message, dict) else None
        if role not in _ROLES:
            raise CliError(
                f"context document: field 'context.messages[{index}].role' is {role!r}; "
                f"expected one of {', '.join(_ROLES)}"
            )
    for index, tool in enumerate(context.get("tools") or []):
        if not isinstance(tool, dict) or not isinstance(tool.get("parameters"), dict) or "name" not in tool:
            raise CliError(
                f"context document: field 'context.tools[{index}]' needs a 'name' and an object 'parameters' schema"
            )


def request_from_context_document(document: Any, endpoint: str | None = None) -> ProviderRequest:
    if not isinstance(document, dict):
        raise CliError("context document: expected a JSON object with 'model' and 'context'")
    if "model" not in document:
        raise CliError("context document: field 'model' is required")
    model = _model_from_spec(document["model"], endpoint)
    context = document.get("context")
    _check_context(context)
    options = RequestOptions.from_pi({"apiKey": PREVIEW_KEY, **(document.get("options") or {})})
    return project(model, normalize_context(context), options)  # type: ignore[arg-type]


def request_from_session(path: Path, model_spec: str, endpoint: str | None, fallback: str) -> ProviderRequest:
    from desktop.host.journal import JournalWriter, model_order
    from desktop.session.history import context_messages

    model = _model_from_spec(model_spec, endpoint)
    with JournalWriter.open(path, read_only=True) as journal:
        messages = context_messages(model_order(list(journal.rows)))
    delivered = deliver(messages, model, fallback)  # type: ignore[arg-type]
    return project(model, delivered, RequestOptions(api_key=PREVIEW_KEY))  # type: ignore[arg-type]


def render(request: ProviderRequest, with_headers: bool) -> bytes:
    out = b""
    if with_headers:
        lines = [f"{request.method} {request.url}"]
        lines += [f"{k}: {v}" for k, v in request.redacted_headers().items()]
        out += ("\n".join(lines) + "\n\n").encode()
    return out + request.body_bytes + b"\n"


def run(args: argparse.Namespace) -> int:
    try:
        if args.context:
            path = Path(args.context)
            try:
                document = orjson.loads(path.read_bytes())
            except OSError as error:
                raise CliError(f"cannot read {path}: {error.strerror}") from error
            except orjson.JSONDecodeError as error:
                raise CliError(f"{path} is not valid JSON: {error}") from error
            request = request_from_context_document(document, args.endpoint)
        elif args.session:
            if not args.model:
                raise CliError("--model PROVIDER/ID is required with a session file")
            request = request_from_session(Path(args.session), args.model, args.endpoint, args.fallback)
        else:
            raise CliError("give a session file or --context FILE")
    except (CliError, ProjectionError) as error:
        print(f"pi-desktop payload: {error}", file=sys.stderr)
        return 2
    sys.stdout.buffer.write(render(request, args.headers))
    return 0
