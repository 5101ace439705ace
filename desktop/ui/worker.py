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
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QDeadlineTimer, QObject, Qt, QThread, Signal, Slot

from desktop import __version__
from desktop.host.journal import JournalWriter, SessionStore
from desktop.host.journal.lines import JournalRows
from desktop.pi.delivery import FALLBACKS, FallbackDelivery
from desktop.pi.routes import ResolvedModel, Route
from desktop.session.inspector.routes import (
    PUBLISHED_ROUTES,
    RouteChoice,
    capability_info,
    pick_route,
    route_choices,
)
from desktop.ui import inspect_ops
from desktop.ui.bridge import QtPermissionBridge
from desktop.ui.catalog_status import route_flags
from desktop.ui.ops import Op, OpOutcome, WorkerOps
from desktop.ui.ops import run_op as _run_op
from desktop.ui.row_index import RowIndex, build_index, bulk_load

if TYPE_CHECKING:  # the engine is imported when a session opens, after the first paint
    from desktop.emulator import Emulator
    from desktop.session.assembly import OpenSession
    from desktop.session.foreign import ForeignSession
    from desktop.session.runtime import SessionRuntime

log = logging.getLogger(__name__)

PERMISSION_MODES = ("ask", "accept-edits", "read-only", "full-access")
HISTORY = 8
"""Bodies per route the cache view remembers (the provider's cache holds what they wrote)."""
PAINT_WAIT = 3.0
"""Seconds the worker waits at most for the window to paint a session (its index, then the
opened session) before it runs Python again."""
STREAM_INTERVAL = 0.04
"""Seconds between streamed snapshots sent to the GUI (coalesced; the final one always goes)."""


def _fallback(value: object) -> FallbackDelivery:
    return "attributed" if value == "attributed" else "folded"


