"""The one worker thread that owns the session: journal writer, runtime, bridge (design D1).

Like Anki's task manager, one ``QThread`` runs one worker ``QObject``; it alone touches the
session file, the network (the emulator and provider clients), the keyring and the tool host.
The window never calls it: it emits signals on a ``WorkerClient`` whose connections are
queued into the worker thread, and the worker answers with its own signals, queued back to
the GUI thread. Everything crossing the boundary is one immutable or never-again-mutated
object per signal (``Signal(object)``): Qt copies nothing on the way, so a 100,000-row
session crosses in constant time.

This module is only the thread host: opening sessions, running turns, the route and mode,
and publishing what the inspector shows. The inspector's computations live in
``desktop.session.inspector``; a feature's own background work (accounts, saving a file,
settings) is an ``Op`` next to that feature, run here through ``run_op`` (``desktop.ui.ops``).

Stopping (design D1): the worker has one cancel event for its whole life. ``stop`` sets it
from any thread; it is cleared only when the user starts a turn or a compaction
(``prepare_turn``, called directly at the moment of the request), so a stop that arrives
during start-up, the welcome session, a turn or a compaction is never lost. Shutting down sets
``closing`` as well: nothing new starts after that, and ``stop_worker`` never lets the
``QThread`` be destroyed while it runs.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QDeadlineTimer, QObject, QSettings, Qt, QThread, Signal, Slot

from desktop import __version__
from desktop.cli._args import PERMISSION_MODES
from desktop.host import catalog_cache, paths
from desktop.host.accounts import keyring_username, resolve_api_key
from desktop.host.first_run import initial_route
from desktop.host.guidance import scan_guidance
from desktop.host.journal import JournalWriter, SessionStore
from desktop.host.journal.store import describe
from desktop.host.permissions import PermissionMode
from desktop.host.private_files import make_private_dirs, replace_file
from desktop.host.providers.cloud_auth import CloudAuth
from desktop.host.settings import load_settings
from desktop.host.trust import TrustStore
from desktop.host.workspace_choice import choose_workspace, home_folder, refused_workspace
from desktop.pi.cache_misses import transcript_summary
from desktop.pi.cache_view import predict
from desktop.pi.catalog import RouteError, active_catalog
from desktop.pi.delivery import FALLBACKS, FallbackDelivery
from desktop.pi.money import format_cost
from desktop.pi.routes import (
    EMULATOR_FAMILY,
    Account,
    Route,
    emulator_route,
    resolve_model,
    route_from_string,
)
from desktop.session.compaction_settings import CompactionSettings
from desktop.session.inspector.routes import (
    PUBLISHED_ROUTES,
    RouteChoice,
    capability_info,
    pick_route,
    projector_available,
    route_choices,
)
from desktop.session.session_settings import SessionSettings, effective_settings, recorded_settings, verified
from desktop.ui import inspect_ops
from desktop.ui.bridge import QtPermissionBridge
from desktop.ui.cache_miss_panel import SHOWN_MISSES
from desktop.ui.messages import (
    DecodedRows,
    IndexedRows,
    OpenProblem,
    RouteStatus,
    SessionIndexed,
    SessionOpened,
    ShownSession,
    Started,
    TurnFinished,
)
from desktop.ui.ops import Op, OpOutcome, WorkerOps
from desktop.ui.ops import run_op as _run_op
from desktop.ui.row_index import Indexed, bulk_load, read_indexed, read_tail
from desktop.ui.welcome import prepare_workspace, seed_welcome

if TYPE_CHECKING:  # the engine is imported when a session opens, after the first paint (design X27)
    from desktop.emulator import Emulator
    from desktop.host.tools.definitions import Definition
    from desktop.host.workspace_choice import WorkspaceChoice
    from desktop.pi.routes import ResolvedModel
    from desktop.session.assembly import OpenSession
    from desktop.session.foreign import ForeignSession
    from desktop.session.runtime import SessionRuntime

log = logging.getLogger(__name__)

HISTORY = 8
"""Bodies per route the cache view remembers (the provider's cache holds what they wrote)."""
PAINT_WAIT = 3.0
"""Seconds the worker waits at most for the window to paint a session (its index, then the
opened session) before it runs Python again."""
STREAM_INTERVAL = 0.04
"""Seconds between streamed snapshots sent to the GUI (coalesced; the final one always goes)."""


def _fallback(value: object) -> FallbackDelivery:
    return "attributed" if value == "attributed" else "folded"


def _mode(value: object) -> str:
    return value if isinstance(value, str) and value in PERMISSION_MODES else "ask"


def _compaction(value: object) -> CompactionSettings:
    """The window's compaction thresholds for new sessions (``{"enabled", "reserveTokens",
    "keepRecentTokens"}``), the defaults for anything missing or not a count."""
    default = CompactionSettings()
    if not isinstance(value, Mapping):
        return default

    def count(key: str, fallback: int) -> int:
        try:
            number = int(str(value.get(key)))  # QSettings may hand back text
        except (TypeError, ValueError):
            return fallback
        return number if 0 <= number < 1 << 40 else fallback

    enabled = value.get("enabled", default.enabled)
    return CompactionSettings(
        enabled not in (False, "false", 0, "0"),
        count("reserveTokens", default.reserve_tokens),
        count("keepRecentTokens", default.keep_recent_tokens),
    )


class SessionWorker(QObject):
    # --- worker -> GUI (one object per signal, never copied by Qt) -----------------------------
    started = Signal(object)
    """``Started``: the route the first launch decided on, and a keyring that could not be read."""
    session_indexed = Signal(object)
    """``SessionIndexed``: the timeline can paint before the session is open (design X26)."""
    session_opened = Signal(object)
    """``SessionOpened``: the session (or another branch of a foreign one) the window shows."""
    rows_appended = Signal(object)
    streaming = Signal(object)
    #: A ``retry_wait`` event: the client waits before sending again (design W4).
    retry_wait = Signal(object)
    turn_started = Signal(str)
    turn_finished = Signal(object)
    """``TurnFinished``: a turn or a compaction ended (or was refused before it began)."""
    status_changed = Signal(object)
    """``RouteStatus``: the route, mode and fallback changed, or a session opened."""
    preview_ready = Signal(str, object)
    previews_outdated = Signal()
    """The previews shown no longer describe the next request (rows appended, the route,
    fallback, mode or draft changed, a session opened or closed): new ones follow, now while the
    payload tab is shown, else on its next showing (design G4)."""
    activation_ready = Signal(object)
    permission_requested = Signal(int, object)
    question_requested = Signal(int, object)
    """(request id, {"title", "text"}): a yes/no question; answered like a permission."""
    message = Signal(str, str)
    op_finished = Signal(object)
    open_problem = Signal(object)
    """``OpenProblem``: a file that could not be opened, said in full (design X1)."""

    def __init__(
        self,
        *,
        data_dir: str | None = None,
        workspace: str | None = None,
        offline: bool = True,
        emulator: Emulator | None = None,
    ) -> None:
        super().__init__()
        self.data_dir = data_dir
        self.default_workspace = workspace
        self.offline = offline
        self.cancel = threading.Event()
        """The one cancel event (design D1): set by ``stop``, cleared only by ``prepare_turn``."""
        self.closing = threading.Event()
        """Set once by ``begin_shutdown``: nothing new starts after it."""
        self.bridge = QtPermissionBridge(self.cancel)
        self.bridge.asked.connect(self.permission_requested)
        self.bridge.questioned.connect(self.question_requested)
        self.session: OpenSession | None = None
        self.writer: JournalWriter | None = None
        self.runtime: SessionRuntime | None = None
        self.emulator: Emulator | None = emulator
        #: An emulator given by the caller keeps running after the worker ends (tests share one).
        self._own_emulator = emulator is None
        self.resolved: ResolvedModel | None = None
        self.choices: list[RouteChoice] = []
        #: The open session's route, mode and fallback: its own, restored from its journal
        #: (design G12). The window's settings only seed new sessions (``seed_*``).
        self.route_key = ""
        self.mode = "ask"
        self.fallback: FallbackDelivery = "folded"
        self.seed_route_key = ""
        self.seed_mode = "ask"
        self.seed_fallback: FallbackDelivery = "folded"
        self.seed_compaction = CompactionSettings()
        #: Why the open session cannot send until the user chooses a route (its recorded route
        #: is gone from the catalog, or has no key here); None when it can.
        self.route_needed: str | None = None
        #: Bodies sent on each route in this run, oldest first (the cache view's history, P6).
        self._sent_bodies: dict[str, list[bytes]] = {}
        #: The request in flight: (route key, body, the bodies sent before it on that route).
        self._dispatched: tuple[str, bytes, list[bytes]] | None = None
        #: The last request's cache prediction against the provider's reported usage.
        self._check: dict[str, Any] | None = None
        #: The composer's text: the preview is the first request of that turn (design P5).
        self._draft: str | None = None
        #: A pi or Claude Code session shown read-only instead of a Desktop one (design X1).
        self.foreign: ForeignSession | None = None
        self.foreign_leaf: str | None = None
        self._preview_keys: dict[str, str] = {"main": ""}
        #: Whether the payload tab is on screen: a preview of a long session costs seconds and
        #: several times the file in memory, so it is computed only while someone looks (G9).
        self._previews_shown = False
        self._last_stream = 0.0
        self.thread_id: int | None = None

    # --- lifecycle ----------------------------------------------------------------------------

    @Slot(object)
    def start(self, options: Mapping[str, Any]) -> None:
        """First call on the worker thread: emulator, routes, then the session to show.

        Every step checks ``closing``, so quitting during start-up ends it at the next step.
        """
        self.thread_id = threading.get_ident()
        path = options.get("session")
        # ``pi-desktop PATH``: the session's rows on screen first; the emulator, the keyring and
        # the routes (a second or more of imports and lookups) come after (design G9).
        early = self._index_early(Path(str(path))) if path else None
        initial = str(options.get("initialProvider") or "")
        if not initial:
            initial = self._initial_provider()
        if self.closing.is_set():
            return
        from desktop.emulator import Emulator  # Lazy: the launch budget (X27).

        if self.emulator is None:
            self.emulator = Emulator().start()
        origin: str | None = self.emulator.url
        catalog_cache.install()
        if not self.offline:  # stale (older than a day) catalogs refresh on their own thread
            catalog_cache.refresh_in_background()
        keyed = [] if self.offline else self._keyed_providers()
        if self.closing.is_set():
            return
        self.choices = route_choices(origin, keyed)
        wanted = str(options.get("route") or "")
        if not wanted and initial and initial != "emulator":
            wanted = next(
                (c.key for c in self.choices if not c.route.offline and c.route.provider == initial), ""
            )
        self.route_key = self.seed_route_key = pick_route(self.choices, wanted)
        self.mode = self.seed_mode = _mode(options.get("mode"))
        self.fallback = self.seed_fallback = _fallback(options.get("fallback"))
        self.seed_compaction = _compaction(options.get("compaction"))
        try:
            if early is not None:
                self._open(Path(str(path)), indexed=early)
            elif path and Path(str(path)).is_file():
                self._open_any(Path(str(path)))
            elif self._first_run(options.get("firstRun", "auto")):
                self._welcome()
            else:
                self._new(self.default_workspace)
        except Exception as exc:
            self._failed("Could not open a session", exc)

    def _index_early(self, path: Path) -> Indexed | None:
        """The reading and row index of a Desktop session named at start, sent to the window
        (and painted) before anything else runs; None for any other file (opened as before)."""
        try:
            if not path.is_file() or inspect_ops.file_format(path)[0] != "desktop":
                return None
        except Exception:
            return None
        return self._send_index(path, None)

    def _send_index(self, path: Path, workspace: Path | None) -> Indexed | None:
        """Read the session (its one parse on this open), show the timeline's index of it and
        wait until the window painted it (design X26)."""
        cwd = "" if workspace is None else str(workspace)
        try:
            tail = read_tail(path)
            if tail is not None:  # a long session: its newest rows on screen first (design X32)
                painted = threading.Event()
                self.session_indexed.emit(SessionIndexed(str(path), cwd, tail, painted, partial=True))
                painted.wait(PAINT_WAIT)
            indexed = read_indexed(path)
        except OSError as exc:
            log.info("no row index for %s: %s", path, exc)
            return None
        painted = threading.Event()
        self.session_indexed.emit(SessionIndexed(str(path), cwd, indexed[1], painted))
        # Let the window paint and lay the rows out before the runtime is assembled: the two
        # would share the GIL, and every layout call into the item model would wait for it
        # (bounded, for a window that never paints).
        painted.wait(PAINT_WAIT)
        return indexed

    def _initial_provider(self) -> str:
        """The first launch's route (environment and keyring: worker thread only, design D3)."""
        keyring_note = ""
        if self.offline:
            provider, reason = "emulator", "offline only"
        else:
            decision = initial_route()
            provider, reason, keyring_note = decision.provider, decision.reason, decision.keyring_note
        log.info("initial route: %s (%s)", provider, reason)
        self.started.emit(Started(provider, keyring_note))
        return provider

    def _keyed_providers(self) -> list[str]:
        """Providers of the offered routes that have a key (keyring or environment)."""
        providers = sorted({p.split("/", 1)[0] for p in PUBLISHED_ROUTES})
        return [p for p in providers if resolve_api_key(p, keyring_username(p))[0]]

    def _first_run(self, flag: object) -> bool:
        """The guided session opens on a first launch on the offline route only."""
        choice = self._choice()
        if choice is None or not choice.route.offline:
            return False
        if flag == "auto":
            return not self._store().session_files()
        return bool(flag)

    def _choice(self, key: str | None = None) -> RouteChoice | None:
        key = self.route_key if key is None else key
        return next((c for c in self.choices if c.key == key), None)

    def begin_shutdown(self) -> None:
        """From any thread (direct): stop what runs and start nothing new."""
        self.closing.set()
        self.cancel.set()

    @Slot()
    def shutdown(self) -> None:
        self.begin_shutdown()
        self._close_session()
        if self.emulator is not None and self._own_emulator:
            self.emulator.stop()
        self.emulator = None
        thread = self.thread()
        if thread is not None:
            thread.quit()

    def _close_session(self) -> None:
        """Close the shown session (or let go of a foreign one) and forget what was sent on it."""
        session, self.session = self.session, None
        self.writer = None
        self.runtime = None
        if session is not None or self.foreign is not None:
            self.previews_outdated.emit()  # the next open's previews, or "no session", follow
        self.foreign = self.foreign_leaf = None
        self._sent_bodies.clear()
        self._check = None
        if session is not None:
            try:
                session.close()
            except Exception:
                log.exception("closing the session failed")

    @Slot(object)
    def run_op(self, op: Op[Any]) -> None:
        """A feature's background work (``desktop.ui.ops``), answered with ``op_finished``."""
        outcome: OpOutcome = _run_op(self, op)
        if op.changes_session and outcome.error is None:
            self._publish_state()
        self.op_finished.emit(outcome)

    # --- sessions -----------------------------------------------------------------------------

    def _store(self) -> SessionStore:
        return SessionStore(data_dir=self.data_dir)

    def _new(self, workspace: str | None) -> None:
        folder = Path(os.path.realpath(workspace or self.default_workspace or os.getcwd()))
        refused = refused_workspace(folder, home_folder())
        if refused is not None:  # launched from a menu, the folder is home (design A10)
            folder = paths.data_dir(self.data_dir) / "scratch-workspace"
            folder.mkdir(parents=True, exist_ok=True)
            self.message.emit("info", f"{refused}; this new session works in {folder}")
        # A folder the user starts a session in is one they used: reopening it asks nothing.
        TrustStore.at(self.data_dir).confirm_workspace(folder)
        with self._store().create(folder, app_version=__version__) as created:
            path = created.path
        self._open(path, folder, new=True)

    def seed(self) -> SessionSettings:
        """What a new session starts with: the window's settings (design G12)."""
        return SessionSettings(
            route=self.seed_route_key,
            mode=self.seed_mode,
            fallback=self.seed_fallback,
            declarations=load_settings().tools.declarations,
            compaction=self.seed_compaction,
        )

    def _session_choice(self, settings: SessionSettings) -> tuple[RouteChoice | None, str | None]:
        """The route choice for a session's settings, and why the user must choose another one
        before sending (its route is no longer in the catalog, or has no key here)."""
        key = settings.route
        plain = settings.account == "default" and not settings.endpoint
        found = self._choice(key) if plain else None
        if found is not None and found.available:
            return found, None
        try:
            if key.startswith(EMULATOR_FAMILY + "/"):
                if self.emulator is None:
                    return (
                        None,
                        f"This session's route {key} needs the offline emulator, which did not start.",
                    )
                route = emulator_route(key.split("/", 1)[1], self.emulator.url, emulated=True)
            else:
                account = Account.make(settings.account, base_url=settings.endpoint)
                route = route_from_string(key, account=account)
            resolved = resolve_model(route)
        except (RouteError, ValueError):
            resolved = None
        if resolved is None or resolved.source == "unknown":
            return (
                None,
                f"This session's route {key} is no longer in the model catalog: choose a route to continue.",
            )

        api = str(resolved.model["api"])
        if not projector_available(api):
            return (
                None,
                f"This session's route {key} uses {api}, which this app cannot send yet: choose a route.",
            )
        if not route.offline and not self._api_key(route):
            return None, (
                f"This session's route {key} has no API key here (Settings → Accounts): "
                "add one or choose a route to continue."
            )
        label = f"{route.key} ({api})" + (" — offline emulator" if route.offline else "")
        if not plain:
            label += f" — account {settings.account}" + (
                f" at {settings.endpoint}" if settings.endpoint else ""
            )
        choice = RouteChoice(
            key if plain else f"{key}#{settings.account}@{settings.endpoint or ''}", label, route, True
        )
        self.choices = [c for c in self.choices if c.key != choice.key] + [choice]
        return choice, None

    def _sealed(self, recorded: Any, session_id: str) -> bool:
        from desktop.session.assembly import activation_signer  # Lazy: the launch budget (X27).

        signer, _problem = activation_signer(session_id, read_only=True)  # verifying creates nothing
        return bool(verified(recorded, signer.key, session_id))

    def _open(
        self,
        path: Path,
        workspace: Path | None = None,
        *,
        new: bool = False,
        chosen: SessionSettings | None = None,
        indexed: Indexed | None = None,
    ) -> None:
        """Open through the shared assembly, so the window and the CLI see the same session, on
        the session's own route, mode and fallback (design G12). Opening writes nothing."""
        from desktop.session.assembly import SessionConfig, open_session  # Lazy: the launch budget (X27).

        if self._choice(self.seed_route_key) is None:
            raise RuntimeError("no usable route: the emulator did not start and no provider has a key")
        if workspace is None:
            workspace = self._session_workspace(describe(path).cwd)
        self._close_session()
        self.bridge.workspace = str(workspace)
        with bulk_load():
            # First the file's one reading and the timeline's index of it, so the window paints
            # the session while the runtime is still being assembled from that reading (design
            # G9, X26); already shown when the session was named at start.
            if indexed is None:
                indexed = self._send_index(path, workspace)
            reading, index = (None, None) if indexed is None else indexed
            del indexed
            journal = JournalWriter.open(path, read=reading)
            del reading
            try:
                recorded = recorded_settings(journal.rows)
                seed = self.seed()
                settings, refused = effective_settings(
                    recorded,
                    seed,
                    mode_sealed=lambda: self._sealed(recorded, journal.session_id),
                )
                if chosen is not None:  # a fork starts on the route and level the user was shown
                    route_key = self.route_key if self._choice(self.route_key) else chosen.route
                    settings, refused = chosen._replace(route=route_key), None
                choice, needed = self._session_choice(settings)
                if choice is None:  # shown on the seed's route until the user chooses one
                    choice = self._choice(self.seed_route_key)
                    assert choice is not None
                self.route_key, self.mode = choice.key, settings.mode
                self.fallback = _fallback(settings.fallback)
                self.route_needed = needed
                config = SessionConfig(
                    route=choice.route,
                    workspace=workspace,
                    fallback=self.fallback,
                    mode=PermissionMode.parse(self.mode),
                    compaction=settings.compaction,
                    declarations="on-demand" if settings.declarations == "on-demand" else "auto",
                    reasoning=settings.thinking,
                    consent=self._consent,
                )
            except BaseException:
                journal.close()
                raise
            session = open_session(path, config, bridge=self.bridge, journal=journal)
            session.recorded_settings = recorded.settings()
            if needed is None:
                session.record_settings(
                    settings,
                    by="the window",
                    why="a new session" if new else "first record of this session's settings",
                    now=False,
                )
            else:
                session.settings = settings  # recorded once the user chose a route
            ordered = session.runtime.model_rows()
        self.session = session
        self.writer = session.writer
        self.runtime = session.runtime
        self.resolved = session.resolved
        self._bind(changed=False)
        # The index and the rows the open appended (the continuation's system update and notes),
        # placed as the timeline places appended rows; the rows themselves (every row decoded)
        # only if the file changed between its reading and its lock, and was read again.
        rows = session.writer.rows
        shown = (
            IndexedRows(index, rows[len(index) :])
            if index is not None and index.rows is rows
            else DecodedRows(list(ordered))
        )
        painted = threading.Event()
        self.session_opened.emit(
            SessionOpened(
                ShownSession(str(session.writer.path), str(workspace), session.writer.read_only_reason),
                shown,
                diagnostics=[str(d) for d in session.writer.diagnostics],
                # A corrupt cached catalog, as every command reports it (design M1).
                problems=[
                    *session.tools.problems,
                    *(f"model catalog: {p}" for p in active_catalog().problems),
                ],
                skipped_guidance=[f"{s.path}: {s.reason}" for s in scan_guidance(workspace).skipped],
                route_needed=needed,
                pending=_pending(session),
                painted=painted,
            )
        )
        if refused is not None:
            self.message.emit("warning", refused)
        # The window repaints the timeline with the rows the open appended; what follows (status,
        # activation, the compaction preview the window asks for) is seconds of Python on a long
        # session, and a repaint that shares the GIL with it holds the event loop for each row.
        painted.wait(PAINT_WAIT)
        self._publish_state()

    def _workspace_choice(self, recorded: str | None) -> WorkspaceChoice:
        """The workspace rule (design A10) for a recorded folder, as this window sees it: opened
        from ``default_workspace`` (or the process's folder), with the user's confirmations."""
        folder = Path(os.path.realpath(recorded)) if recorded and os.path.isabs(recorded) else None
        if folder is not None and not folder.is_dir():
            folder = None
        opened_from = Path(os.path.realpath(self.default_workspace or os.getcwd()))
        confirmed = TrustStore.at(self.data_dir).confirmed_workspaces()
        return choose_workspace(folder, opened_from, confirmed, home_folder())

    def _session_workspace(self, recorded: str | None) -> Path:
        """The workspace for a session that records ``recorded``: the user's choice (design A10).

        The recorded folder is used as it is when the user opened Pi Desktop from it or confirmed
        it before; a new one is asked about (showing it), and a confirmation is remembered. A
        refused or declined folder leaves the folder Pi Desktop was opened from.
        """
        store = TrustStore.at(self.data_dir)
        choice = self._workspace_choice(recorded)
        if choice.ask and choice.suggested is not None:
            otherwise = (
                f"No: the session works in {choice.folder}, the folder Pi Desktop was opened from."
                if choice.folder is not None
                else "No: the session is not opened."
            )
            text = (
                f"This session was recorded in the folder\n\n{choice.suggested}\n\n"
                "Its file tools would be confined to that folder and its instruction files read "
                f"into the prompt. Use it as this session's workspace?\n\n{otherwise}"
            )
            if self.bridge.ask("Use the session's folder?", text, self.closing):
                store.confirm_workspace(choice.suggested)
                return choice.suggested
        elif choice.refused is not None:
            self.message.emit("warning", f"The session's recorded folder is not used: {choice.refused}.")
        if choice.folder is None:
            raise RuntimeError(
                f"no workspace: {self.default_workspace or os.getcwd()} cannot be one; "
                "open Pi Desktop from a project folder"
            )
        return choice.folder

    def _consent(self, definitions: Sequence[Definition]) -> bool:
        """Ask before a repository's own servers, hooks or extensions first run, showing each
        exact command (design A11); the answer is remembered per repository and command."""
        listed = "\n".join(f"- {d.kind} {d.name}: {d.command}" for d in definitions)
        text = (
            f"The repository's settings file\n{definitions[0].settings}\n"
            f"defines commands that would run on this computer:\n\n{listed}\n\n"
            "Allow them to run for this repository? You are asked again if they change. "
            "No: the session opens without them."
        )
        return self.bridge.ask("Run this repository's commands?", text, self.closing)

    def _welcome(self) -> None:
        workspace = prepare_workspace(paths.data_dir(self.data_dir) / "welcome-workspace")
        self._new(str(workspace))
        seed_welcome(self, workspace)
        # Its note is journaled before the turns: a stop before them must not leave it out of date.
        self._emit_previews(changed=False)

    def _failed(self, what: str, exc: Exception) -> None:
        """An open that failed, said in full; the panes say what is open now."""
        log.exception("%s", what)
        self.message.emit("error", f"{what}: {exc}")
        self._emit_previews(changed=False)

    @Slot(str)
    def new_session(self, workspace: str) -> None:
        try:
            self._new(workspace or None)
        except Exception as exc:
            self._failed("Could not create a session", exc)

    @Slot(str)
    def open_session(self, path: str) -> None:
        try:
            self._open_any(Path(path))
        except Exception as exc:
            self._failed(f"Could not open {path}", exc)

    # --- foreign sessions (design X1, X2) ------------------------------------------------------

    def _open_any(self, path: Path) -> None:
        """Open ``path`` as what its content shows: a Desktop session, a pi or Claude Code
        session (read-only), or say what it looks like and which formats are supported."""
        fmt, description = inspect_ops.file_format(path)
        if fmt == "desktop":
            self._open(path)
        elif fmt in ("pi", "claude-code", "codex"):
            self._open_foreign(path)
        else:
            self.open_problem.emit(OpenProblem("Could not open this file", description))

    def _open_foreign(self, path: Path, leaf: str | None = None) -> None:
        from desktop.session.foreign import ForeignOpenError  # Lazy: the launch budget (X27).

        try:
            session, info = inspect_ops.open_foreign_info(path, leaf)
        except ForeignOpenError as exc:
            self.open_problem.emit(OpenProblem("Could not open this session", str(exc)))
            return
        self._close_session()
        self.foreign = session
        self.foreign_leaf = info.session.foreign.leaf if info.session.foreign is not None else None
        self.session_opened.emit(info)
        self._publish_state()

    @Slot(str)
    def select_branch(self, leaf: str) -> None:
        """Show another branch of the open pi or Claude Code session."""
        if self.foreign is None:
            return
        try:
            info = inspect_ops.branch_info(self.foreign, leaf)
        except KeyError as exc:
            self.message.emit("error", str(exc))
            return
        self.foreign_leaf = leaf
        self.session_opened.emit(info)
        self._publish_state()

    def fork_plan(self, leaf: str | None) -> dict[str, Any]:
        """How "Continue in Pi Desktop" will continue (design X2, G12): on the source's recorded
        route and thinking level when that route is offered here with a key, else on the
        toolbar's route (said, with why and what the first request costs); and in which
        workspace. Asked before the fork is made."""
        if self.foreign is None:
            return {"error": "no pi or Claude Code session is open"}
        context = self.foreign.context(leaf or self.foreign_leaf)
        workspace, where = self._fork_workspace(self.foreign)
        source = "/".join(context.model) if context.model else None
        thinking = context.thinking_level

        def offered(key: str | None) -> RouteChoice | None:
            return self._choice(key) if key and self._route_refusal(key) is None else None

        choice = offered(source)
        asks = None
        if choice is None:
            stand_in = offered(f"{EMULATOR_FAMILY}/{source}") if source else None
            choice = stand_in or self._choice()
            why = "records no route" if source is None else f"route {source} has no API key here"
            instead = "its offline emulator stand-in" if stand_in else "the toolbar's route"
            asks = f"The source session's {why}: it continues on {instead}"
            asks += f" ({choice.key}), starting with a cold cache." if choice else "."
        if choice is None:
            return {"error": "no usable route"}
        level = f", thinking {thinking}" if thinking else ""
        text = f"Continue on {choice.key}{level}, working in {workspace}.{where}"
        if asks:
            text = asks + " " + text + self._fork_cost(choice, leaf)
        return {
            "route": choice.key,
            "thinking": thinking,
            "workspace": str(workspace),
            "asks": asks,
            "text": text,
        }

    def _fork_workspace(self, source: ForeignSession) -> tuple[Path, str]:
        """The folder a continuation works in, by the workspace rule (design A10): the source's
        recorded folder only when the user opened Pi Desktop there or confirmed it before, else
        the folder Pi Desktop was opened from (or the scratch workspace when that one is
        refused); and a sentence on the recorded folder when it is not used."""
        choice = self._workspace_choice(source.cwd)
        where = ""
        if choice.ask and choice.suggested is not None:
            where = (
                f" The source was recorded in {choice.suggested}, which is used only after you "
                "open Pi Desktop there or confirm it."
            )
        elif choice.refused is not None:
            where = f" The source's recorded folder is not used: {choice.refused}."
        if choice.folder is None:
            return paths.data_dir(self.data_dir) / "scratch-workspace", where
        return choice.folder, where

    def _fork_cost(self, choice: RouteChoice, leaf: str | None) -> str:
        """What the fork's first request costs on ``choice`` (a new session: a cold cache)."""
        from desktop.session.foreign import next_request  # Lazy: the launch budget (X27).

        if self.foreign is None:
            return ""
        try:
            model = resolve_model(choice.route).model
            body = next_request(self.foreign, model, leaf=leaf or self.foreign_leaf).body_bytes  # type: ignore[arg-type]
            prediction = predict(model, body, [])
        except Exception as exc:  # a context that does not project there: no figure, still asked
            log.info("costing the continuation failed: %s", exc)
            return ""
        cost = format_cost(float(prediction.cost.get("total", 0.0)))
        return f" Its first request sends about {prediction.total:,} tokens uncached: about {cost}."

    @Slot(str)
    def continue_foreign(self, leaf: str) -> None:
        """Continue in Pi Desktop (X2): fork into a new Desktop session and open it, on the
        route, thinking level and workspace ``fork_plan`` named; the choice is journaled."""
        if self.foreign is None:
            return
        from desktop.session.foreign import fork_to_desktop  # Lazy: the launch budget (X27).

        source = self.foreign
        try:
            plan = self.fork_plan(leaf or None)
            if "error" in plan:
                raise RuntimeError(plan["error"])
            workspace = Path(plan["workspace"])
            workspace.mkdir(parents=True, exist_ok=True)  # the scratch workspace may be new
            # The source is untouched: the fork is a new Desktop session.
            path = fork_to_desktop(
                source, leaf=leaf or self.foreign_leaf, workspace=workspace, data_dir=self.data_dir
            )
            self.route_key = plan["route"]
            chosen = self.seed()._replace(thinking=plan["thinking"])
            self._open(path, workspace, new=True, chosen=chosen)
        except Exception as exc:
            self._failed("Could not continue the session in Pi Desktop", exc)
            return
        self._record(f"continued from the {source.format} session {source.path}")
        self.message.emit("info", f"Continued in a new Pi Desktop session: {path}")

    def session_path(self) -> Path | None:
        """The file of what is shown: the foreign session or the Desktop journal."""
        if self.foreign is not None:
            return self.foreign.path
        return self.writer.path if self.writer is not None else None

    def refresh_catalogs(self) -> list[str]:
        """Refresh the catalogs now (design M1) and re-resolve the route, so its flags follow."""
        outcomes = catalog_cache.refresh_catalogs()
        if self.session is not None:
            self._bind(changed=True)
        elif (choice := self._choice()) is not None:
            self.resolved = resolve_model(choice.route)
        return [outcome.summary() for outcome in outcomes]

    # --- turns --------------------------------------------------------------------------------

    def on_event(self, event: Mapping[str, Any]) -> None:
        """The runtime's event sink: rows to the timeline, sent bodies, coalesced stream snapshots."""
        kind = event.get("type")
        if kind == "row":
            self.previews_outdated.emit()  # the turn's end (or the tab's next showing) brings new ones
            row = event["row"]
            if row.get("type") == "assistant":
                self.streaming.emit(None)
                self._check_prediction(row)
            self.rows_appended.emit((row,))
            return
        if kind == "request":
            request = event["request"]
            body = request.body_bytes
            history = self._sent_bodies.setdefault(self.route_key, [])
            self._dispatched = (self.route_key, body, history[-HISTORY:])
            history.append(body)
            del history[:-HISTORY]
            return
        if kind == "retry_wait":
            self.retry_wait.emit(dict(event))
            return
        if kind == "stream":  # the HTTP dispatcher wraps the client's pi-ai events
            event = event.get("event") or {}
        partial = event.get("partial")
        if isinstance(partial, Mapping):
            now = time.monotonic()
            if now - self._last_stream >= STREAM_INTERVAL:
                self._last_stream = now
                self.streaming.emit(
                    {**partial, "content": [dict(block) for block in partial.get("content") or ()]}
                )

    def _check_prediction(self, row: Mapping[str, Any]) -> None:
        """The request just answered: its cache prediction against the reported usage (P6)."""
        dispatched, self._dispatched = self._dispatched, None
        message = row.get("message")
        usage = message.get("usage") if isinstance(message, Mapping) else None
        if dispatched is None or not isinstance(usage, Mapping) or self.runtime is None:
            return
        key, body, before = dispatched
        if key != self.route_key:
            return
        from desktop.session.inspector import preview as inspector_preview  # Lazy: the launch budget (X27).

        try:
            self._check = {
                **inspector_preview.check_text(self.runtime.route.model, body, before, usage),
                "routeKey": key,
            }
        except Exception as exc:
            log.info("checking the cache prediction failed: %s", exc)

    def prepare_turn(self) -> None:
        """Called directly at the moment the user asks for a turn or a compaction: the only
        place the cancel event is cleared, so an earlier stop cannot cancel it, and a stop
        that comes after the request (even before the worker picks it up) is never lost."""
        if not self.closing.is_set():
            self.cancel.clear()

    def run_turn(self, text: str) -> TurnFinished:
        """One turn on the worker thread (also used by the welcome session)."""
        if self.closing.is_set() or self.runtime is None:
            return TurnFinished(
                "aborted",
                "the app is closing" if self.closing.is_set() else "no session is open",
                unsent=text,
            )
        if self._draft is not None and self._draft == text.strip():
            # The composer's text was sent: the next preview has no draft (the window's own
            # "no draft" comes 300 ms later, after the turn; it then changes nothing).
            self._draft = None
        self.turn_started.emit(text)
        summary = TurnFinished("error")
        try:
            result = self.runtime.run_turn(text, on_event=self.on_event, cancel=self.cancel)
            summary = TurnFinished(result.stopped, result.error)
        except Exception as exc:
            log.exception("turn failed")
            # The user's row among the rows a failed write left (a full disk, design T3): the
            # message was not stored, so it goes back to the composer (read before the note,
            # whose own failed write would replace them).
            unsent = any(
                row["type"] == "user" and row["message"].get("content") == text
                for row in self.runtime.unsaved
            )
            summary = TurnFinished("error", f"{type(exc).__name__}: {exc}", unsent=text if unsent else None)
            self._note("error", f"The turn stopped: {summary.error}")
        finally:
            self.streaming.emit(None)
            self.turn_finished.emit(summary)
        self._publish_state()
        return summary

    def _note(self, level: str, text: str) -> None:
        if self.runtime is None:
            self.message.emit(level, text)
            return
        try:
            self.runtime.note(level, text, self.on_event)
        except Exception:
            self.message.emit(level, text)

    @Slot(str)
    def send(self, text: str) -> None:
        refused: str | None
        if self.runtime is None or self.writer is None:
            level, refused = "error", "No session is open."
        elif self.writer.read_only:
            level, refused = "warning", self.writer.read_only_reason or "This session is read-only."
        else:  # nothing is written until the user chooses a route
            level, refused = "warning", self.route_needed
        if refused is None:
            self.run_turn(text)
            return
        self.message.emit(level, refused)
        self.turn_finished.emit(TurnFinished("error", refused, unsent=text))

    def stop(self) -> None:
        """Called from the GUI thread (direct connection): only sets the cancel event."""
        self.cancel.set()

    @Slot(str)
    def compact(self, focus: str = "") -> None:
        if self.runtime is None or self.closing.is_set():
            self.turn_finished.emit(TurnFinished("error", "No session is open."))
            return
        from desktop.session.runtime import SummaryFailed  # Lazy: the launch budget (X27).

        self.turn_started.emit("compact")
        summary = TurnFinished("compacted")
        try:
            self.runtime.compact(on_event=self.on_event, cancel=self.cancel, reason="manual", focus=focus)
        except SummaryFailed as exc:  # one message: the window shows the turn's error
            summary = TurnFinished("error", str(exc))
        except ValueError as exc:  # nothing to compact yet: a note, not an error
            summary = TurnFinished("nothing to do", note=str(exc))
        except Exception as exc:
            log.exception("compaction failed")
            summary = TurnFinished("error", f"{type(exc).__name__}: {exc}")
            self.message.emit("error", f"Compaction failed: {exc}")
        finally:
            self.turn_finished.emit(summary)
        self._publish_state()

    # --- route, mode, delivery ---------------------------------------------------------------

    @Slot(str)
    def set_route(self, key: str) -> None:
        """The user chose another route for this session (after the window said what it costs):
        refused before anything changes when it is unavailable or has no key, else bound and
        journaled (design G12)."""
        refused = self._route_refusal(key)
        if refused is not None:
            self.message.emit("warning", f"{refused} The route was not changed.")
            self._publish_state()
            return
        needed, self.route_needed = self.route_needed, None
        self.route_key = key
        if "#" not in key:  # a session's own account or endpoint seeds nothing
            self.seed_route_key = key
        self._bind(changed=True)
        self._record(
            "the user chose a route for a session whose route is missing"
            if needed
            else "the user chose another route"
        )
        self._publish_state()

    @Slot(str)
    def set_fallback(self, fallback: str) -> None:
        if fallback in FALLBACKS:
            self.fallback = self.seed_fallback = _fallback(fallback)
            self._bind(changed=True)
            self._record("the user chose another fallback for system updates")
            self._publish_state()

    @Slot(str)
    def set_mode(self, mode: str) -> None:
        if mode not in PERMISSION_MODES:
            self.message.emit("warning", f"Unknown permission mode {mode!r}")
            return
        self.mode = self.seed_mode = mode
        if self.session is not None:
            self.session.gate.set_mode(PermissionMode.parse(mode))  # a new declaration epoch (A7)
            self._record("the user chose another permission mode")
        self._publish_state()

    @Slot(object)
    def set_seeds(self, values: Mapping[str, Any]) -> None:
        """The window's settings for new sessions changed (Settings → New Sessions)."""
        if "compaction" in values:
            self.seed_compaction = _compaction(values.get("compaction"))

    def _record(self, why: str) -> None:
        """Journal the session's settings now: the user changed one (design G12)."""
        session = self.session
        if session is None or self.route_needed is not None:
            return
        choice = self._choice()
        if choice is None:
            return
        route = choice.route
        base = session.settings or self.seed()
        settings = base._replace(
            route=f"{EMULATOR_FAMILY}/{route.key}" if route.offline else route.key,
            account=route.account.name,
            endpoint=None if route.offline else route.account.base_url,
            mode=self.mode,
            fallback=self.fallback,
        )
        try:
            session.record_settings(settings, by="the window", why=why, now=True, on_event=self.on_event)
        except Exception as exc:
            log.exception("journaling the settings failed")
            self.message.emit("error", f"The settings change could not be journaled: {exc}")

    def change_cost(self, what: str, value: str) -> dict[str, Any]:
        """What changing the route or the fallback to ``value`` costs on the next request, and
        whether the change may happen at all (a route without a key is refused before)."""
        # Lazy: the launch budget (X27).
        from desktop.session.inspector.preview import preview_binding
        from desktop.session.inspector.switch_cost import as_json, switch_cost

        runtime, session = self.runtime, self.session
        if runtime is None or session is None:
            return {"allowed": True, "text": ""}
        revoked = len(session.gate.state.active)
        if what == "route":
            refused = self._route_refusal(value)
            if refused is not None:
                return {"allowed": False, "text": refused}
            choice = self._choice(value)
            assert choice is not None
            target = preview_binding(choice.route, self.fallback, session.writer.session_id)
            label = choice.route.key + (" on the offline emulator" if choice.route.offline else "")
            cost = switch_cost(
                runtime,
                target,
                what=f"Switching to {label}",
                sent_now=self._sent_bodies.get(self.route_key) or (),
                sent_target=self._sent_bodies.get(value) or (),
                revoked=revoked,
            )
        elif what == "fallback":
            target = runtime.route._replace(fallback=_fallback(value))
            cost = switch_cost(
                runtime,
                target,
                what=f"Switching the fallback to {value}",
                sent_now=self._sent_bodies.get(self.route_key) or (),
                sent_target=(),
                revoked=0,
                same_cache=True,
            )
        else:  # the permission mode: a new declaration epoch, the prefix stays
            plural = "s" if revoked != 1 else ""
            text = f"Switching the permission mode to {value} starts a new declaration epoch"
            text += f": the activation of {revoked} tool{plural} is revoked." if revoked else "."
            return {"allowed": True, "text": text}
        return {"allowed": True, **as_json(cost)}

    def _route_refusal(self, key: str) -> str | None:
        """Why the session may not move to route ``key``: unavailable, or without a key."""
        choice = self._choice(key)
        if choice is None or not choice.available:
            return f"Route {key} is not available{': ' + choice.why if choice else ''}."
        if not choice.route.offline and not self._api_key(choice.route):
            return f"Route {key} has no API key (Settings → Accounts)."
        return None

    def _api_key(self, route: Route) -> str | None:
        """The route's key: keyring entry ``<provider>/<account>``, else the provider's variable."""
        if route.offline:
            return None
        try:
            key, _info = resolve_api_key(route.provider, keyring_username(route.provider, route.account.name))
            return key
        except Exception:
            log.exception("reading the API key failed")
            return None

    def _bind(self, changed: bool) -> None:
        """Point the open session at the chosen route, delivery and key (in place, no reopen)."""
        # Lazy: the launch budget (X27).
        from desktop.session.assembly import declaration_route, route_binding
        from desktop.session.dispatch import HttpDispatcher

        choice = self._choice()
        session = self.session
        if session is None or choice is None:
            self._publish_state()
            return
        route = choice.route
        resolved = resolve_model(route) if changed else session.resolved
        # Projections carry the credential placeholder; the dispatcher swaps in the key per request.
        session.runtime.route = route_binding(
            resolved, self.fallback, session.writer.session_id, reasoning=session.config.reasoning
        )
        cloud = CloudAuth.offline() if route.offline else CloudAuth()
        session.runtime.dispatcher = HttpDispatcher(lambda: self._api_key(route), cloud=cloud)
        if changed:
            session.config.route = route
            session.config.fallback = self.fallback
            session.resolved = resolved
            session.gate.set_route(declaration_route(resolved, route))  # a new declaration epoch (A7)
        self.resolved = resolved

    # --- what the inspector shows -----------------------------------------------------------

    def cache_session(self) -> dict[str, Any] | None:
        """The session's hit ratio, misses with causes and places, re-cached tokens, as
        ``status`` gives them (design P13), for the Usage tab."""
        if self.runtime is None:
            return None
        try:
            summary = transcript_summary(self.runtime.view().messages).to_json()
        except Exception as exc:  # a transcript the reader cannot sum: the panel keeps its text
            log.info("cache summary failed: %s", exc)
            return None
        # Only the misses the panel lists cross to the GUI thread: a long session has tens of
        # thousands, and handing them all over stalled the window (design G9).
        summary["missList"] = list(summary.get("missList") or ())[-SHOWN_MISSES:]
        return summary

    def _publish_state(self) -> None:
        if self.resolved is not None:
            self.status_changed.emit(
                RouteStatus(
                    tuple(self.choices),
                    self.route_key,
                    self.mode,
                    self.fallback,
                    {
                        **capability_info(self.resolved, self.fallback),
                        **catalog_cache.route_flags(self.resolved),
                    },
                    str(self.session_path() or ""),
                    self.route_needed,
                )
            )
        self.refresh_activation()
        self._emit_previews()

    def _emit_previews(self, changed: bool = True) -> None:
        """Every shown preview again, when the payload tab is on screen (else on its next show);
        ``changed``: the state they describe changed, so the shown ones are out of date."""
        if changed:
            self.previews_outdated.emit()
        for slot, key in list(self._preview_keys.items()):
            if not self._previews_shown or self.closing.is_set():  # a long session's preview takes seconds
                return
            self._emit_preview(slot, key)

    @Slot(bool)
    def set_previews_shown(self, shown: bool) -> None:
        """The payload tab was shown or hidden; shown, it gets previews of the present state."""
        self._previews_shown = shown
        self._emit_previews(changed=False)  # the same state again, unless marked out of date before

    @Slot(str, str)
    def request_preview(self, slot: str, key: str) -> None:
        self._preview_keys[slot] = key
        if self._previews_shown:
            self._emit_preview(slot, key)

    @Slot(str)
    def drop_preview(self, slot: str) -> None:
        """The slot's pane was hidden ("No comparison"): its previews are no longer computed."""
        self._preview_keys.pop(slot, None)

    def _emit_preview(self, slot: str, key: str) -> None:
        """The next request on route ``key`` (empty: the current route): the pi or Claude Code
        session's at the shown branch, or this session's, with the composer's text the first
        request of the turn that sending it would start. A pane never waits for one there is
        none of: it gets the error instead."""
        key = key or self.route_key
        choice = self._choice(key)
        preview: dict[str, Any]
        if self.foreign is None and (self.runtime is None or self.writer is None):
            preview = {"route": key, "error": "no session is open"}
        elif choice is None:
            preview = {"route": key, "error": f"unknown route {key!r}"}
        elif self.foreign is not None:
            preview = inspect_ops.foreign_preview(self.foreign, self.foreign_leaf, choice)
        else:
            # Lazy: the launch budget (X27).
            from desktop.session.inspector import preview as inspector_preview

            assert self.runtime is not None and self.writer is not None
            preview = inspector_preview.route_preview(
                self.runtime,
                choice,
                current=key == self.route_key,
                fallback=self.fallback,
                session_id=self.writer.session_id,
                sent=self._sent_bodies.get(key),
                draft=self._draft,
                # The last request's check belongs to the route it was sent on.
                check=self._check if self._check and self._check.get("routeKey") == key else None,
            )
        self.preview_ready.emit(slot, preview)

    @Slot(object)
    def set_draft(self, draft: str | None) -> None:
        """The composer's text changed (debounced by the window): the previews follow it."""
        if (draft or None) == self._draft:
            return  # the same next request: nothing to compute or to mark out of date
        starting = self._draft is None
        self._draft = draft or None
        if starting and self._draft is not None:
            self._warm()
        self._emit_previews()

    def _warm(self) -> None:
        """The user started writing a message: the history is projected now, so that sending
        it pays for the message only (design X31). A session that cannot send is left alone."""
        if self.runtime is None or self.writer is None or self.writer.read_only or self.route_needed:
            return
        try:
            # The committed history is a long session's objects: kept out of every later
            # collection's walk (``bulk_load``), or the turn would pay that walk.
            with bulk_load():
                self.runtime.warm(self._draft or "")
        except Exception:  # the turn meets and reports the same problem; a draft never fails
            log.debug("warming the next request failed", exc_info=True)

    @Slot()
    def refresh_activation(self) -> None:
        from desktop.session.inspector.activation import activation_info  # Lazy: the launch budget (X27).

        if self.session is None:
            self.activation_ready.emit(activation_info(None, []))
            return
        self.activation_ready.emit(activation_info(self.session.gate, self.session.runtime.view().messages))


def _pending(session: OpenSession) -> str | None:
    """What the next turn journals before its message, as ``status`` says it (design G12)."""
    if session.read_only or not len(session.writer.rows):  # a new session's baseline is no news
        return None
    if session.runtime.has_pending_update():
        return "A system update is pending (changed catalog, declarations or skills): it is journaled with the next turn."
    return None


def _write_bytes(path: str, data: bytes) -> str:
    """An export holds conversation: a new file is 0600, an overwritten one keeps its mode
    (design X22)."""
    try:
        replace_file(Path(path), data)
    except OSError as exc:
        raise OSError(f"Could not save {path}: {exc.strerror or exc}") from exc
    return f"Saved {len(data):,} bytes to {path}"


def _write_settings(values: Mapping[str, Any]) -> None:
    """Window preferences are written on the worker, never on the GUI thread (QSettings syncs)."""
    settings = QSettings()
    # Open Recent lists session paths: a settings file this makes is the user's alone (design
    # X22). On Windows the settings are in the user's registry hive.
    target = Path(settings.fileName())
    created = os.name != "nt" and not target.exists()
    if created:
        make_private_dirs(target.parent)
    for key, value in values.items():
        settings.setValue(key, value)
    settings.sync()
    if created and target.exists():
        target.chmod(0o600)  # Qt's later rewrites keep the mode of the file they replace


class WorkerClient(QObject):
    """The GUI side of the boundary: every request to the worker is one of these signals."""

    start = Signal(object)
    send = Signal(str)
    compact = Signal(str)
    new_session = Signal(str)
    open_session = Signal(str)
    set_route = Signal(str)
    set_mode = Signal(str)
    set_fallback = Signal(str)
    set_seeds = Signal(object)
    request_preview = Signal(str, str)
    drop_preview = Signal(str)
    set_previews_shown = Signal(bool)
    set_draft = Signal(object)
    select_branch = Signal(str)
    continue_foreign = Signal(str)
    refresh_activation = Signal()
    save_bytes = Signal(str, bytes)
    save_settings = Signal(object)
    shutdown = Signal()
    # Delivered directly (the worker may be busy in a turn); the receivers only set events.
    stop = Signal()
    permission_answered = Signal(int, bool, bool)

    def __init__(self, worker: SessionWorker, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.worker = worker
        self.ops = WorkerOps(worker, self)
        direct = Qt.ConnectionType.DirectConnection
        # The cancel event is cleared the moment a turn is asked for, before it is queued.
        self.send.connect(worker.prepare_turn, direct)
        self.compact.connect(worker.prepare_turn, direct)
        queued = Qt.ConnectionType.QueuedConnection
        pairs: Sequence[tuple[Any, Any]] = (
            (self.start, worker.start),
            (self.send, worker.send),
            (self.compact, worker.compact),
            (self.new_session, worker.new_session),
            (self.open_session, worker.open_session),
            (self.set_route, worker.set_route),
            (self.set_mode, worker.set_mode),
            (self.set_fallback, worker.set_fallback),
            (self.set_seeds, worker.set_seeds),
            (self.request_preview, worker.request_preview),
            (self.drop_preview, worker.drop_preview),
            (self.set_previews_shown, worker.set_previews_shown),
            (self.set_draft, worker.set_draft),
            (self.select_branch, worker.select_branch),
            (self.continue_foreign, worker.continue_foreign),
            (self.refresh_activation, worker.refresh_activation),
            (self.shutdown, worker.shutdown),
        )
        for signal, slot in pairs:
            signal.connect(slot, queued)
        self.stop.connect(worker.stop, direct)
        self.permission_answered.connect(worker.bridge.answer, direct)
        self.save_bytes.connect(self._save_bytes)
        self.save_settings.connect(self._save_settings)

    def _save_bytes(self, path: str, data: bytes) -> None:
        self.ops.query(
            lambda _w: _write_bytes(path, data),
            lambda note: self.worker.message.emit("info", note),
            failed=lambda error: self.worker.message.emit("error", error),
        )

    def _save_settings(self, values: Mapping[str, Any]) -> None:
        self.ops.query(lambda _w: _write_settings(values), label="saving the window settings")


#: The interpreter's switch interval while the window runs (see ``start_worker``).
GIL_SWITCH_SECONDS = 0.001


def start_worker(
    *,
    data_dir: str | None = None,
    workspace: str | None = None,
    offline: bool = True,
    emulator: Emulator | None = None,
) -> tuple[QThread, SessionWorker, WorkerClient]:
    """Create the worker thread and its client; call ``client.start.emit(options)`` to begin.

    The window's thread and the worker share the interpreter lock. A repaint of the timeline
    gives it up around each Qt call and takes it back after, and while the worker runs Python
    each take waits out the switch interval: at Python's 5 ms, one repaint of the 100,000-row
    timeline during the post-open work froze the window for 250 to 550 ms; at 1 ms the worst
    gap is 20 to 60 ms (``tests/ui/test_open_large.py``, design G9).
    """
    sys.setswitchinterval(GIL_SWITCH_SECONDS)
    thread = QThread()
    thread.setObjectName("pi-session-worker")
    worker = SessionWorker(data_dir=data_dir, workspace=workspace, offline=offline, emulator=emulator)
    worker.moveToThread(thread)
    worker.bridge.moveToThread(thread)
    client = WorkerClient(worker)
    thread.start()
    return thread, worker, client


def stop_worker(thread: QThread, worker: SessionWorker, client: WorkerClient, timeout_ms: int = 8000) -> bool:
    """Stop any turn, close the session on the worker thread, and wait for the thread to end.

    The ``QThread`` is never left running (design D1): if the wait times out (a slow disk, a
    loaded machine, a provider that does not answer), cancel again and wait without a limit.
    Returns whether the thread ended within ``timeout_ms``.
    """
    worker.begin_shutdown()
    client.shutdown.emit()
    if thread.wait(QDeadlineTimer(timeout_ms)):
        return True
    log.warning("the worker thread did not stop within %d ms; cancelling again and waiting", timeout_ms)
    worker.begin_shutdown()
    thread.wait(QDeadlineTimer(QDeadlineTimer.ForeverConstant.Forever))
    return False
