"""The one worker thread that owns the session (SPEC §1): journal writer, runtime, bridge.

Like Anki's task manager, one ``QThread`` runs one worker ``QObject``; it alone touches the
session file, the network (the emulator and provider clients), the keyring and the tool host.
The window never calls it: it emits signals on a ``WorkerClient`` whose connections are
queued into the worker thread, and the worker answers with its own signals, queued back to
the GUI thread. Everything crossing the boundary is plain data (dicts, lists, bytes).

Two requests must reach the worker *while it is busy* in a turn, so they are the only ones
delivered directly (``Qt.DirectConnection``) and touch nothing but thread-safe primitives:
``stop`` sets the turn's cancel event and a permission answer wakes the waiting bridge. The
decision itself is still returned on the worker thread, where the Host asked.
"""

from __future__ import annotations

import itertools
import logging
import os
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from PySide6.QtCore import QObject, QSettings, Qt, QThread, Signal, Slot

from desktop import __version__
from desktop.pi.delivery import FALLBACKS, FallbackDelivery
from desktop.ui import engine

log = logging.getLogger(__name__)

PERMISSION_MODES = ("ask", "accept-edits", "read-only", "full-access")
STREAM_INTERVAL = 0.04
"""Seconds between streamed snapshots sent to the GUI (coalesced; the final one always goes)."""


class QtPermissionBridge(QObject):
    """The Host's ``PermissionBridge``: asks the GUI by signal, waits for the answer.

    ``request_permission`` runs on the worker thread and blocks it (the turn is paused
    there anyway); ``answer`` is called from the GUI thread through a direct connection
    and only stores the answer and sets an event.
    """

    asked = Signal(int, dict)

    def __init__(self) -> None:
        super().__init__()
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._waiting: dict[int, list[Any]] = {}
        self.cancel: threading.Event | None = None
        self.decision_threads: list[int] = []

    def request_permission(self, request: Any) -> Any:
        from desktop.host.permissions import PermissionAnswer

        request_id = next(self._ids)
        done = threading.Event()
        with self._lock:
            self._waiting[request_id] = [done, None]
        effect = getattr(request, "effect", "")
        mode = getattr(request, "mode", "")
        self.asked.emit(
            request_id,
            {
                "tool": request.tool_name,
                "toolCallId": request.tool_call_id,
                "effect": str(effect),
                "arguments": dict(request.arguments),
                "summary": request.summary,
                "mode": getattr(mode, "value", str(mode)),
            },
        )
        try:
            while not done.wait(0.05):
                if self.cancel is not None and self.cancel.is_set():
                    return PermissionAnswer(False, "the turn was stopped before an answer")
            with self._lock:
                answer = self._waiting[request_id][1]
            allowed, remember = answer
            return PermissionAnswer(
                bool(allowed), "" if allowed else "denied in the permission dialog", bool(remember)
            )
        finally:
            with self._lock:
                self._waiting.pop(request_id, None)

    @Slot(int, bool, bool)
    def answer(self, request_id: int, allowed: bool, remember: bool) -> None:
        with self._lock:
            waiting = self._waiting.get(request_id)
            if waiting is None:
                return
            waiting[1] = (allowed, remember)
            waiting[0].set()


