"""The main window: timeline, inspector tabs, composer and selectors (design G1–G5).

The window owns no session state of its own beyond what it displays. It sends requests to
the worker through ``WorkerClient`` signals and updates itself from the worker's signals;
it never touches the journal, the network or the keyring. The pure parts (row summaries,
section diffs, the payload text mapping, usage sums) live in their own modules.
"""

from __future__ import annotations

import html
import logging
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QByteArray, QModelIndex, QSettings, QSize, Qt, QTimer, Slot
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence, QTextCursor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QMainWindow,
    QMenu,
    QMessageBox,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QTabWidget,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from desktop import __version__
from desktop.cli._args import PERMISSION_MODES
from desktop.host import paths
from desktop.host.first_run import PROVIDER_KEY_ENV
from desktop.session import commands
from desktop.session.inspector.section_diff import section_diff
from desktop.ui import accounts_dialog, rowinfo
from desktop.ui.accounts_dialog import AccountsDialog
from desktop.ui.activation_view import ActivationView
from desktop.ui.after_paint import AfterPaint
from desktop.ui.banner import BannerArea
from desktop.ui.composer import Composer
from desktop.ui.context_meter import ContextMeter
from desktop.ui.export_action import ask_and_export
from desktop.ui.glossary import tooltip
from desktop.ui.help_page import HelpPage
from desktop.ui.inert import named, plain_label, plain_message_box, plain_tip, question_box
from desktop.ui.inspect_controller import InspectController
from desktop.ui.message_view import MessageView
from desktop.ui.messages import (
    DecodedRows,
    ForeignBranchRows,
    IndexedRows,
    RouteStatus,
    SessionIndexed,
    SessionOpened,
    SessionRows,
    ShownSession,
    TurnFinished,
)
from desktop.ui.open_files import APP_TITLE, same_file, window_title
from desktop.ui.payload_view import PayloadView
from desktop.ui.permission_dialog import PermissionDialog
from desktop.ui.retry_wait import RetryCountdown
from desktop.ui.row_view import RowView
from desktop.ui.section_diff_view import SectionDiffView
from desktop.ui.session_choices import SessionChoices
from desktop.ui.show_logs import show_logs_action
from desktop.ui.slash_commands import SlashCommands, SlashCompleter
from desktop.ui.status_line import StatusLine
from desktop.ui.timeline_delegate import TimelineDelegate, TimelineView
from desktop.ui.timeline_model import ROW_ROLE, ShownRows, TimelineFilter, TimelineModel
from desktop.ui.usage_view import UsageView
from desktop.ui.worker import SessionWorker, WorkerClient

if TYPE_CHECKING:  # the engine's compaction loads when a session opens, not before the first paint
    from desktop.session.compaction import CompactionPreview

WINDOW_TITLE = APP_TITLE
MAX_RECENT = 10
log = logging.getLogger(__name__)

TAB_MESSAGE, TAB_ROW, TAB_DIFF, TAB_ACTIVATION, TAB_PAYLOAD, TAB_USAGE = range(6)
#: The window never gets smaller than this; every pane still fits (design G7).
MINIMUM_SIZE = (960, 600)


#: How a turn ended, in words (the provider's stop reasons are jargon: "stop", "length").
_OUTCOMES = {
    "stop": "Done: the reply is complete.",
    "length": "Done, cut short: the reply reached the model's output limit.",
    "toolUse": "Done: the model asked for a tool.",
    "aborted": "Stopped before the reply was complete.",
    "stopped": "Stopped before the reply was complete.",
    "compacted": "Done: the older turns are now a summary.",
}


#: A delivery path's dot colour in the toolbar, and its glossary term.
_DELIVERY_LOOK = {
    "native system sections": ("#16a34a", "native system sections"),
    "attributed user updates": ("#d97706", "attributed"),
    "folded": ("#dc2626", "folded"),
}


def route_text(label: str) -> str:
    """A route as the toolbar's box shows it: the route and whether it is the emulator; the API
    is in the item's tooltip (the whole label did not fit at 1280 wide and read "— o")."""
    route, _, rest = label.partition(" (")
    return f"{route} (emulator)" if "offline emulator" in rest else route


def default_size(available: QSize) -> QSize:
    """A first window: 1440x900 where the screen has room for it, else 1280x800 (the size the
    window is laid out for; the window system fits it to a smaller screen)."""
    return QSize(1440, 900) if available.width() >= 1600 and available.height() >= 1000 else QSize(1280, 800)


def compaction_text(preview: CompactionPreview) -> str:
    """The compaction preview in words, for the button's tooltip and the confirmation."""
    if not preview.possible:
        return (
            f"nothing to compact yet: {html.escape(preview.reason)}.<br>"
            f"Estimated context: <b>~{preview.tokens_before:,} tokens</b>."
        )
    cut = f" “{html.escape(preview.first_kept_text)}”" if preview.first_kept_text else ""
    return (
        f"summarizes {preview.rows} row{'s' if preview.rows != 1 else ''}; the newest rows stay as they are, "
        f"from row <code>{html.escape(preview.first_kept_id)}</code>{cut}.<br>Estimated context: "
        f"<b>~{preview.tokens_before:,} → ~{preview.tokens_after:,} tokens</b>."
    )


def show_rows(timeline: TimelineModel, usage: UsageView, shown: SessionRows) -> bool:
    """Put an opened session's rows in the timeline and the Usage tab; False when they are the
    index already shown (sent before the session opened, design X26), which stays as it is."""
    if isinstance(shown, ForeignBranchRows):  # a pi / Claude Code branch: rows built as painted (X1)
        timeline.set_reader(shown.reader)
        usage.set_lines(shown.usage, shown.usage_total)
    elif isinstance(shown, DecodedRows):
        timeline.set_rows(shown.rows)
        usage.set_rows(shown.rows)
    elif shown.index is not timeline.index_shown:
        timeline.set_index(shown.index)
        usage.set_lines(shown.index.usage, shown.index.usage_total, shown.index.misses)
    else:
        return False
    return True


