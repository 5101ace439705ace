"""The window's inspector features beyond one Desktop session (design X1, X2, X3, M1, P5).

Kept apart from ``main_window`` so that file stays about layout and the chat: this controller
adds the foreign-session bar above the timeline (branch switcher, "Continue in Pi Desktop"),
the session browser, the "What if" tab, the composer's draft in the payload preview, the
catalog refresh, and where open problems are reported. Every computation runs on the worker
(``desktop.ui.inspect_ops`` through ``WorkerOps``, or worker slots); this only wires widgets.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer, Slot
from PySide6.QtWidgets import QMessageBox, QVBoxLayout

from desktop.session import commands
from desktop.session.inspector.routes import PUBLISHED_ROUTES
from desktop.ui import inspect_ops
from desktop.ui.catalog_status import flags_text
from desktop.ui.foreign_bar import ForeignBar
from desktop.ui.inert import plain_tip, question_box
from desktop.ui.messages import ForeignBranch, OpenProblem, RouteStatus, SessionOpened
from desktop.ui.session_browser import SessionBrowser
from desktop.ui.whatif_view import ReplayRun, WhatIfView

if TYPE_CHECKING:
    from desktop.ui.main_window import MainWindow

DRAFT_DELAY_MS = 300
"""The preview follows the composer this long after the last keystroke (design P5)."""


class InspectController(QObject):
    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.client = window.client
        #: The foreign branch shown, None for a Desktop session.
        self.foreign: ForeignBranch | None = None
        self.whatif_stale = True
        #: Problems shown to the user (title, text), in order: tests and the log read these.
        self.problems: list[tuple[str, str]] = []
        #: The open "Continue in Pi Desktop?" question, if any (tests answer it).
        self.continue_confirm: QMessageBox | None = None
        self.browser: SessionBrowser | None = None

        self.bar = ForeignBar()
        left = window.view.parentWidget()
        layout = left.layout() if left is not None else None
        if isinstance(layout, QVBoxLayout):
            layout.insertWidget(0, self.bar)
        self.bar.branch_chosen.connect(self.client.select_branch)
        self.bar.continue_requested.connect(self._continue)

        self.whatif = WhatIfView()
        self.whatif_index = window.tabs.addTab(self.whatif, "What if")
        window.tabs.setTabToolTip(
            self.whatif_index, "What this session would have cost on other routes and delivery strategies"
        )
        self.whatif.set_route_options(PUBLISHED_ROUTES, inspect_ops.DEFAULT_WHATIF_ROUTES)
        self.whatif.routes_changed.connect(lambda _routes: self.request_whatif())
        window.tabs.currentChanged.connect(self._tab_changed)

        self.draft_timer = QTimer(self)
        self.draft_timer.setSingleShot(True)
        self.draft_timer.setInterval(DRAFT_DELAY_MS)
        self.draft_timer.timeout.connect(self._send_draft)
        window.composer.editor.textChanged.connect(self.draft_timer.start)

        window.browse_action.triggered.connect(self.show_browser)
        window.refresh_catalogs_action.triggered.connect(self.refresh_catalogs)

        worker = window.worker
        # A slot of this object (not a lambda), so the call is queued to the GUI thread: the
        # replay's progress timer starts there.
        worker.turn_finished.connect(self._turn_finished)
        worker.open_problem.connect(self._open_problem)

    # --- foreign sessions ----------------------------------------------------------------------

    def session_opened(self, opened: SessionOpened) -> None:
        """Called by the window's own handler, after it showed the session."""
        self.foreign = opened.session.foreign
        self.bar.show_session(self.foreign)
        editor = self.window.composer.editor
        if self.foreign is not None:
            editor.setReadOnly(True)
            editor.setPlaceholderText("Read-only session: “Continue in Pi Desktop” to reply")
            lines = opened.diagnostics
            if lines:
                shown = "\n".join(lines[:20]) + (f"\n… and {len(lines) - 20} more" if len(lines) > 20 else "")
                self.report(
                    "warning",
                    "Some lines could not be read",
                    f"{len(lines)} line(s) of {opened.session.path} were set aside; the rest opened:\n{shown}",
                )
        else:
            editor.setReadOnly(False)
            editor.setPlaceholderText("Ask Pi… (Ctrl+Enter to send, Esc to stop)")
        editor.viewport().update()  # the placeholder is painted only on a viewport repaint
        self._session_grew()

    def _continue(self, leaf: str) -> None:
        """Say on which route, thinking level and in which workspace the fork will continue,
        and ask, before anything is written (design X2, G12)."""
        self.client.ops.query(
            lambda worker: worker.fork_plan(leaf or None),
            lambda plan: self._confirm_continue(leaf, plan),
            label="planning the continuation",
        )

    def _confirm_continue(self, leaf: str, plan: Mapping[str, Any]) -> None:
        if plan.get("error"):
            self.report("error", "Cannot continue in Pi Desktop", str(plan["error"]))
            return

        def go() -> None:
            self.window.statusBar().showMessage("Continuing in a new Pi Desktop session…", 5000)
            self.client.continue_foreign.emit(leaf)

        self.continue_confirm = question_box(
            self.window,
            "continueConfirm",
            "Continue in Pi Desktop?",
            str(plan.get("text", "")),
            "A new Pi Desktop session is made; the source file is not changed.",
            "Continue",
            go,
        )

    @Slot(object)
    def _open_problem(self, problem: OpenProblem) -> None:
        self.report("error", problem.title, problem.text)

    def report(self, level: str, title: str, text: str) -> None:
        """A problem in full where the user looks: the window's banner area, the first line in
        the status bar."""
        self.problems.append((title, text))
        self.window.statusBar().showMessage(f"{title}: {text.splitlines()[0] if text else ''}", 15000)
        self.window.banners.show_message(level, f"{title}: {text}")

    def show_browser(self) -> None:
        if self.browser is None:
            self.browser = SessionBrowser(self.window)
            self.browser.open_requested.connect(self.client.open_session)
        self.browser.show_error("Looking for sessions…")
        self.browser.open()
        browser = self.browser
        self.client.ops.query(
            lambda _w: inspect_ops.browse_listing(),
            lambda listing: browser.show_workspaces(listing["workspaces"], listing["roots"]),
            failed=browser.show_error,
            label="listing pi and Claude Code sessions",
        )

    # --- what if ----------------------------------------------------------------------------------

    def _tab_changed(self, index: int) -> None:
        if index == self.whatif_index and self.whatif_stale:
            self.request_whatif()

    @Slot(object)
    def _turn_finished(self, _summary: object) -> None:
        self._session_grew()

    def _session_grew(self) -> None:
        self.whatif_stale = True
        if self.window.tabs.currentIndex() == self.whatif_index:
            self.request_whatif()

    def request_whatif(self) -> None:
        """Replay the shown session onto the picked routes, on the worker (design X3)."""
        routes = self.whatif.selected_routes()
        if not routes:
            return
        self.whatif_stale = False
        run = ReplayRun()
        self.whatif.start_run(run)
        self.client.ops.query(
            lambda w: _replay(w, routes, run),
            lambda result: self.whatif.show_run_result(run, result),
            failed=lambda error: self.whatif.show_run_result(run, {"error": error}),
            label="the what-if replay",
        )

    # --- payload draft and catalogs -------------------------------------------------------------

    def status_changed(self, status: RouteStatus) -> None:
        """After the window's own handler: the route status says where each capability flag
        came from and how old it is (M1)."""
        capability = status.capability
        pi = (capability.get("catalogs") or {}).get("pi") or {}
        if not pi:
            return
        label = self.window.capability_label
        origin = str(pi.get("origin") or "").split(" ", 1)[0]  # "bundled" / "refreshed"
        age = html.escape(str(pi.get("age")))
        source = "built-in catalog" if origin == "bundled" else f"{html.escape(origin)} catalog"
        label.setText(f"{label.text()} · {source}, {age} old")
        meaning = (
            f"What this route supports (system messages mid-conversation, tool changes) comes from the "
            f"{'model catalog that shipped with this version of Pi Desktop' if origin == 'bundled' else 'model catalog'}"
            f", made {pi.get('age')} ago. Settings → Refresh Catalogs fetches a newer one.\n\n"
        )
        label.setToolTip(label.toolTip() + plain_tip(meaning + flags_text(capability)))

    def _send_draft(self) -> None:
        # The composer's rule (design G8): a slash command is no message; "//text" sends "/text".
        parsed = commands.parse(self.window.composer.editor.toPlainText().strip())
        text = parsed.text if isinstance(parsed, commands.Message) else ""
        self.client.set_draft.emit(text or None)

    def refresh_catalogs(self) -> None:
        self.window.statusBar().showMessage("Refreshing the model catalogs…")
        self.client.ops.query(
            lambda w: w.refresh_catalogs(),
            lambda lines: self.window.statusBar().showMessage(" · ".join(lines), 15000),
            label="refreshing the catalogs",
            changes_session=True,
        )


def _replay(worker: Any, routes: list[str], run: ReplayRun) -> dict[str, Any]:
    """On the worker: the what-if of whatever session it shows, reporting to ``run``."""
    if run.cancel.is_set():  # cancelled or superseded while it waited in the queue
        return {"cancelled": True, "routes": routes}
    path = worker.session_path()
    if path is None:
        return {"error": "no session is open"}
    return inspect_ops.whatif(path, routes, worker.foreign_leaf, progress=run.report, cancel=run.cancel)