class SessionWorker(QObject):
    # --- worker -> GUI ------------------------------------------------------------------------
    session_opened = Signal(dict)
    rows_appended = Signal(list)
    streaming = Signal(object)
    turn_started = Signal(str)
    turn_finished = Signal(dict)
    status_changed = Signal(dict)
    preview_ready = Signal(str, dict)
    activation_ready = Signal(dict)
    permission_requested = Signal(int, dict)
    accounts_ready = Signal(list, str)
    sessions_listed = Signal(list)
    message = Signal(str, str)

    def __init__(
        self, *, data_dir: str | None = None, workspace: str | None = None, offline: bool = True
    ) -> None:
        super().__init__()
        self.data_dir = data_dir
        self.default_workspace = workspace
        self.offline = offline
        self.bridge = QtPermissionBridge()
        self.bridge.asked.connect(self.permission_requested)
        self.session: Any = None
        self.writer: Any = None
        self.runtime: Any = None
        self.emulator: Any = None
        self.choices: list[engine.RouteChoice] = []
        self.route_key = ""
        self.mode = "ask"
        self.fallback: FallbackDelivery = "folded"
        self.resolved: Any = None
        self._cancel = threading.Event()
        self._busy = False
        self._sent: dict[str, bytes] = {}
        self._preview_keys: dict[str, str] = {"main": ""}
        self._last_stream = 0.0
        self.thread_id: int | None = None

    # --- lifecycle ----------------------------------------------------------------------------

    @Slot(dict)
    def start(self, options: Mapping[str, Any]) -> None:
        """First call on the worker thread: emulator, routes, then the session to show."""
        self.thread_id = threading.get_ident()
        from desktop.emulator import Emulator

        self.emulator = Emulator().start()
        origin: str | None = self.emulator.url
        from desktop.host import catalog_cache

        catalog_cache.install()
        if not self.offline:  # stale (older than a day) catalogs refresh on their own thread
            catalog_cache.refresh_in_background()
        keyed = [] if self.offline else self._keyed_providers()
        self.choices = engine.route_choices(origin, keyed)
        wanted = str(options.get("route") or "")
        initial = str(options.get("initialProvider") or "")
        if not wanted and initial and initial != "emulator":
            wanted = next(
                (c.key for c in self.choices if not c.route.offline and c.route.provider == initial), ""
            )
        self.route_key = self._pick_route(wanted)
        self.mode = str(options.get("mode") or "ask")
        fallback = str(options.get("fallback") or "folded")
        self.fallback = cast(FallbackDelivery, fallback if fallback in FALLBACKS else "folded")
        path = options.get("session")
        try:
            if path and Path(str(path)).is_file():
                self._open(Path(str(path)))
            elif self._first_run(options.get("firstRun", "auto")):
                self._welcome()
            else:
                self._new(self.default_workspace)
        except Exception as exc:
            log.exception("could not open a session")
            self.message.emit("error", f"Could not open a session: {exc}")

    def _keyed_providers(self) -> list[str]:
        """Providers of the offered routes that have a key (keyring or environment)."""
        from desktop.host.accounts import keyring_username, resolve_api_key

        found = []
        for provider in sorted({p.split("/", 1)[0] for p in engine.PUBLISHED_ROUTES}):
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

    def _pick_route(self, wanted: str) -> str:
        usable = [c for c in self.choices if c.available]
        for choice in usable:
            if choice.key == wanted:
                return choice.key
        for choice in usable:
            if choice.key == engine.DEFAULT_OFFLINE_ROUTE:
                return choice.key
        return usable[0].key if usable else ""

    def _choice(self, key: str | None = None) -> engine.RouteChoice | None:
        key = self.route_key if key is None else key
        return next((c for c in self.choices if c.key == key), None)

    @Slot()
    def shutdown(self) -> None:
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
        if session is not None:
            try:
                session.close()
            except Exception:
                log.exception("closing the session failed")

    # --- sessions -----------------------------------------------------------------------------

    def _store(self) -> Any:
        from desktop.host.journal import SessionStore

        return SessionStore(data_dir=self.data_dir)

    def _new(self, workspace: str | None) -> None:
        folder = Path(workspace or self.default_workspace or os.getcwd())
        with self._store().create(folder, app_version=__version__) as created:
            path = created.path
        self._open(path, folder)

    def _open(self, path: Path, workspace: Path | None = None) -> None:
        """Open through the shared assembly, so the window and the CLI see the same session."""
        from desktop.host.journal import model_order
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
        config = SessionConfig(
            route=choice.route,
            workspace=workspace,
            fallback=self.fallback,
            mode=PermissionMode.parse(self.mode),
        )
        session = open_session(path, config, bridge=self.bridge)
        self.session = session
        self.writer = session.writer
        self.runtime = session.runtime
        self.resolved = session.resolved
        self._bind(changed=False, publish=False)
        self._sent.clear()
        rows = model_order(list(session.writer.rows))
        self.session_opened.emit(
            {
                "path": str(session.writer.path),
                "id": session.writer.session_id,
                "cwd": str(workspace),
                "readOnly": session.writer.read_only_reason,
                "rows": rows,
                "diagnostics": [str(d) for d in session.writer.diagnostics],
                "problems": list(session.tools.problems),
            }
        )
        self._publish_state()

    def _welcome(self) -> None:
        from desktop.ui.welcome import prepare_workspace, seed_welcome

        workspace = prepare_workspace(self._welcome_folder())
        self._new(str(workspace))
        seed_welcome(self, workspace)

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

    @Slot(str)
    def open_session(self, path: str) -> None:
        try:
            self._open(Path(path))
        except Exception as exc:
            log.exception("open failed")
            self.message.emit("error", f"Could not open {path}: {exc}")

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

    def _on_event(self, event: Mapping[str, Any]) -> None:
        kind = event.get("type")
        if kind == "row":
            row = event["row"]
            if row.get("type") == "assistant":
                self.streaming.emit(None)
            self.rows_appended.emit([row])
            return
        if kind == "request":
            request = event["request"]
            self._sent[self.route_key] = request.body_bytes
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

    def run_turn(self, text: str) -> dict[str, Any]:
        """One turn on the worker thread (also used by the welcome session)."""
        self._cancel = threading.Event()
        self.bridge.cancel = self._cancel
        self._busy = True
        self.turn_started.emit(text)
        summary: dict[str, Any] = {"stopped": "error", "error": None, "requests": 0}
        try:
            result = self.runtime.run_turn(text, on_event=self._on_event, cancel=self._cancel)
            summary = {"stopped": result.stopped, "error": result.error, "requests": result.requests}
        except Exception as exc:
            log.exception("turn failed")
            summary["error"] = f"{type(exc).__name__}: {exc}"
            self._note("error", f"The turn stopped: {summary['error']}")
        finally:
            self._busy = False
            self.streaming.emit(None)
            self.turn_finished.emit(summary)
        self._publish_state()
        return summary

    def _note(self, level: str, text: str) -> None:
        if self.runtime is None:
            self.message.emit(level, text)
            return
        try:
            self.runtime.note(level, text, self._on_event)
        except Exception:
            self.message.emit(level, text)

    @Slot(str)
    def send(self, text: str) -> None:
        if self.runtime is None:
            self.message.emit("error", "No session is open.")
            return
        if self.writer.read_only:
            self.message.emit("warning", self.writer.read_only_reason or "This session is read-only.")
            return
        self.run_turn(text)

    def stop(self) -> None:
        """Called from the GUI thread (direct connection): only sets the cancel event."""
        self._cancel.set()

    @Slot()
    def compact(self) -> None:
        if self.runtime is None:
            return
        from desktop.session.runtime import SummaryFailed

        self._cancel = threading.Event()
        self.turn_started.emit("compact")
        summary: dict[str, Any] = {"stopped": "compacted", "error": None, "requests": 1}
        try:
            self.runtime.compact(on_event=self._on_event, cancel=self._cancel, reason="manual")
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
            self.fallback = cast(FallbackDelivery, fallback)
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

    def _api_key(self, route: Any) -> str | None:
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
                "capability": engine.capability_info(self.resolved, self.fallback),
                "path": str(self.writer.path) if self.writer is not None else "",
                "readOnly": self.writer.read_only_reason if self.writer is not None else None,
            }
            self.status_changed.emit(status)
        for slot, key in list(self._preview_keys.items()):
            self._emit_preview(slot, key)
        self.refresh_activation()

    @Slot(str, str)
    def request_preview(self, slot: str, key: str) -> None:
        self._preview_keys[slot] = key
        self._emit_preview(slot, key)

    def _emit_preview(self, slot: str, key: str) -> None:
        if self.runtime is None:
            return
        self.preview_ready.emit(slot, self.preview(key))

    def preview(self, key: str = "") -> dict[str, Any]:
        """The next request for the current route (``key`` empty) or another route."""
        key = key or self.route_key
        choice = self._choice(key)
        if choice is None:
            return {"route": key, "error": f"unknown route {key!r}"}
        try:
            if key == self.route_key:
                binding = engine.for_preview(self.runtime.route)
            else:
                binding = engine.preview_binding(choice.route, self.fallback, self.writer.session_id)
            api = str(binding.model["api"])
            request = engine.request_for_binding(self.runtime, binding, engine.next_messages(self.runtime))
            previous = self._sent.get(key)
            previous_label = "the last request sent on this route"
            if previous is None:
                before = engine.previous_messages(self.runtime)
                if before is not None:
                    previous = engine.request_for_binding(self.runtime, binding, before).body_bytes
                    previous_label = "the request behind the last reply, re-projected"
            label = choice.label + (" — current route" if key == self.route_key else "")
            return engine.build_preview(
                request, label=label, api=api, previous=previous, previous_label=previous_label
            )
        except Exception as exc:
            log.info("preview for %s failed: %s", key, exc)
            return {"route": choice.label, "error": f"{type(exc).__name__}: {exc}"}

    @Slot()
    def refresh_activation(self) -> None:
        if self.session is None:
            self.activation_ready.emit(engine.activation_info(None, []))
            return
        self.activation_ready.emit(engine.activation_info(self.session.gate, self.runtime.model_rows()))

    @Slot(dict)
    def save_settings(self, values: dict[str, Any]) -> None:
        """Window preferences are written here, never on the GUI thread (QSettings syncs to disk)."""
        settings = QSettings()
        for key, value in values.items():
            settings.setValue(key, value)
        settings.sync()

    @Slot(str, bytes)
    def save_bytes(self, path: str, data: bytes) -> None:
        try:
            Path(path).write_bytes(data)
        except OSError as exc:
            self.message.emit("error", f"Could not save {path}: {exc.strerror or exc}")
            return
        self.message.emit("info", f"Saved {len(data):,} bytes to {path}")

    # --- accounts (keyring: worker thread only) -----------------------------------------------

    @Slot()
    def accounts(self) -> None:
        self._send_accounts("")

    def _send_accounts(self, note: str) -> None:
        from desktop.host import accounts

        entries: list[dict[str, Any]] = []
        for provider in accounts.ENV_API_KEYS:
            _key, info = accounts.resolve_api_key(provider, accounts.keyring_username(provider))
            entries.append(
                {
                    "provider": provider,
                    "source": {"keyring": "keyring", "env": f"environment ({info.detail})"}.get(
                        info.source, "—"
                    ),
                    "fingerprint": info.fingerprint,
                }
            )
        self.accounts_ready.emit(entries, note)

    @Slot(str, str, str)
    def save_key(self, provider: str, account: str, key: str) -> None:
        try:
            from desktop.host import accounts

            accounts.set_api_key(accounts.keyring_username(provider, account), key)
            note = f"Saved the key for {provider}/{account} in the keyring."
        except Exception as exc:  # KeyringUnavailable, ValueError: the message says what to do
            note = str(exc)
        self._send_accounts(note)

    @Slot(str, str)
    def delete_key(self, provider: str, account: str) -> None:
        try:
            from desktop.host import accounts

            removed = accounts.delete_api_key(accounts.keyring_username(provider, account))
            note = (
                f"Removed the key for {provider}/{account}."
                if removed
                else f"No key stored for {provider}/{account}."
            )
        except Exception as exc:
            note = str(exc)
        self._send_accounts(note)