class MainWindow(QMainWindow):
    def __init__(
        self, worker: SessionWorker, client: WorkerClient, *, log_folder: Path | None = None
    ) -> None:
        super().__init__()
        self.setObjectName("mainWindow")
        self.setWindowTitle(WINDOW_TITLE)
        self.worker = worker
        self.client = client
        #: The session shown, None until one opens.
        self.session: ShownSession | None = None
        self.local_notes_said = 0
        self.status = RouteStatus()
        self.busy = False
        self.permission_dialogs: list[PermissionDialog] = []
        #: Open yes/no questions from the worker (a session's folder, a repository's command).
        self.question_boxes: list[QMessageBox] = []
        self.accounts_dialog: AccountsDialog | None = None
        #: Values written since start, so reads do not race the worker's queued writes.
        self._settings_cache: dict[str, Any] = {}
        self._follow_tail = True
        #: What the window has received, in arrival order (the status bar and tests read these).
        self.turn_results: list[TurnFinished] = []
        self.stream_updates = 0
        #: What compacting now would do, from the worker (None until it has answered).
        self.compaction_preview: CompactionPreview | None = None
        self.compact_confirm: QMessageBox | None = None
        self.help_page: HelpPage | None = None
        #: A file handed over while a turn runs opens when the turn ends (design G8).
        self.queued_open: str | None = None

        self.timeline = TimelineModel(self)
        self.filter = TimelineFilter(self)
        self.filter.setSourceModel(self.timeline)
        #: What the view shows: the filter's rows through a C++ layer (``shown.position`` maps back).
        self.shown = ShownRows(self.filter, self)
        #: The toolbar's selectors: a change says its cost first, then is journaled (design G12).
        self.session_choices = SessionChoices(self)
        self._build_views()
        self._build_toolbar()
        self._build_menus(log_folder)
        self._connect_worker()
        self.inspect = InspectController(self)
        self._restore_settings()

    # --- construction ---------------------------------------------------------------------

    def _build_views(self) -> None:
        self.search = named(QLineEdit(), "timelineSearch", accessible="Search the transcript")
        self.search.setPlaceholderText("Search the transcript (Ctrl+F)")
        self.search.setClearButtonEnabled(True)
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(200)
        self._search_timer.timeout.connect(lambda: self._apply_search())
        self.search.textChanged.connect(lambda _t: self._search_timer.start())
        self.kinds_button = named(
            QPushButton("Kinds"), "kindsButton", "Show or hide rows by kind", "Row kinds"
        )
        self.kinds_menu = QMenu(self)
        self.kind_actions: dict[int, QAction] = {}
        for kind in rowinfo.FILTER_KINDS:
            if kind == rowinfo.SYSTEM:
                continue
            action = self.kinds_menu.addAction(
                rowinfo.KIND_NAMES[kind].capitalize() + ("s and errors" if kind == rowinfo.NOTE else "")
            )
            action.setCheckable(True)
            action.setChecked(True)
            action.toggled.connect(lambda on, k=kind: self._kind_toggled(k, on))
            self.kind_actions[kind] = action
        self.kinds_button.setMenu(self.kinds_menu)

        self.hidden_notice = named(QLabel(), "hiddenNotice")
        self.hidden_notice.setTextFormat(Qt.TextFormat.RichText)
        self.hidden_notice.linkActivated.connect(self._notice_link)

        self.view = named(TimelineView(), "timelineView", tooltip("timeline"), "Timeline")
        self.view.setModel(self.shown)
        self.view.setItemDelegate(TimelineDelegate(self.view))
        self.view.setUniformItemSizes(True)
        # One pass: through ``ShownRows`` the layout of 100,000 rows is C++ (a few milliseconds),
        # so the first paint shows the newest rows and the worker, waiting for that paint, goes
        # on only once the layout is done. Laid out in batches, the first paint was an empty
        # viewport and the rest of the layout and the real first paint shared the GIL with it.
        self.view.setLayoutMode(QListView.LayoutMode.SinglePass)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.view.selectionModel().currentChanged.connect(self._row_selected)
        self.view.verticalScrollBar().valueChanged.connect(self._scrolled)
        # The range grows with rows and shrinks with the window: stay on the newest row while following.
        self.view.verticalScrollBar().rangeChanged.connect(self._range_changed)

        self.composer = Composer()
        # A line starting with / is a command, never a message for the model (design G8).
        self.commands = SlashCommands(self)
        self.slash_completer = SlashCompleter(self.composer.editor)
        self.composer.send_requested.connect(self.commands.submit)
        self.composer.stop_requested.connect(self.stop)

        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.search, 1)
        top.addWidget(self.kinds_button)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(6, 6, 0, 6)
        left_layout.addLayout(top)
        left_layout.addWidget(self.hidden_notice)
        left_layout.addWidget(self.view, 1)
        left_layout.addWidget(self.composer)

        self.tabs = named(QTabWidget(), "detailTabs", accessible="Detail tabs")
        self.message_view = MessageView()
        self.message_view.raw_requested.connect(lambda: self.tabs.setCurrentIndex(TAB_ROW))
        self.message_view.conversation_toggled.connect(lambda _on: self._sync_conversation())
        self.message_view.jump_requested.connect(self.jump_to_latest)
        self._conversation_timer = QTimer(self)
        self._conversation_timer.setSingleShot(True)
        self._conversation_timer.setInterval(60)
        self._conversation_timer.timeout.connect(self._sync_conversation)
        self.row_view = RowView()
        self.diff_view = SectionDiffView()
        self.activation_view = ActivationView()
        self.payload_view = PayloadView()
        self.usage_view = UsageView()
        self.tabs.addTab(self.message_view, "Message")
        self.tabs.addTab(self.row_view, "Row")
        self.tabs.addTab(self.diff_view, "Section diff")
        self.tabs.addTab(self.activation_view, "Activation")
        self.tabs.addTab(self.payload_view, "Payload")
        self.tabs.addTab(self.usage_view, "Usage")
        self.payload_view.preview_requested.connect(self.client.request_preview)
        self.payload_view.shown_changed.connect(self.client.set_previews_shown)
        self.payload_view.preview_dropped.connect(self.client.drop_preview)
        self.payload_view.save_requested.connect(self.client.save_bytes)
        # The Usage tab's cache misses are summed from the whole transcript: on the worker, and
        # only while the tab is shown (a long session's sum is a second of work; design P13, G9).
        self._misses_stale = True
        self.tabs.currentChanged.connect(lambda _index: self._refresh_cache_misses())

        self.splitter = named(QSplitter(Qt.Orientation.Horizontal), "mainSplitter")
        self.splitter.addWidget(left)
        self.splitter.addWidget(self.tabs)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setChildrenCollapsible(False)
        self.banners = BannerArea()
        central = QWidget()
        central_layout = QVBoxLayout(central)
        central_layout.setContentsMargins(0, 0, 0, 0)
        central_layout.setSpacing(0)
        central_layout.addWidget(self.banners)
        self.retry_countdown = RetryCountdown()
        self.retry_countdown.cancelled.connect(self.stop)
        central_layout.addWidget(self.retry_countdown)
        central_layout.addWidget(self.splitter, 1)
        self.setCentralWidget(central)
        self.setMinimumSize(*MINIMUM_SIZE)
        self.setStatusBar(StatusLine())  # messages elided beside the session label (design G16)
        self.session_label = plain_label()  # file and folder names as written (design G11)
        self.statusBar().addPermanentWidget(self.session_label)
        self.context_meter = ContextMeter()
        self.statusBar().addPermanentWidget(self.context_meter)
        self._update_notice()

    def _build_toolbar(self) -> None:
        bar = named(QToolBar("Session"), "sessionToolbar")
        bar.setMovable(False)
        self.route_combo = named(QComboBox(), "routeCombo", tooltip("route"), "Route")
        self.route_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.route_combo.activated.connect(lambda _i: self.session_choices.route_chosen())
        self.mode_combo = named(QComboBox(), "modeCombo", tooltip("permission mode"), "Permission mode")
        self.mode_combo.addItems(list(PERMISSION_MODES))
        self.mode_combo.activated.connect(lambda _i: self.session_choices.mode_chosen())
        self.fallback_combo = named(
            QComboBox(),
            "fallbackCombo",
            tooltip("fallback", "folded", "attributed"),
            "Fallback for system updates",
        )
        self.fallback_combo.addItem("folded", "folded")
        self.fallback_combo.addItem("attributed updates", "attributed")
        self.fallback_combo.activated.connect(lambda _i: self.session_choices.fallback_chosen())
        self.capability_label = named(QLabel(), "capabilityLabel", tooltip("capability"))
        self.capability_label.setTextFormat(Qt.TextFormat.RichText)
        self.compact_button = named(
            QPushButton("Compact"), "compactButton", tooltip("compaction"), "Compact the session"
        )
        self.compact_button.clicked.connect(lambda: self.compact_asking(""))
        for text, combo, term in (
            (" &Route ", self.route_combo, "route"),
            ("  &Mode ", self.mode_combo, "permission mode"),
            ("  Fa&llback ", self.fallback_combo, "fallback"),
        ):
            label = QLabel(text)
            label.setBuddy(combo)  # Alt+R, Alt+M, Alt+F reach the selector from the keyboard
            label.setToolTip(tooltip(term))
            bar.addWidget(label)
            bar.addWidget(combo)
        bar.addSeparator()
        bar.addWidget(self.capability_label)
        spacer = QWidget()
        spacer.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        bar.addWidget(spacer)
        bar.addWidget(self.compact_button)
        self.addToolBar(bar)

    def _build_menus(self, log_folder: Path | None) -> None:
        menu = self.menuBar()
        file_menu = menu.addMenu("&File")
        self.new_action = file_menu.addAction("&New Session", self.new_session)
        self.new_action.setShortcut(QKeySequence.StandardKey.New)
        self.open_action = file_menu.addAction("&Open Session…", self.open_session_dialog)
        self.open_action.setShortcut(QKeySequence.StandardKey.Open)
        self.browse_action = file_menu.addAction("&Browse Sessions…")
        self.browse_action.setToolTip(
            "Pi Desktop's sessions and those under ~/.pi/agent/sessions and ~/.claude/projects, by "
            "workspace; the search looks inside Pi Desktop sessions too"
        )
        self.recent_menu = file_menu.addMenu("Open &Recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        self.export_action = file_menu.addAction("&Export Conversation…", self.export_conversation)
        self.export_action.setToolTip("The open session as Markdown or a standalone HTML page (design X6)")
        file_menu.addSeparator()
        self.quit_action = file_menu.addAction("&Quit")
        self.quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        if self.quit_action.shortcut().isEmpty():  # platforms without a standard binding (offscreen)
            self.quit_action.setShortcut(QKeySequence("Ctrl+Q"))
        self.quit_action.triggered.connect(self.close)

        session_menu = menu.addMenu("&Session")
        self.send_action = session_menu.addAction("&Send", self.composer.submit)
        self.send_action.setShortcut(QKeySequence("Ctrl+Return"))
        self.send_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.stop_action = session_menu.addAction("S&top", self.stop)
        self.stop_action.setShortcut(QKeySequence(Qt.Key.Key_Escape))
        self.compact_action = session_menu.addAction("&Compact", lambda: self.compact_asking(""))
        self.compact_action.setShortcut(QKeySequence("Ctrl+Shift+K"))

        view_menu = menu.addMenu("&View")
        self.hidden_action = view_menu.addAction("Show &Hidden System Rows")
        self.hidden_action.setCheckable(True)
        self.hidden_action.setShortcut(QKeySequence("Ctrl+H"))
        self.hidden_action.toggled.connect(self.set_show_hidden)
        self.find_action = view_menu.addAction("&Find", self.focus_search)
        self.find_action.setShortcut(QKeySequence.StandardKey.Find)
        view_menu.addMenu(self.kinds_menu).setText("Row &Kinds")

        settings_menu = menu.addMenu("Se&ttings")
        settings_menu.addAction("&Accounts…", self.show_accounts)
        self.new_defaults_action = settings_menu.addAction(
            "&New Session Defaults…", self.session_choices.edit_new_session_defaults
        )
        self.refresh_catalogs_action = settings_menu.addAction("Refresh &Catalogs")
        self.refresh_catalogs_action.setToolTip("Download the model catalogs now (capability flags, prices)")

        help_menu = menu.addMenu("&Help")
        self.help_action = help_menu.addAction("&What am I looking at?", self.show_help)
        self.help_action.setObjectName("helpAction")
        self.help_action.setShortcut(QKeySequence.StandardKey.HelpContents)
        if self.help_action.shortcut().isEmpty():
            self.help_action.setShortcut(QKeySequence("F1"))
        if log_folder is not None:
            help_menu.addAction(show_logs_action(self, log_folder))
        help_menu.addAction("&About Pi Desktop", self._about)
        self.addActions(
            [self.send_action, self.stop_action, self.compact_action, self.hidden_action, self.find_action]
        )
        self.addAction(self.help_action)

    def _connect_worker(self) -> None:
        w = self.worker
        w.session_indexed.connect(self.on_session_indexed)
        w.session_opened.connect(self.on_session_opened)
        w.rows_appended.connect(self.on_rows_appended)
        w.streaming.connect(self.on_streaming)
        w.turn_started.connect(self.on_turn_started)
        w.turn_finished.connect(self.on_turn_finished)
        w.status_changed.connect(self.on_status)
        w.preview_ready.connect(self.payload_view.show_preview)
        w.previews_outdated.connect(self.payload_view.mark_stale)
        w.activation_ready.connect(self.activation_view.show_info)
        w.permission_requested.connect(self.on_permission_requested)
        w.question_requested.connect(self.on_question_requested)
        w.message.connect(self.on_message)
        w.retry_wait.connect(self.retry_countdown.start)
        w.streaming.connect(lambda _partial: self.retry_countdown.finish())  # the retry answers
        self.client.ops.failure.connect(lambda text: self.on_message("error", text))

    # --- settings --------------------------------------------------------------------------

    def settings(self) -> QSettings:
        """For reading only: writes go to the worker thread (``_save_settings``)."""
        return QSettings()

    def _save_settings(self, values: dict[str, Any]) -> None:
        self._settings_cache.update(values)
        self.client.save_settings.emit(values)

    def _restore_settings(self) -> None:
        settings = self.settings()
        geometry = settings.value("window/geometry")
        if isinstance(geometry, QByteArray) and not geometry.isEmpty():
            self.restoreGeometry(geometry)
        available = self.screen().availableGeometry().size()
        size = settings.value("window/size")
        # The size the user left, as it was (restoreGeometry alone can shrink it when the screen
        # it was saved on is not known yet), never larger than this screen.
        self.resize(
            size.boundedTo(available)
            if isinstance(size, QSize) and size.isValid() and not size.isEmpty()
            else default_size(available)
        )
        state = settings.value("window/splitter")
        if isinstance(state, QByteArray) and not state.isEmpty():
            self.splitter.restoreState(state)
        else:
            self.splitter.setSizes([640, 640])  # the index and the conversation share the width (X7)
        self.hidden_action.setChecked(bool(settings.value("view/showHidden", False, type=bool)))

    def startup_options(self) -> dict[str, Any]:
        """What the worker needs to start: the last session, route and modes."""
        settings = self.settings()
        recent = self.recent_sessions()
        return {
            "session": recent[0] if recent else None,
            "route": settings.value("session/route", "", type=str),
            "mode": settings.value("session/mode", "ask", type=str),
            "fallback": settings.value("session/fallback", "folded", type=str),
            "compaction": self.session_choices.compaction_seed(),
        }

    def recent_sessions(self) -> list[str]:
        value = self._settings_cache.get("session/recent", self.settings().value("session/recent", []))
        if isinstance(value, str):
            return [value]
        return [str(v) for v in value or []]

    def _remember_session(self, path: str) -> None:
        recent = [path, *[p for p in self.recent_sessions() if p != path]][:MAX_RECENT]
        self._save_settings({"session/recent": recent})

    def closeEvent(self, event: QCloseEvent) -> None:
        self._save_settings(
            {
                "window/geometry": self.saveGeometry(),
                "window/size": self.normalGeometry().size() if self.isMaximized() else self.size(),
                "window/splitter": self.splitter.saveState(),
                "view/showHidden": self.hidden_action.isChecked(),
            }
        )
        for dialog in list(self.permission_dialogs):
            dialog.reject()
        for box in list(self.question_boxes):
            box.reject()
        super().closeEvent(event)

    # --- timeline ----------------------------------------------------------------------------

    @Slot(object)
    def on_session_indexed(self, indexed: SessionIndexed) -> None:
        """The session's row index, sent before the session is fully open: paint it now, then
        let the worker go on (``painted``), so the first paint never waits for the GIL.

        Showing the index, laying its rows out and painting them are three turns of the event
        loop (each 10 to 30 ms for 100,000 rows), not one: the view does not paint until its
        rows are laid out (an empty first paint otherwise) and scrolled to the newest."""
        self.view.setUpdatesEnabled(False)
        self.timeline.set_index(indexed.index)  # the view lays the rows out in the next turn
        if indexed.partial:  # the newest rows while the file is read: no figure from part of it
            self.statusBar().showMessage(f"Reading {Path(indexed.path).name}…")
        else:
            self.statusBar().clearMessage()
            self.usage_view.set_lines(indexed.index.usage, indexed.index.usage_total, indexed.index.misses)

        def laid_out() -> None:
            self._timeline_reset()
            self.view.setUpdatesEnabled(True)
            self._then_release(indexed.painted)

        QTimer.singleShot(0, self, laid_out)

    def _then_release(self, painted: threading.Event | None) -> None:
        """Set the worker's ``painted`` event once the timeline has painted what it was sent:
        the worker waits for it before it runs Python again (design G9)."""
        if painted is not None:
            AfterPaint(self.view.viewport(), painted.set)

    def _timeline_reset(self) -> None:
        self.row_view.show_row(None)
        self.diff_view.clear_diff()
        self._update_notice()
        self.view.scrollToBottom()
        self._follow_tail = True

    @Slot(object)
    def on_session_opened(self, opened: SessionOpened) -> None:
        self.session = session = opened.session
        if show_rows(self.timeline, self.usage_view, opened.rows):
            self._timeline_reset()
        if isinstance(opened.rows, IndexedRows) and opened.rows.appended:
            # Rows the open itself journaled (the continuation's update, notes).
            self.on_rows_appended(opened.rows.appended)
        path = session.path
        self._remember_session(path)
        self.session_label.setText(f"{Path(session.cwd).name} · {Path(path).name}")
        self.setWindowTitle(window_title(path, session.cwd))
        self.session_label.setToolTip(plain_tip(path))
        self.message_view.local_notes.clear()
        self.message_view.clear()
        self.banners.clear()
        self.refresh_compaction_preview()
        if session.read_only:
            self.statusBar().showMessage(session.read_only, 15000)
            self.banners.show_message("info", session.read_only)
        problems = opened.diagnostics
        if problems and session.foreign is None:  # a foreign session's are reported by self.inspect
            self.statusBar().showMessage(problems[0], 15000)
            count = len(problems)
            self.banners.show_message(
                "warning",
                f"{Path(path).name}: {count} line{'s' if count != 1 else ''} set aside while reading:\n"
                + "\n".join(problems[:20])
                + (f"\n… and {count - 20} more (see the log)" if count > 20 else ""),
            )
        # What the open left out, and why: instruction files not read (design S7), a repository's
        # commands not run or settings not used (design A11), a corrupt catalog (design M1).
        notes = [*opened.skipped_guidance, *opened.problems]
        if notes:
            self.banners.show_message("warning", "\n".join(notes[:20]))
        if opened.route_needed:  # the session's route is gone: a route must be chosen (G12)
            self.banners.show_message("warning", opened.route_needed)
        if opened.pending:  # an update waits for the next turn (G12)
            self.banners.show_message("info", opened.pending)
        self.inspect.session_opened(opened)  # foreign-session bar, read-only composer, what-if
        self._then_release(opened.painted)
        self._conversation_timer.start()
        if not self.composer.editor.isReadOnly():  # type and Ctrl+Enter, no click (design X7)
            self.composer.editor.setFocus()

    @Slot(object)
    def on_rows_appended(self, rows: Sequence[Mapping[str, Any]]) -> None:
        self.timeline.append_rows(rows)
        self.usage_view.add_rows(rows)
        self._update_notice()
        if self._follow_tail:
            self.view.scrollToBottom()
        self._conversation_soon()

    @Slot(object)
    def on_streaming(self, message: Mapping[str, Any] | None) -> None:
        self.timeline.set_streaming(message)
        if message is not None:
            self.stream_updates += 1
        if self._follow_tail and message is not None:
            self.view.scrollToBottom()
        self._conversation_soon()

    def _conversation_soon(self) -> None:
        """Render the conversation again shortly (once per burst: a restarted timer would never
        fire while a reply streams faster than its interval)."""
        if self.message_view.conversation.isChecked() and not self._conversation_timer.isActive():
            self._conversation_timer.start()

    def say_local(self, text: str, level: str = "info") -> None:
        """A slash command's answer as a note in the conversation, after the newest row shown:
        whole, never sent to the model, never journaled (design X7)."""
        after: str | None = None
        for position in range(self.shown.rowCount() - 1, -1, -1):
            row = self.shown.index(position, 0).data(ROW_ROLE)
            if isinstance(row, Mapping) and row.get("type") != "streaming" and row.get("id"):
                after = str(row["id"])
                break
        self.local_notes_said += 1
        note = {
            "type": "local",
            "id": f"<local {self.local_notes_said}>",
            "ts": int(time.time() * 1000),
            "level": level,
            "text": text,
        }
        self.message_view.local_notes.append((after, note))  # shown after that row (None: the start)
        self.tabs.setCurrentIndex(TAB_MESSAGE)
        if not self.message_view.conversation.isChecked():
            self.message_view.conversation.setChecked(True)  # renders through its toggle
        self.jump_to_latest()

    def jump_to_latest(self) -> None:
        """Back to the newest rows: the timeline follows the tail again and so does the pane."""
        self._follow_tail = True
        self.view.scrollToBottom()
        self._sync_conversation()

    def _range_changed(self, _minimum: int, maximum: int) -> None:
        if self._follow_tail:
            self.view.verticalScrollBar().setValue(maximum)

    def _scrolled(self, value: int) -> None:
        bar = self.view.verticalScrollBar()
        self._follow_tail = value >= bar.maximum() - 2
        self.message_view.set_behind(not self._follow_tail)
        self._conversation_soon()

    #: Rows rendered beyond the timeline's visible ones in conversation mode, either side.
    CONVERSATION_MARGIN = 3

    def _sync_conversation(self, focus: QModelIndex | None = None) -> None:
        """Conversation mode: render the rows the timeline shows, the top one (or ``focus``) first.

        Only a screenful is rendered, so a 100k-row session costs what a short one does (X4).
        """
        if not self.message_view.conversation.isChecked():
            current = self.view.currentIndex()
            row = current.data(ROW_ROLE) if current.isValid() else None
            self.message_view.show_row(row if isinstance(row, Mapping) else None)
            return
        count = self.shown.rowCount()
        if count == 0:  # a new session holds no row until the first send: only local notes
            self.message_view.show_rows([], follow=True, at_start=True)
            return
        top = self.view.indexAt(self.view.viewport().rect().topLeft())
        bottom = self.view.indexAt(self.view.viewport().rect().bottomLeft())
        first = top.row() if top.isValid() else 0
        # Below the last row: one screenful, never the whole session.
        per_screen = self.view.viewport().height() // max(1, self.view.sizeHintForRow(0)) + 1
        last = bottom.row() if bottom.isValid() else min(count - 1, first + per_screen)
        anchor = focus.row() if focus is not None and focus.isValid() else first
        start = max(0, min(first, anchor) - self.CONVERSATION_MARGIN)
        stop = min(count, max(last, anchor) + self.CONVERSATION_MARGIN + 1)
        rows = [self.shown.index(i, 0).data(ROW_ROLE) for i in range(start, stop)]
        # Following the newest rows (the timeline at its end, no row picked): the pane keeps the
        # end in view as replies arrive and stream (design X7).
        follow = (focus is None or not focus.isValid()) and self._follow_tail and stop == count
        self.message_view.show_rows(
            [r for r in rows if isinstance(r, Mapping)],
            focus=anchor - start,
            follow=follow,
            at_start=start == 0,
        )

    def _row_selected(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if not current.isValid():
            return
        row = current.data(ROW_ROLE)
        self.row_view.show_row(row)
        if self.message_view.conversation.isChecked():
            self._sync_conversation(focus=current)
        else:
            self.message_view.show_row(row if isinstance(row, Mapping) else None)
        if not isinstance(row, Mapping) or row.get("type") not in ("system", "compaction"):
            if self.tabs.currentIndex() == TAB_DIFF:
                self.tabs.setCurrentIndex(TAB_MESSAGE)
            self.diff_view.clear_diff("The selected row is not a system or compaction row.")
            return
        position = self.shown.position(current)
        if "foreign" in row:  # pi / Claude Code: diffed on the worker as pi replays its state (X1)
            if row.get("diff") is None:
                self.diff_view.clear_diff("This row changes no system state the file records.")
            else:
                self.diff_view.show_diff(row["diff"])
        else:
            self.diff_view.show_diff(
                section_diff(
                    self.timeline.rows, position, self.timeline.state_positions(position), self.timeline.ids
                )
            )
        if self.tabs.currentIndex() in (TAB_MESSAGE, TAB_ROW):
            self.tabs.setCurrentIndex(TAB_DIFF)

    def set_show_hidden(self, show: bool) -> None:
        if self.hidden_action.isChecked() != show:
            self.hidden_action.setChecked(show)  # re-enters through toggled
            return
        self.filter.set_show_hidden(show)
        self._update_notice()

    def _kind_toggled(self, kind: int, on: bool) -> None:
        self.filter.set_kind_visible(kind, on)
        self._update_notice()

    def _apply_search(self) -> None:
        self.filter.set_search(self.search.text())
        self._update_notice()

    def focus_search(self) -> None:
        self.search.setFocus()
        self.search.selectAll()

    def _update_notice(self) -> None:
        hidden = self.filter.hidden_system_rows()
        shown_system = self.timeline.count_hidden_kinds() if self.filter.show_hidden else 0
        filtered = self.filter.filtered_out() - hidden
        parts = []
        if hidden:
            parts.append(
                f"{hidden} hidden system row{'s' if hidden != 1 else ''} — <a href='show'>show all</a>"
            )
        elif shown_system:
            parts.append(
                f"Showing {shown_system} hidden system row{'s' if shown_system != 1 else ''} — <a href='hide'>hide</a>"
            )
        if filtered > 0:
            parts.append(
                f"{filtered} row{'s' if filtered != 1 else ''} filtered out — <a href='clear'>clear filters</a>"
            )
        self.hidden_notice.setText(" · ".join(parts))
        self.hidden_notice.setVisible(bool(parts))

    def _notice_link(self, link: str) -> None:
        if link == "show":
            self.set_show_hidden(True)
        elif link == "hide":
            self.set_show_hidden(False)
        elif link == "clear":
            self.search.clear()
            self.filter.set_search("")
            for action in self.kind_actions.values():
                action.setChecked(True)
            self._update_notice()

    # --- turns ------------------------------------------------------------------------------

    @Slot(str)
    def send(self, text: str) -> None:
        if self.busy or not text.strip():
            return
        self.busy = True
        self.composer.set_busy(True)
        self._follow_tail = True
        self.client.send.emit(text)

    def stop(self) -> None:
        if self.busy:
            self.client.stop.emit()
            self.statusBar().showMessage("Stopping…", 3000)

    def compact_asking(self, focus: str) -> None:
        """Show what compacting would do and ask (design C1): the Compact button, Ctrl+Shift+K and
        ``/compact FOCUS`` ask the same (design X7)."""
        if self.busy:
            return
        preview = self.compaction_preview
        if preview is None:
            self.compact_with(focus)
            return
        if not preview.possible:
            self.say_local(f"Nothing to compact yet: {preview.reason}.")
            return
        self.compact_confirm = question_box(
            self,
            "compactConfirm",
            "Compact this session?",
            f"Compact {preview.rows} rows into a summary?",
            compaction_text(preview),
            "Compact",
            lambda: self.compact_with(focus),
        )
        self.compact_confirm.setStyleSheet("QLabel#qt_msgbox_informativelabel { min-width: 460px; }")

    def refresh_compaction_preview(self) -> None:
        """Ask the worker what compacting now would do; the button's tooltip shows it (and the
        context meter how full the context is: both change when a session opens or a turn ends)."""
        self.context_meter.refresh(self.client.ops)
        self.client.ops.query(
            lambda worker: worker.runtime.preview_compaction() if worker.runtime is not None else None,
            self._on_compaction_preview,
            label="planning the compaction preview",
        )

    def _on_compaction_preview(self, preview: CompactionPreview | None) -> None:
        self.compaction_preview = preview
        head = (
            "<qt><p><b>Compact</b> (Ctrl+Shift+K): " + compaction_text(preview) + "</p></qt>"
            if preview is not None
            else ""
        )
        self.compact_button.setToolTip(head + tooltip("compaction", "retained tail"))

    def compact_with(self, focus: str) -> None:
        """Compact now; ``focus`` (``/compact FOCUS``) says what the summary must keep."""
        if self.busy:
            return
        self.busy = True
        self.composer.set_busy(True)
        self.client.compact.emit(focus)

    @Slot(str)
    def on_turn_started(self, what: str) -> None:
        self.busy = True
        self.composer.set_busy(True)
        self.compact_button.setEnabled(False)
        self.statusBar().showMessage("Compacting…" if what == "compact" else "Working…")

    @Slot(object)
    def on_turn_finished(self, summary: TurnFinished) -> None:
        self.busy = False
        self.retry_countdown.finish()
        self.composer.set_busy(False)
        self.compact_button.setEnabled(True)
        self.turn_results.append(summary)
        if self.queued_open is not None:
            path, self.queued_open = self.queued_open, None
            self.open_path(path)
        error, stopped = summary.error, summary.stopped
        if summary.unsent and not self.composer.editor.toPlainText().strip():
            # Not stored: back to the composer as typed (a message starting with "/" was typed "//").
            typed = (
                commands.PREFIX + summary.unsent
                if summary.unsent.startswith(commands.PREFIX)
                else summary.unsent
            )
            self.composer.editor.setPlainText(typed)
            self.composer.editor.moveCursor(QTextCursor.MoveOperation.End)
        if summary.note:  # nothing was done, and that is all there is to say
            self.say_local(summary.note)
        elif error:
            self.statusBar().showMessage(f"Stopped ({stopped}): {error}", 15000)
            self.banners.show_message("error", f"The turn stopped ({stopped}): {error}")
        else:
            self.statusBar().showMessage(_OUTCOMES.get(stopped, f"Done ({stopped})."), 6000)
        self.composer.editor.setFocus()
        self.refresh_compaction_preview()

    # --- status and selectors ----------------------------------------------------------------

    def _refresh_cache_misses(self) -> None:
        if not self._misses_stale or self.tabs.currentWidget() is not self.usage_view:
            return
        self._misses_stale = False
        self.client.ops.query(
            lambda worker: worker.cache_session(),
            self.usage_view.set_cache_summary,
            label="summing the session's cache misses",
        )

    @Slot(object)
    def on_status(self, status: RouteStatus) -> None:
        self.status = status
        self._misses_stale = True
        self._refresh_cache_misses()
        self.route_combo.blockSignals(True)
        self.route_combo.clear()
        for index, choice in enumerate(status.routes):
            self.route_combo.addItem(route_text(choice.label), choice.key)
            self.route_combo.setItemData(index, plain_tip(choice.label), Qt.ItemDataRole.ToolTipRole)
            if not choice.available:
                item = self.route_combo.model().item(index)  # type: ignore[attr-defined]
                item.setEnabled(False)
                item.setToolTip(plain_tip(choice.why))
        self.route_combo.blockSignals(False)
        self.session_choices.restore()  # the selectors on the session's route, mode and fallback
        self.payload_view.set_routes([(c.key, c.label) for c in status.routes if c.available])
        capability = status.capability
        delivery = str(capability.get("delivery", ""))
        color, explained = _DELIVERY_LOOK.get(delivery, ("gray", None))
        offline = " · <b>offline emulator</b>" if capability.get("offline") else ""
        self.capability_label.setText(
            f"<span style='color: {color}'>●</span> {html.escape(delivery)}{offline}"
        )
        self.capability_label.setToolTip(
            "<qt><p>"
            + "</p><p>".join(
                html.escape(str(capability.get(k, "")))
                for k in ("summary", "explanation")
                if capability.get(k)
            )
            + f"</p><p>Route: {html.escape(str(capability.get('reason', '')))}</p></qt>"
            + (tooltip(explained) if explained else "")
        )
        self.inspect.status_changed(status)  # where the flags came from, how old

    @Slot(str, str)
    def on_message(self, level: str, text: str) -> None:
        """Errors and warnings stay in a banner above the panes; the status bar repeats them."""
        self.statusBar().showMessage(text, 15000)
        if level in ("error", "warning"):
            self.banners.show_message(level, text)
        if level == "error":
            log.error("%s", text)

    # --- dialogs ----------------------------------------------------------------------------

    @Slot(int, object)
    def on_permission_requested(self, request_id: int, info: Mapping[str, Any]) -> None:
        dialog = PermissionDialog(request_id, info, self)
        dialog.answered.connect(self.client.permission_answered)
        dialog.finished.connect(lambda _r, d=dialog: self._forget_dialog(d))
        self.permission_dialogs.append(dialog)
        dialog.open()

    @Slot(int, object)
    def on_question_requested(self, request_id: int, info: Mapping[str, Any]) -> None:
        """A yes/no question from the worker, in plain text (it names folders and commands that
        came from files); No is the default (designs A10 and A11)."""
        box = plain_message_box(
            QMessageBox.Icon.Question, str(info.get("title", "")), str(info.get("text", "")), self
        )
        box.setObjectName("questionBox")
        box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No)
        box.setDefaultButton(QMessageBox.StandardButton.No)

        def finished(result: int, box: QMessageBox = box) -> None:
            if box in self.question_boxes:
                self.question_boxes.remove(box)
            yes = result == QMessageBox.StandardButton.Yes
            self.client.permission_answered.emit(request_id, yes, False)
            box.deleteLater()

        box.finished.connect(finished)
        self.question_boxes.append(box)
        box.open()

    def _forget_dialog(self, dialog: PermissionDialog) -> None:
        if dialog in self.permission_dialogs:
            self.permission_dialogs.remove(dialog)
        dialog.deleteLater()

    def show_accounts(self) -> None:
        if self.accounts_dialog is None:
            dialog = AccountsDialog(list(PROVIDER_KEY_ENV), self)
            dialog.save_requested.connect(
                lambda p, a, k: self.client.ops.query(
                    lambda _w: accounts_dialog.save_key(p, a, k), self.on_accounts
                )
            )
            dialog.delete_requested.connect(
                lambda p, a: self.client.ops.query(
                    lambda _w: accounts_dialog.delete_key(p, a), self.on_accounts
                )
            )
            self.accounts_dialog = dialog
        self.accounts_dialog.open()
        self.client.ops.query(lambda _w: accounts_dialog.read_accounts(), self.on_accounts)

    def on_accounts(self, report: accounts_dialog.AccountsReport) -> None:
        entries, note = report
        if self.accounts_dialog is not None:
            self.accounts_dialog.show_accounts(entries, note)

    def new_session(self) -> None:
        if self.busy:
            return
        folder = QFileDialog.getExistingDirectory(self, "Workspace for the new session", str(Path.home()))
        if folder:
            self.client.new_session.emit(folder)

    def export_conversation(self) -> None:
        """File → Export: asked here, built and written on the worker (design X6, G10)."""
        ask_and_export(self, self.client.ops, self.session.path if self.session else "", self.on_message)

    def open_session_dialog(self) -> None:
        if self.busy:
            return
        path, _ = QFileDialog.getOpenFileName(
            self,
            "Open session",
            str(paths.sessions_dir()),
            "Sessions: Pi Desktop, pi, Claude Code (*.jsonl);;All files (*)",
        )
        if path:
            self.open_path(path)

    def open_path(self, path: str | Path) -> None:
        """Open a session file as File → Open does (``pi-desktop PATH``, a second launch; design G8).

        The session already showing only brings the window to the front. While a turn runs the
        file waits and opens when the turn ends (the turn's rows belong to the open session).
        """
        target = str(Path(path).expanduser().absolute())
        if self.session is not None and same_file(target, self.session.path):
            self.bring_to_front()
            return
        if self.busy:
            self.queued_open = target
            self.statusBar().showMessage(f"{Path(target).name} opens when this turn ends.", 15000)
            return
        self.client.open_session.emit(target)

    @Slot(object)
    def open_paths(self, paths: Sequence[str]) -> None:
        """A second launch's files: the first opens here, the others wait in File → Open Recent."""
        self.bring_to_front()
        if not paths:
            return
        self.remember_also(paths[1:])
        self.open_path(paths[0])

    def remember_also(self, paths: Sequence[str]) -> None:
        """Files given beside the one that opens: one session per window, the rest go to Recent."""
        if not paths:
            return
        recent = [*(str(p) for p in paths), *self.recent_sessions()]
        self._save_settings({"session/recent": list(dict.fromkeys(recent))[:MAX_RECENT]})
        self.statusBar().showMessage(
            f"One session per window: {len(paths)} more file(s) are in File → Open Recent.", 15000
        )

    def bring_to_front(self) -> None:
        if self.isMinimized():
            self.showNormal()
        self.show()
        self.raise_()
        self.activateWindow()

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        for path in self.recent_sessions():
            action = self.recent_menu.addAction(Path(path).name.replace("&", "&&"))  # no mnemonic
            action.setToolTip(plain_tip(path))
            action.triggered.connect(lambda _c=False, p=path: self.open_path(p))
        if not self.recent_menu.actions():
            self.recent_menu.addAction("(none)").setEnabled(False)

    def shortcuts(self) -> list[tuple[str, str]]:
        """Every menu action with a shortcut, as (what, keys), for the help page."""
        found: list[tuple[str, str]] = []
        for menu_action in self.menuBar().actions():
            menu = menu_action.menu()
            for action in menu.actions() if isinstance(menu, QMenu) else ():
                keys = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
                if keys:
                    found.append((action.text().replace("&", "").rstrip("…"), keys))
        return found

    def show_help(self) -> None:
        if self.help_page is None:
            self.help_page = HelpPage(self.shortcuts(), self)
        self.help_page.show()
        self.help_page.raise_()

    def _about(self) -> None:
        QMessageBox.about(
            self,
            "About Pi Desktop",
            f"<b>Pi Desktop</b> {__version__}<br>A coding agent with a session inspector that keeps "
            "provider prompt caches warm.",
        )
