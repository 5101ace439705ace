"""Opening a session for a command: the file, the route, the credential, the offline emulator.

The order matters (design D6): every check that can fail without touching the file runs
first (the path, the route, the API key), and only then is a writable session locked or a
new one created, so a typo or an unknown route leaves nothing behind. Read-only commands
(``status``, ``payload``) parse the file once through ``desktop.cli._files``, never lock it
and never start anything that writes.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop import __version__
from desktop.cli._args import EXIT_LOCAL, CliError
from desktop.cli._boundary import location, say
from desktop.cli._credentials import missing_credential, unsendable_api
from desktop.cli._files import (
    detected_foreign,
    lasting,
    read_regular_file,
    read_session_log,
    require_regular_file,
)
from desktop.host.journal import JournalWriter
from desktop.host.permissions import PermissionMode, headless_bridge
from desktop.host.settings import load_settings
from desktop.host.workspace_choice import home_folder, refused_workspace
from desktop.pi.catalog import RouteError, active_catalog
from desktop.pi.routes import EMULATOR_FAMILY, Account, emulator_route, resolve_model, route_from_string
from desktop.session.assembly import SessionConfig, activation_signer, open_session
from desktop.session.compaction_settings import CompactionSettings
from desktop.session.session_settings import (
    Recorded,
    SessionSettings,
    effective_settings,
    recorded_in_bytes,
    recorded_settings,
    verified,
)

if TYPE_CHECKING:
    from desktop.emulator import Emulator
    from desktop.host.journal.reader import Diagnostic
    from desktop.host.tools.definitions import Definition
    from desktop.host.tools.session_tools import Consent
    from desktop.pi.routes import Route
    from desktop.session.assembly import OpenSession

READ_ONLY_REASON = "Opened read-only: this command only reads the session."
#: The emulator origin a read-only preview names when no emulator runs (nothing is sent).
PREVIEW_EMULATOR_ORIGIN = "http://127.0.0.1:0"
#: How many set-aside lines are listed one by one before the rest are counted.
MAX_REPORTED = 20
#: The flags that change a session's settings, as ``args`` names them.
_FLAGS = ("model", "endpoint", "mode", "fallback", "reserve_tokens", "keep_recent_tokens", "auto_compact")


def report_problems(command: str, diagnostics: Sequence[Diagnostic], path: Path) -> None:
    """Say on stderr which lines the reader set aside or found wrong, with file and line (T9)."""
    for diagnostic in diagnostics[:MAX_REPORTED]:
        say(
            command,
            f"{diagnostic.severity}: {diagnostic.message}",
            location(diagnostic.path, diagnostic.line),
        )
    if len(diagnostics) > MAX_REPORTED:
        rest = diagnostics[MAX_REPORTED:]
        say(command, f"warning: {len(rest)} more problem line(s), up to line {rest[-1].line}", location(path))


def choose_route(
    args: argparse.Namespace,
    spec: str | None,
    *,
    read_only: bool,
    endpoint: str | None = None,
    account_name: str = "default",
) -> tuple[Route, Emulator | None]:
    """The route for ``spec`` (or the default), starting an in-process emulator only when a
    writing command needs one and no ``--emulator`` origin was given."""

    if spec is None:  # the first-run choice matters only to a session that names no route yet
        # Lazy: the status budget.
        from desktop.host.first_run import initial_route

    emulator: Emulator | None = None
    offline_default = spec is None and initial_route().offline
    wants_emulator = offline_default or (spec is not None and spec.startswith(EMULATOR_FAMILY + "/"))
    origin: str | None = getattr(args, "emulator", None)
    if wants_emulator and origin is None:
        if read_only:
            origin = PREVIEW_EMULATOR_ORIGIN
        else:
            # Lazy: the status budget.
            from desktop.emulator import Emulator

            emulator = Emulator().start()
            origin = emulator.url
    try:
        account = (
            Account.make(account_name, base_url=endpoint) if endpoint or account_name != "default" else None
        )
        if spec is None:
            # Lazy: the status budget.
            from desktop.session.default_route import default_route

            route: Route = default_route(initial_route(), origin)
        elif spec.startswith(EMULATOR_FAMILY + "/"):
            assert origin is not None
            route = emulator_route(spec.split("/", 1)[1], origin, emulated=True, account=account)
        else:
            route = route_from_string(spec, account=account)
    except (RouteError, ValueError) as error:
        if emulator is not None:
            emulator.stop()
        raise CliError(str(error)) from error
    return route, emulator


def _workspace(args: argparse.Namespace) -> Path:
    """``--workspace`` (default: the current folder), never the session's recorded folder, and
    never a folder that cannot be a workspace: the root, home, a system folder (design A10)."""

    workspace = Path(getattr(args, "workspace", ".") or ".").expanduser()
    if not workspace.is_dir():
        raise CliError(f"no such workspace folder: {workspace}")
    folder = workspace.resolve()
    refused = refused_workspace(folder, home_folder())
    if refused is not None:
        raise CliError(f"{refused}; run in a project folder or pass --workspace FOLDER")
    return folder


@contextlib.contextmanager
def opened(
    args: argparse.Namespace, *, read_only: bool = False, create: bool = True, builds_requests: bool = True
) -> Iterator[tuple[OpenSession, Any]]:
    """Open the session for the command; yields (session, the in-process emulator or None).

    A read-only open parses the file once and never locks it; a writable one creates the
    file only with ``create`` and only once the route and the credential checked out.
    """
    command = str(getattr(args, "command", "") or "")
    path = Path(args.session)
    workspace = _workspace(args)
    journal: JournalWriter | None = None
    exists = True
    if read_only:
        journal = JournalWriter(
            path, read_session_log(path), fd=None, lock=None, read_only_reason=READ_ONLY_REASON
        )
    else:
        try:
            require_regular_file(path)
        except CliError:
            if not create or path.exists() or path.is_symlink():
                raise
            exists = False
            if not path.parent.is_dir():
                raise CliError(f"no such folder for a new session: {path.parent}") from None
        else:
            _refuse_foreign(path)
    emulator: Emulator | None = None
    try:
        recorded = Recorded()
        if journal is not None:
            recorded = recorded_settings(journal.rows)
        elif exists:  # read from the end of the file: the route is decided (and its key checked)
            # before anything is locked, repaired or appended (design G12)
            recorded = recorded_in_bytes(read_regular_file(path))
        spec = getattr(args, "model", None)
        flag_endpoint = getattr(args, "endpoint", None)
        endpoint, account_name = flag_endpoint, "default"
        if spec is None and recorded.route is not None:
            # The session's own route, account and endpoint (design G12).
            spec, account_name = recorded.route, recorded.account or "default"
            endpoint = flag_endpoint if flag_endpoint is not None else recorded.endpoint
        with lasting() if read_only else contextlib.nullcontext():  # the catalogs load here
            route, emulator = choose_route(
                args, spec, read_only=read_only, endpoint=endpoint, account_name=account_name
            )
            # An unknown model fails here, before anything is locked or created.
            resolved = resolve_model(route)
        if not read_only:
            if (
                getattr(args, "model", None) is None
                and recorded.route is not None
                and resolved.source == "unknown"
            ):
                raise CliError(
                    f"the session's route {recorded.route} is no longer in the model catalog; "
                    "choose a route with --model"
                )
            problem = unsendable_api(route.label(), resolved.model.get("api")) or missing_credential(route)
            if problem is not None:
                raise CliError(problem)
        try:
            bridge = headless_bridge(yes=getattr(args, "yes", False), no=getattr(args, "no", False))
        except ValueError as error:
            raise CliError(str(error)) from error
        if journal is None:
            journal = JournalWriter.open(path) if exists else _create(path, workspace, command)
        report_problems(command, journal.diagnostics, journal.path)
        if journal.torn_sidecar is not None:
            say(command, f"note: the incomplete last line was moved to {journal.torn_sidecar}")
        settings, refused, wanted = _session_settings(args, recorded, route, journal.session_id)
        if refused is not None:
            say(command, f"warning: {refused}")
        config = SessionConfig(
            route=route,
            workspace=workspace,
            fallback="attributed" if settings.fallback == "attributed" else "folded",
            mode=PermissionMode(settings.mode),
            compaction=settings.compaction,
            declarations="on-demand" if settings.declarations == "on-demand" else "auto",
            reasoning=settings.thinking,
            consent=_trust_project(command) if getattr(args, "trust_project", False) else None,
        )
        with lasting() if read_only else contextlib.nullcontext():
            session = open_session(
                path,
                config,
                bridge=bridge,
                read_only=read_only,
                journal=journal,
                builds_requests=builds_requests,
            )
        journal = None  # the session owns it now
        with session:
            session.recorded_settings = recorded.settings()
            session.record_settings(
                settings,
                by="the command line",
                why=wanted or ("a new session" if not exists else "first record of this session's settings"),
                now=False,
            )
            _report_tools(command, session)
            yield session, emulator
    finally:
        if journal is not None:
            journal.close()
        if emulator is not None:
            emulator.stop()


def _trust_project(command: str) -> Consent:
    """``--trust-project``: the repository's definitions may run; each is named on stderr."""

    def consent(definitions: Sequence[Definition]) -> bool:
        for definition in definitions:
            say(
                command,
                f"allowed by --trust-project: {definition.kind} {definition.name}: {definition.command}",
            )
        return True

    return consent