class SessionWorker(QObject):
    # --- worker -> GUI (one object per signal, never copied by Qt) -----------------------------
    started = Signal(object)
    """{"initialRoute": provider the first launch decided on, "reason": why}"""
    session_indexed = Signal(object)
    """{"path", "cwd", "index": RowIndex, "painted": threading.Event the window sets once it has
    painted}: the timeline can paint before the session is open"""
    session_opened = Signal(object)
    """{"path", "id", "cwd", "readOnly", "diagnostics", "problems"} and either "index" (the
    RowIndex sent before, when it lists the opened journal's first rows) with "appended" (the
    rows the open journaled after them, dicts in journal order) or "rows" (dicts, model order);
    a Desktop session's also "painted", a threading.Event the window sets once it has painted it"""
    rows_appended = Signal(object)
    streaming = Signal(object)
    turn_started = Signal(str)
    turn_finished = Signal(object)
    status_changed = Signal(object)
    preview_ready = Signal(str, object)
    previews_outdated = Signal()
    """The previews shown no longer describe the next request (rows appended, the route,
    fallback, mode or draft changed, a session opened or closed): new ones follow, now while the
    payload tab is shown, else on its next showing (design G4)."""
    activation_ready = Signal(object)
    permission_requested = Signal(int, object)
    sessions_listed = Signal(object)
    message = Signal(str, str)
    op_finished = Signal(object)
    open_problem = Signal(object)
    """{"title", "text"}: a file that could not be opened, said in full (design X1)."""

    def __init__(
        self, *, data_dir: str | None = None, workspace: str | None = None, offline: bool = True
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
        self.session: OpenSession | None = None
        self.writer: JournalWriter | None = None
        self.runtime: SessionRuntime | None = None
        self.emulator: Emulator | None = None
        self.resolved: ResolvedModel | None = None
        self.choices: list[RouteChoice] = []
        self.route_key = ""
        self.mode = "ask"
        self.fallback: FallbackDelivery = "folded"
        self._sent: dict[str, bytes] = {}
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
        from desktop.emulator import Emulator

        self.emulator = Emulator().start()
        origin: str | None = self.emulator.url
        from desktop.host import catalog_cache

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
        self.route_key = pick_route(self.choices, wanted)
        self.mode = str(options.get("mode") or "ask")
        self.fallback = _fallback(options.get("fallback"))
        try:
            if early is not None:
                self._open(Path(str(path)), index=early)
            elif path and Path(str(path)).is_file():
                self._open_any(Path(str(path)))
            elif self._first_run(options.get("firstRun", "auto")):
                self._welcome()
            else:
                self._new(self.default_workspace)
        except Exception as exc:
            log.exception("could not open a session")
            self.message.emit("error", f"Could not open a session: {exc}")
            self._emit_previews(changed=False)

    def _index_early(self, path: Path) -> RowIndex | None:
        """The row index of a Desktop session named at start, sent to the window (and painted)
        before anything else runs; None for any other file (opened as before)."""
        try:
            if not path.is_file() or inspect_ops.file_format(path)[0] != "desktop":
                return None
        except Exception:
            return None
        return self._send_index(path, None)

    def _send_index(self, path: Path, workspace: Path | None) -> RowIndex | None:
        """Build the timeline's index, show it and wait until the window painted it."""
        index: RowIndex | None = None
        try:
            index = build_index(path)
        except OSError as exc:
            log.info("no row index for %s: %s", path, exc)
        if index is not None:
            painted = threading.Event()
            cwd = "" if workspace is None else str(workspace)
            self.session_indexed.emit({"path": str(path), "cwd": cwd, "index": index, "painted": painted})
            # Let the window paint and lay the rows out before the journal is read again:
            # the two would share the GIL, and every layout call into the item model would
            # wait for it (bounded, for a window that never paints).
            painted.wait(PAINT_WAIT)
        return index

    def _initial_provider(self) -> str:
        """The first launch's route (environment and keyring: worker thread only, design D3)."""
        from desktop.host.first_run import initial_route

        if self.offline:
            provider, reason = "emulator", "offline only"
        else:
            decision = initial_route()
            provider, reason = decision.provider, decision.reason
        log.info("initial route: %s (%s)", provider, reason)
        self.started.emit({"initialRoute": provider, "reason": reason})
        return provider

    def _keyed_providers(self) -> list[str]:
        """Providers of the offered routes that have a key (keyring or environment)."""
        from desktop.host.accounts import keyring_username, resolve_api_key

        found = []
        for provider in sorted({p.split("/", 1)[0] for p in PUBLISHED_ROUTES}):
            key, _info = resolve_api_key(provider, keyring_username(provider))
            if key:
                found.append(provider)
        return found

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
        if self.emulator is not None:
            self.emulator.stop()
            self.emulator = None
        thread = self.thread()
        if thread is not None:
            thread.quit()

    def _close_session(self) -> None:
        session, self.session = self.session, None
        self.writer = None
        self.runtime = None
        if session is not None or self.foreign is not None:
            self.previews_outdated.emit()  # the next open's previews, or "no session", follow
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
        folder = Path(workspace or self.default_workspace or os.getcwd())
        with self._store().create(folder, app_version=__version__) as created:
            path = created.path
        self._open(path, folder)

    def _open(self, path: Path, workspace: Path | None = None, index: RowIndex | None = None) -> None:
        """Open through the shared assembly, so the window and the CLI see the same session."""
        from desktop.host.journal.store import describe
        from desktop.host.permissions import PermissionMode
        from desktop.session.assembly import SessionConfig, open_session

        choice = self._choice()
        if choice is None:
            raise RuntimeError("no usable route: the emulator did not start and no provider has a key")
        if workspace is None:
            cwd = describe(path).cwd
            workspace = (
                Path(cwd) if cwd and Path(cwd).is_dir() else Path(self.default_workspace or os.getcwd())
            )
        self._close_session()
        self.foreign = self.foreign_leaf = None
        self._sent_bodies.clear()
        self._check = None
        config = SessionConfig(
            route=choice.route,
            workspace=workspace,
            fallback=self.fallback,
            mode=PermissionMode.parse(self.mode),
        )
        self.bridge.workspace = str(workspace)
        with bulk_load():
            # First the timeline's index (one pass over the file), so the window paints the
            # session while the runtime is still being assembled from the same file (design G9);
            # already shown when the session was named at start.
            if index is None:
                index = self._send_index(path, workspace)
            session = open_session(path, config, bridge=self.bridge)
            ordered = session.runtime.model_rows()
        self.session = session
        self.writer = session.writer
        self.runtime = session.runtime
        self.resolved = session.resolved
        self._bind(changed=False, publish=False)
        self._sent.clear()
        # The index and the rows the open appended (the continuation's system update and notes),
        # placed as the timeline places appended rows; the rows themselves only if the index ever
        # disagrees with the journal (every row decoded then).
        appended = _appended_to(index, session.writer.rows, ordered.ids())
        shown: dict[str, Any] = (
            {"rows": list(ordered)} if appended is None else {"index": index, "appended": appended}
        )
        painted = threading.Event()
        self.session_opened.emit(
            {
                "path": str(session.writer.path),
                "id": session.writer.session_id,
                "cwd": str(workspace),
                "readOnly": session.writer.read_only_reason,
                **shown,
                "diagnostics": [str(d) for d in session.writer.diagnostics],
                "problems": list(session.tools.problems),
                "painted": painted,
            }
        )
        # The window repaints the timeline with the rows the open appended; what follows (status,
        # activation, the compaction preview the window asks for) is seconds of Python on a long
        # session, and a repaint that shares the GIL with it holds the event loop for each row.
        painted.wait(PAINT_WAIT)
        self._publish_state()

    def _welcome(self) -> None:
        from desktop.ui.welcome import prepare_workspace, seed_welcome

        workspace = prepare_workspace(self._welcome_folder())
        self._new(str(workspace))
        seed_welcome(self, workspace)
        # Its note is journaled before the turns: a stop before them must not leave it out of date.
        self._emit_previews(changed=False)

    def _welcome_folder(self) -> Path:
        from desktop.host import paths

        return paths.data_dir(self.data_dir) / "welcome-workspace"

    @Slot(str)
    def new_session(self, workspace: str) -> None:
        try:
            self._new(workspace or None)
        except Exception as exc:
            log.exception("new session failed")
            self.message.emit("error", f"Could not create a session: {exc}")
            self._emit_previews(changed=False)  # the panes say what is open now

    @Slot(str)
    def open_session(self, path: str) -> None:
        try:
            self._open_any(Path(path))
        except Exception as exc:
            log.exception("open failed")
            self.message.emit("error", f"Could not open {path}: {exc}")
            self._emit_previews(changed=False)  # the panes say what is open now

    # --- foreign sessions (design X1, X2) ------------------------------------------------------

    def _open_any(self, path: Path) -> None:
        """Open ``path`` as what its content shows: a Desktop session, a pi or Claude Code
        session (read-only), or say what it looks like and which formats are supported."""
        fmt, description = inspect_ops.file_format(path)
        if fmt == "desktop":
            self._open(path)
        elif fmt in ("pi", "claude-code"):
            self._open_foreign(path)
        else:
            self.open_problem.emit({"title": "Could not open this file", "text": description})

    def _open_foreign(self, path: Path, leaf: str | None = None) -> None:
        from desktop.session.foreign import ForeignOpenError

        try:
            session, info = inspect_ops.open_foreign_info(path, leaf)
        except ForeignOpenError as exc:
            self.open_problem.emit({"title": "Could not open this session", "text": str(exc)})
            return
        self._close_session()
        self.foreign, self.foreign_leaf = session, info["foreign"]["leaf"]
        self._sent_bodies.clear()
        self._sent.clear()
        self._check = None
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

    @Slot(str)
    def continue_foreign(self, leaf: str) -> None:
        """Continue in Pi Desktop (X2): fork into a new Desktop session and open it."""
        if self.foreign is None:
            return
        try:
            path = inspect_ops.fork(
                self.foreign,
                leaf or self.foreign_leaf,
                Path(self.default_workspace or os.getcwd()),
                self.data_dir,
            )
            self._open(path)
        except Exception as exc:
            log.exception("continuing the session failed")
            self.message.emit("error", f"Could not continue the session in Pi Desktop: {exc}")
            self._emit_previews(changed=False)  # the panes say what is open now
            return
        self.message.emit("info", f"Continued in a new Pi Desktop session: {path}")

    def session_path(self) -> Path | None:
        """The file of what is shown: the foreign session or the Desktop journal."""
        if self.foreign is not None:
            return self.foreign.path
        return self.writer.path if self.writer is not None else None

    def refresh_catalogs(self) -> list[str]:
        """Refresh the catalogs now (design M1) and re-resolve the route, so its flags follow."""
        from desktop.host.catalog_cache import refresh_catalogs

        outcomes = refresh_catalogs()
        if self.session is not None:
            self._bind(changed=True, publish=False)
        elif self._choice() is not None:
            from desktop.pi.routes import resolve_model

            choice = self._choice()
            assert choice is not None
            self.resolved = resolve_model(choice.route)
        return [outcome.summary() for outcome in outcomes]

    @Slot()
    def list_sessions(self) -> None:
        try:
            infos = self._store().list()
        except OSError as exc:
            self.message.emit("error", f"Could not list sessions: {exc}")
            return
        self.sessions_listed.emit(
            [
                {"path": str(i.path), "id": i.id, "cwd": i.cwd, "created": i.created_ms, "problem": i.problem}
                for i in infos[:200]
            ]
        )

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
            self._sent[self.route_key] = body
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

    _on_event = on_event  # the name the welcome session used before

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
        from desktop.session.inspector import preview as inspector_preview

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

    def run_turn(self, text: str) -> dict[str, Any]:
        """One turn on the worker thread (also used by the welcome session)."""
        summary: dict[str, Any] = {"stopped": "error", "error": None, "requests": 0}
        if self.closing.is_set() or self.runtime is None:
            summary["stopped"] = "aborted"
            summary["error"] = "the app is closing" if self.closing.is_set() else "no session is open"
            return summary
        if self._draft is not None and self._draft == text.strip():
            # The composer's text was sent: the next preview has no draft (the window's own
            # "no draft" comes 300 ms later, after the turn; it then changes nothing).
            self._draft = None
        self.turn_started.emit(text)
        try:
            result = self.runtime.run_turn(text, on_event=self.on_event, cancel=self.cancel)
            summary = {"stopped": result.stopped, "error": result.error, "requests": result.requests}
        except Exception as exc:
            log.exception("turn failed")
            summary["error"] = f"{type(exc).__name__}: {exc}"
            self._note("error", f"The turn stopped: {summary['error']}")
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
        if self.runtime is None or self.writer is None:
            self.message.emit("error", "No session is open.")
            self.turn_finished.emit({"stopped": "error", "error": "No session is open.", "requests": 0})
            return
        if self.writer.read_only:
            reason = self.writer.read_only_reason or "This session is read-only."
            self.message.emit("warning", reason)
            self.turn_finished.emit({"stopped": "error", "error": reason, "requests": 0})
            return
        self.run_turn(text)

    def stop(self) -> None:
        """Called from the GUI thread (direct connection): only sets the cancel event."""
        self.cancel.set()

    @Slot(str)
    def compact(self, focus: str = "") -> None:
        if self.runtime is None or self.closing.is_set():
            self.turn_finished.emit({"stopped": "error", "error": "No session is open.", "requests": 0})
            return
        from desktop.session.runtime import SummaryFailed

        self.turn_started.emit("compact")
        summary: dict[str, Any] = {"stopped": "compacted", "error": None, "requests": 1}
        try:
            self.runtime.compact(on_event=self.on_event, cancel=self.cancel, reason="manual", focus=focus)
        except (SummaryFailed, ValueError) as exc:
            summary = {"stopped": "error", "error": str(exc), "requests": 1}
            self.message.emit("warning", str(exc))
        except Exception as exc:
            log.exception("compaction failed")
            summary = {"stopped": "error", "error": f"{type(exc).__name__}: {exc}", "requests": 1}
            self.message.emit("error", f"Compaction failed: {exc}")
        finally:
            self.turn_finished.emit(summary)
        self._publish_state()

    # --- route, mode, delivery ---------------------------------------------------------------

    @Slot(str)
    def set_route(self, key: str) -> None:
        choice = self._choice(key)
        if choice is None or not choice.available:
            self.message.emit(
                "warning", f"Route {key} is not available{': ' + choice.why if choice else ''}."
            )
            self._publish_state()
            return
        self.route_key = key
        self._bind(changed=True)

    @Slot(str)
    def set_fallback(self, fallback: str) -> None:
        if fallback in FALLBACKS:
            self.fallback = _fallback(fallback)
            self._bind(changed=True)

    @Slot(str)
    def set_mode(self, mode: str) -> None:
        if mode not in PERMISSION_MODES:
            self.message.emit("warning", f"Unknown permission mode {mode!r}")
            return
        self.mode = mode
        if self.session is not None:
            from desktop.host.permissions import PermissionMode

            self.session.gate.set_mode(PermissionMode.parse(mode))  # a new declaration epoch (A7)
        self._publish_state()

    def _api_key(self, route: Route) -> str | None:
        """The route's key: keyring entry ``<provider>/<account>``, else the provider's variable."""
        if route.offline:
            return None
        try:
            from desktop.host.accounts import keyring_username, resolve_api_key

            key, _info = resolve_api_key(route.provider, keyring_username(route.provider, route.account.name))
            return key
        except Exception:
            log.exception("reading the API key failed")
            return None

    def _bind(self, changed: bool, publish: bool = True) -> None:
        """Point the open session at the chosen route, delivery and key (in place, no reopen)."""
        from desktop.host.providers.cloud_auth import CloudAuth
        from desktop.pi.routes import resolve_model
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
        session.runtime.route = route_binding(resolved, self.fallback, session.writer.session_id)
        cloud = CloudAuth.offline() if route.offline else CloudAuth()
        session.runtime.dispatcher = HttpDispatcher(lambda: self._api_key(route), cloud=cloud)
        if changed:
            session.config.route = route
            session.config.fallback = self.fallback
            session.resolved = resolved
            session.gate.set_route(declaration_route(resolved, route))  # a new declaration epoch (A7)
        self.resolved = resolved
        if publish:
            self._publish_state()

    # --- what the inspector shows -----------------------------------------------------------

    def _publish_state(self) -> None:
        if self.resolved is not None:
            status = {
                "routes": [
                    {"key": c.key, "label": c.label, "available": c.available, "why": c.why}
                    for c in self.choices
                ],
                "routeKey": self.route_key,
                "mode": self.mode,
                "fallback": self.fallback,
                "capability": {
                    **capability_info(self.resolved, self.fallback),
                    **route_flags(self.resolved),
                },
                "path": str(self.session_path() or ""),
                "readOnly": self.writer.read_only_reason if self.writer is not None else None,
            }
            self.status_changed.emit(status)
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
        if self.foreign is not None:
            self.preview_ready.emit(slot, self.foreign_preview(key))
            return
        if self.runtime is None:  # never leave a pane waiting for a request there is none of
            self.preview_ready.emit(slot, {"route": key or self.route_key, "error": "no session is open"})
            return
        self.preview_ready.emit(slot, self.preview(key))

    @Slot(object)
    def set_draft(self, draft: str | None) -> None:
        """The composer's text changed (debounced by the window): the previews follow it."""
        if (draft or None) == self._draft:
            return  # the same next request: nothing to compute or to mark out of date
        self._draft = draft or None
        self._emit_previews()

    def foreign_preview(self, key: str = "") -> dict[str, Any]:
        """The next request of the pi or Claude Code session at the shown branch, on any route."""
        key = key or self.route_key
        choice = self._choice(key)
        if choice is None or self.foreign is None:
            return {"route": key, "error": f"unknown route {key!r}"}
        return inspect_ops.foreign_preview(self.foreign, self.foreign_leaf, choice)

    def preview(self, key: str = "", draft: str | None = None) -> dict[str, Any]:
        """The next request for the current route (``key`` empty) or another route; with
        ``draft`` (else the composer's text), the first request of the turn that sending it
        would start."""
        key = key or self.route_key
        choice = self._choice(key)
        if choice is None or self.runtime is None or self.writer is None:
            return {"route": key, "error": f"unknown route {key!r}" if choice is None else "no session"}
        from desktop.session.inspector import preview as inspector_preview

        return inspector_preview.route_preview(
            self.runtime,
            choice,
            current=key == self.route_key,
            fallback=self.fallback,
            session_id=self.writer.session_id,
            sent=self._sent_bodies.get(key) or self._sent.get(key),
            draft=draft if draft is not None else self._draft,
            # The last request's check belongs to the route it was sent on.
            check=self._check if self._check and self._check.get("routeKey") == key else None,
        )

    @Slot()
    def refresh_activation(self) -> None:
        from desktop.session.inspector.activation import activation_info

        if self.session is None:
            self.activation_ready.emit(activation_info(None, []))
            return
        self.activation_ready.emit(activation_info(self.session.gate, self.session.runtime.view().messages))


def _appended_to(
    index: RowIndex | None, rows: JournalRows, model_ids: Sequence[object]
) -> list[dict[str, Any]] | None:
    """The rows after the indexed ones, when the index lists the journal's first rows and the
    timeline's placing of the rest (``TimelineModel.append_rows``) gives the journal's model
    order; None otherwise."""
    if index is None or len(index) > len(rows):
        return None
    shown: list[object] = list(index.ids)
    for number in range(len(index), len(rows)):
        target = rows.anchors.get(number)
        position = shown.index(target) if target is not None and target in shown else len(shown)
        shown.insert(position, rows.row_id(number))
    if shown != list(model_ids):
        return None
    return rows[len(index) :]


def _write_bytes(path: str, data: bytes) -> str:
    try:
        Path(path).write_bytes(data)
    except OSError as exc:
        raise OSError(f"Could not save {path}: {exc.strerror or exc}") from exc
    return f"Saved {len(data):,} bytes to {path}"


def _write_settings(values: Mapping[str, Any]) -> None:
    """Window preferences are written on the worker, never on the GUI thread (QSettings syncs)."""
    from PySide6.QtCore import QSettings

    settings = QSettings()
    for key, value in values.items():
        settings.setValue(key, value)
    settings.sync()


class WorkerClient(QObject):
    """The GUI side of the boundary: every request to the worker is one of these signals."""

    start = Signal(object)
    send = Signal(str)
    compact = Signal(str)
    new_session = Signal(str)
    open_session = Signal(str)
    list_sessions = Signal()
    set_route = Signal(str)
    set_mode = Signal(str)
    set_fallback = Signal(str)
    request_preview = Signal(str, str)
    drop_preview = Signal(str)
    previews_shown = Signal(bool)
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
        queued = Qt.ConnectionType.QueuedConnection
        # The cancel event is cleared the moment a turn is asked for, before it is queued.
        self.send.connect(worker.prepare_turn, direct)
        self.compact.connect(worker.prepare_turn, direct)
        pairs: Sequence[tuple[Any, Any]] = (
            (self.start, worker.start),
            (self.send, worker.send),
            (self.compact, worker.compact),
            (self.new_session, worker.new_session),
            (self.open_session, worker.open_session),
            (self.list_sessions, worker.list_sessions),
            (self.set_route, worker.set_route),
            (self.set_mode, worker.set_mode),
            (self.set_fallback, worker.set_fallback),
            (self.request_preview, worker.request_preview),
            (self.drop_preview, worker.drop_preview),
            (self.previews_shown, worker.set_previews_shown),
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


def start_worker(
    *, data_dir: str | None = None, workspace: str | None = None, offline: bool = True
) -> tuple[QThread, SessionWorker, WorkerClient]:
    """Create the worker thread and its client; call ``client.start.emit(options)`` to begin."""
    thread = QThread()
    thread.setObjectName("pi-session-worker")
    worker = SessionWorker(data_dir=data_dir, workspace=workspace, offline=offline)
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