class WorkerClient(QObject):
    """The GUI side of the boundary: every request to the worker is one of these signals."""

    start = Signal(dict)
    send = Signal(str)
    compact = Signal()
    new_session = Signal(str)
    open_session = Signal(str)
    list_sessions = Signal()
    set_route = Signal(str)
    set_mode = Signal(str)
    set_fallback = Signal(str)
    request_preview = Signal(str, str)
    refresh_activation = Signal()
    save_bytes = Signal(str, bytes)
    save_settings = Signal(dict)
    accounts = Signal()
    save_key = Signal(str, str, str)
    delete_key = Signal(str, str)
    shutdown = Signal()
    # Delivered directly (the worker may be busy in a turn); the receivers only set events.
    stop = Signal()
    permission_answered = Signal(int, bool, bool)

    def __init__(self, worker: SessionWorker, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.worker = worker
        queued = Qt.ConnectionType.QueuedConnection
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
            (self.refresh_activation, worker.refresh_activation),
            (self.save_bytes, worker.save_bytes),
            (self.save_settings, worker.save_settings),
            (self.accounts, worker.accounts),
            (self.save_key, worker.save_key),
            (self.delete_key, worker.delete_key),
            (self.shutdown, worker.shutdown),
        )
        for signal, slot in pairs:
            signal.connect(slot, queued)
        direct = Qt.ConnectionType.DirectConnection
        self.stop.connect(worker.stop, direct)
        self.permission_answered.connect(worker.bridge.answer, direct)


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
    """Stop any turn, close the session on the worker thread, and wait for the thread to end."""
    client.stop.emit()
    client.shutdown.emit()
    finished = thread.wait(timeout_ms)
    if not finished:
        log.warning("the worker thread did not stop within %d ms", timeout_ms)
    return bool(finished)