def _session_settings(
    args: argparse.Namespace, recorded: Recorded, route: Route, session_id: str
) -> tuple[SessionSettings, str | None, str]:
    """The session's settings for this run: the flags given, else the recorded ones, else the
    settings file's and the defaults (design G12); why a recorded mode was not restored; and
    which flags changed something, in words."""

    file_settings = load_settings()
    spec = f"{EMULATOR_FAMILY}/{route.key}" if route.offline else route.key
    seed = SessionSettings(
        route=spec,
        mode=file_settings.permissions.mode,
        declarations=file_settings.tools.declarations,
    )
    base = recorded.compaction or CompactionSettings()
    reserve, keep = getattr(args, "reserve_tokens", None), getattr(args, "keep_recent_tokens", None)
    auto = getattr(args, "auto_compact", None)
    compaction = None
    if reserve is not None or keep is not None or auto is not None:
        compaction = CompactionSettings(
            base.enabled if auto is None else auto == "on",
            base.reserve_tokens if reserve is None else reserve,
            base.keep_recent_tokens if keep is None else keep,
        )

    def sealed() -> bool:
        # Verifying never creates the secret: without one, nothing was sealed here.
        signer, _problem = activation_signer(session_id, read_only=True)
        return verified(recorded, signer.key, session_id)

    settings, refused = effective_settings(
        recorded,
        seed,
        route=spec,
        endpoint=route.account.base_url if not route.offline else None,
        mode=getattr(args, "mode", None),
        fallback=getattr(args, "fallback", None),
        compaction=compaction,
        mode_sealed=sealed,
    )
    settings = settings._replace(account=route.account.name)
    given = [f"--{name.replace('_', '-')}" for name in _FLAGS if getattr(args, name, None) is not None]
    return settings, refused, ("asked for with " + ", ".join(given)) if given else ""


