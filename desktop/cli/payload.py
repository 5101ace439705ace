"""`pi-desktop payload`: print the exact next request body, as the window's preview shows it.

For a session the request is the runtime's own next request (design P5): the session is opened
read-only through the same assembly as ``prompt`` (route, workspace sections, tools, the
pending system update, the runtime's request options, the kind of credential the route uses),
and ``--message TEXT`` adds the user message the turn would append, so the output is byte for
byte the first body that ``pi-desktop prompt SESSION TEXT`` then sends (P4). The credential's
kind is looked up where dispatch finds the key (``route_credential``); the key itself is never
printed or put in the request, and with none found the kind the route would use is assumed and
a note on standard error says so. With ``--headers`` the method, URL and the headers the
dispatch sends come first, credentials redacted. ``--context DOC`` projects a pi-ai style
request document instead, as pi-ai's ``streamSimple`` would (its default max tokens, the
process environment it reads, the provider's key variable).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop.cli._args import CliError, add_branch_argument, add_route_arguments

if TYPE_CHECKING:
    from desktop.pi.projection import ProviderRequest


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "payload",
        help="print the exact JSON body of the next request for a session and route",
        description="Print the exact JSON body of the next provider request (byte-exact). "
        "Reads the session; never creates, locks or changes it.",
    )
    parser.add_argument("session", nargs="?", help="a session file (JSONL); read only")
    parser.add_argument(
        "--context", metavar="FILE", help="a pi-ai style request document instead of a session"
    )
    add_route_arguments(parser)
    parser.add_argument(
        "--message",
        metavar="TEXT",
        help="the user message about to be sent: print the first request `prompt SESSION TEXT` sends",
    )
    parser.add_argument("--headers", action="store_true", help="also print method, URL and redacted headers")
    add_branch_argument(parser)
    parser.set_defaults(handler=run)


def _model_from_spec(spec: Any, endpoint: str | None) -> dict[str, Any]:
    # Lazy: the --help budget.
    from desktop.pi.catalog import RouteError
    from desktop.pi.routes import Account, resolve_model, route_from_string
    from desktop.pi.types import KNOWN_APIS

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


def request_from_context_document(
    document: Any, endpoint: str | None = None, notes: list[str] | None = None
) -> ProviderRequest:
    """The request pi-ai's ``streamSimple`` builds for ``document`` (what pi-coding-agent calls).

    As ``streamSimple`` does, it reads the process environment (``GOOGLE_CLOUD_PROJECT``,
    ``AZURE_OPENAI_RESOURCE_NAME``, ``PI_CACHE_RETENTION``, ... after the document's scoped
    ``options.env``) and takes the provider's key variable when ``options.apiKey`` is absent.
    The key itself never enters the request: the placeholder does, with the key's kind (design
    P5); with no key anywhere the route's usual kind is assumed and a line is added to ``notes``.
    """
    # Lazy: the --help budget.
    from desktop.host.providers.cloud_auth import projection_env
    from desktop.host.providers.credential_kind import key_credential
    from desktop.pi.projection import CREDENTIAL_PLACEHOLDER as PREVIEW_KEY
    from desktop.pi.projection import RequestOptions, project
    from desktop.pi.transcript import normalize_context

    if not isinstance(document, dict):
        raise CliError("context document: expected a JSON object with 'model' and 'context'")
    if "model" not in document:
        raise CliError("context document: field 'model' is required")
    model = _model_from_spec(document["model"], endpoint)
    context = document.get("context")
    _check_context(context)
    given = dict(document.get("options") or {})
    key = given.pop("apiKey", None)
    scoped_env = given.get("env")
    scoped: dict[str, Any] = scoped_env if isinstance(scoped_env, dict) else {}
    environment = {**os.environ, **{k: str(v) for k, v in scoped.items() if v}}
    credential = key_credential(model, key if isinstance(key, str) else None, environment)
    if notes is not None and credential.note() is not None:
        notes.append(str(credential.note()))
    options = RequestOptions.from_pi({**given, "apiKey": PREVIEW_KEY}, env=projection_env())
    options = options._replace(credential_kind=credential.kind)
    return project(model, normalize_context(context), options)  # type: ignore[arg-type]


def render_head(
    request: ProviderRequest, headers: dict[str, str] | None, notes: list[str] | None = None
) -> bytes:
    """What comes before the body: given ``headers``, the request line, ``# note`` lines and
    headers, then a blank line; else nothing."""
    if headers is None:
        return b""
    lines = [f"{request.method} {request.url}"]
    lines += [f"# note: {note}" for note in notes or ()]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    return ("\n".join(lines) + "\n\n").encode()


def request_from_session(args: argparse.Namespace) -> tuple[ProviderRequest, bool, str | None]:
    """The session's next request through the runtime, whether the route is offline, and the
    note saying which credential kind the preview assumed when no credential was found (P5)."""
    # Lazy: the --help budget.
    from desktop.cli._session import opened
    from desktop.host.journal.lines import keeping_decoded

    # The request reads every message right after the open: the rows the reader decoded are
    # kept for it rather than decoded twice (design P7).
    with keeping_decoded(), opened(args, read_only=True) as (session, _emulator):
        route = session.runtime.route
        request = session.runtime.next_request(draft=args.message)
        return request, session.config.route.offline, route.credential_note


def run(args: argparse.Namespace) -> int:
    # Lazy: the --help budget.
    import orjson

    from desktop.cli._foreign import detected_foreign, foreign_request

    headers: dict[str, str] | None = None
    notes: list[str] = []  # e.g. the credential kind a preview assumed (design P5)
    if args.context and args.message is not None:
        raise CliError(
            "--message previews a turn of a session; a --context document already holds its messages"
        )
    if args.context:
        path = Path(args.context)
        try:
            document = orjson.loads(path.read_bytes())
        except OSError as error:
            raise CliError(f"cannot read {path}: {error.strerror}") from error
        except orjson.JSONDecodeError as error:
            raise CliError(f"{path} is not valid JSON: {error}") from error
        request = request_from_context_document(document, args.endpoint, notes)
        if args.headers:
            headers = request.redacted_headers()
    elif args.session and (detected := detected_foreign(Path(args.session))) is not None:
        # Another agent's session: its context as that agent rebuilds it (design X1).
        request, offline, foreign = foreign_request(args, Path(args.session), detected)
        notes += foreign.context(getattr(args, "branch", None)).notes  # e.g. no recorded system prompt
    elif args.session:
        request, offline, note = request_from_session(args)
        notes += [note] if note is not None else []
    else:
        raise CliError("give a session file or --context FILE")
    if args.headers and not args.context:  # a session's request: the headers it is sent with
        # Lazy: the --help budget.
        from desktop.session.inspector.preview import sent_headers

        headers = sent_headers(request, offline=offline)
    for line in notes:
        sys.stderr.write(f"pi-desktop payload: note: {line}\n")
    # Written in pieces: the body of a long session is tens of megabytes, not copied again.
    out = sys.stdout.buffer
    out.write(render_head(request, headers, notes))
    out.write(request.body_bytes)
    out.write(b"\n")
    return 0
