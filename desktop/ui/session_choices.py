"""The toolbar's route, mode and fallback selectors, and the settings that seed new sessions.

Changing a session's route, permission mode or fallback is an explicit act (design G12): the
selector asks the worker what the change costs on the next request (a cold cache in money, the
activation it revokes), says so with a confirmation, and only then asks the worker to change
it; the worker journals the change. A route without a key is refused before anything changes.
Cancelling puts the selector back on the session's value.

The window's own settings (the last choices and Settings → New Session Defaults…) only seed new
sessions: an opened session shows and keeps its own values.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QMessageBox,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from desktop.session.compaction_settings import KEEP_RECENT_TOKENS, RESERVE_TOKENS
from desktop.ui.inert import named, question_box

if TYPE_CHECKING:
    from desktop.ui.main_window import MainWindow

#: QSettings key of the compaction thresholds new sessions start with.
COMPACTION_KEY = "newSessions/compaction"


class SessionChoices(QObject):
    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        #: The open confirmation, if any (tests answer it).
        self.confirm: QMessageBox | None = None
        self.defaults_dialog: NewSessionDefaults | None = None

    # --- the toolbar ------------------------------------------------------------------------

    def route_chosen(self) -> None:
        key = self.window.route_combo.currentData()
        status = self.window.status  # while a route is needed, any choice answers it
        if key and (status.route_needed or key != status.route_key):
            self._ask("route", str(key), self.window.client.set_route.emit)

    def mode_chosen(self) -> None:
        mode = self.window.mode_combo.currentText()
        if mode != self.window.status.mode:
            self._ask("mode", mode, self.window.client.set_mode.emit)

    def fallback_chosen(self) -> None:
        fallback = str(self.window.fallback_combo.currentData())
        if fallback != self.window.status.fallback:
            self._ask("fallback", fallback, self.window.client.set_fallback.emit)

    def _ask(self, what: str, value: str, apply: Callable[[str], None]) -> None:
        """Ask the worker what the change costs, then confirm; the selectors show the session's
        values until the change is made."""
        self.restore()
        if self.window.session is None or self.window.session.foreign is not None:
            apply(value)  # no session of its own: nothing to cost or journal
            self._remember(what, value)
            return
        self.window.client.ops.query(
            lambda worker: worker.change_cost(what, value),
            lambda answer: self._confirm(what, value, answer, apply),
            label=f"costing the {what} change",
        )

    def _confirm(
        self, what: str, value: str, answer: Mapping[str, Any], apply: Callable[[str], None]
    ) -> None:
        text = str(answer.get("text") or "")
        if not answer.get("allowed", True):
            self.window.on_message("warning", text + " Nothing was changed.")
            return

        def change() -> None:
            apply(value)
            self._remember(what, value)

        self.confirm = question_box(
            self.window,
            "changeConfirm",
            f"Change the {what}?",
            text or f"Change the {what} to {value}?",
            "The change is recorded in the session's journal.",
            "Change",
            change,
        )
        self.confirm.finished.connect(lambda _result: self.restore())

    def _remember(self, what: str, value: str) -> None:
        """The user's choice seeds the next new session."""
        self.window._save_settings({f"session/{what}": value})

    def restore(self) -> None:
        """Put the selectors back on the session's values (the change has not happened yet)."""
        status = self.window.status
        combo = self.window.route_combo
        combo.blockSignals(True)
        combo.setCurrentIndex(-1 if status.route_needed else max(0, combo.findData(status.route_key)))
        combo.blockSignals(False)
        self.window.mode_combo.setCurrentText(status.mode)
        fallback = self.window.fallback_combo
        fallback.setCurrentIndex(max(0, fallback.findData(status.fallback)))

    # --- settings for new sessions ------------------------------------------------------------

    def compaction_seed(self) -> dict[str, Any]:
        value = self.window.settings().value(COMPACTION_KEY, {})
        cached = self.window._settings_cache.get(COMPACTION_KEY)
        return dict(cached if isinstance(cached, Mapping) else value if isinstance(value, Mapping) else {})

    def edit_new_session_defaults(self) -> None:
        dialog = NewSessionDefaults(self.compaction_seed(), self.window)

        def accepted() -> None:
            values = dialog.values()
            self.window._save_settings({COMPACTION_KEY: values})
            self.window.client.set_seeds.emit({"compaction": values})

        dialog.accepted.connect(accepted)
        self.defaults_dialog = dialog
        dialog.open()


class NewSessionDefaults(QDialog):
    """Settings → New Session Defaults…: the compaction thresholds a new session starts with
    (design C1). A session keeps its own once it has them; ``--reserve-tokens`` and
    ``--keep-recent-tokens`` change an existing session's from the command line."""

    def __init__(self, values: Mapping[str, Any], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("newSessionDefaults")
        self.setWindowTitle("New Session Defaults")
        self.auto = QCheckBox("Compact automatically near the end of the context window")
        self.auto.setChecked(str(values.get("enabled", True)).lower() not in ("false", "0"))
        self.reserve = named(
            _tokens_box(values.get("reserveTokens"), RESERVE_TOKENS),
            "reserveTokens",
            "Automatic compaction starts when the context comes this close to the window",
        )
        self.keep = named(
            _tokens_box(values.get("keepRecentTokens"), KEEP_RECENT_TOKENS),
            "keepRecentTokens",
            "How many tokens of the newest rows a compaction keeps as they are",
        )
        form = QFormLayout()
        form.addRow(self.auto)
        form.addRow("Reserve before the window's end (tokens):", self.reserve)
        form.addRow("Keep the newest (tokens):", self.keep)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(buttons)

    def values(self) -> dict[str, Any]:
        return {
            "enabled": self.auto.isChecked(),
            "reserveTokens": self.reserve.value(),
            "keepRecentTokens": self.keep.value(),
        }


def _tokens_box(value: object, default: int) -> QSpinBox:
    box = QSpinBox()
    box.setRange(0, 2_000_000)
    box.setSingleStep(1024)
    box.setGroupSeparatorShown(True)
    try:
        box.setValue(int(str(value)))
    except (TypeError, ValueError):
        box.setValue(default)
    return box