def _refuse_foreign(path: Path) -> None:
    """Another agent's session is only ever read (design X1): a writing command refuses it
    before anything locks or touches it, naming the format and the way to continue it."""

    detected = detected_foreign(path)
    if detected is not None:
        raise CliError(
            f"{detected}; Pi Desktop only reads other agents' sessions: open it in the window "
            f"(pi-desktop {path}) and choose “Continue in Pi Desktop”, or use status, payload or whatif"
        )


def _create(path: Path, workspace: Path, command: str) -> JournalWriter:
    try:
        journal = JournalWriter.create(path, cwd=str(workspace), app_version=__version__)
    except FileExistsError as error:
        raise CliError(
            f"the session appeared while starting ({error.strerror}); run the command again",
            code=EXIT_LOCAL,
            path=path,
        ) from None
    say(command, f"created a new session {path}")
    return journal


def _report_tools(command: str, session: OpenSession) -> None:

    for problem in getattr(session.tools, "problems", ()):
        say(command, f"warning: {problem}")
    # A corrupt cached catalog falls back to the bundled one; every command says so (design M1).
    for problem in active_catalog().problems:
        say(command, f"warning: model catalog: {problem}")


def require_writable(session: OpenSession) -> None:
    if session.read_only:
        reason = session.writer.read_only_reason or "the session is read-only"
        raise CliError(reason, code=EXIT_LOCAL, path=session.writer.path)


def write_out(data: bytes) -> None:
    sys.stdout.buffer.write(data)
    sys.stdout.flush()
