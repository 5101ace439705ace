"""Slash commands in the composer, and their completion as the user types ``/`` (design G8).

The composer hands every submitted text to ``SlashCommands.submit``. A text starting with
``/`` is parsed by ``desktop.session.commands`` and carried out here, never sent to the model;
``//text`` sends ``/text``; anything else goes to the window's ``send`` unchanged. A mistyped
command puts the text back in the composer and says what is known, so nothing typed is lost.
Answers are notes in the conversation (``MainWindow.say_local``), whole, never sent to the
model and never journaled (design X7); the status bar only confirms a change it made.

``SlashCompleter`` offers the commands in a ``QCompleter`` popup while the composer holds a
single line that starts with ``/``; Tab or Enter takes the highlighted one, Esc closes it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QObject, QStringListModel, Qt
from PySide6.QtGui import QKeyEvent, QTextCursor
from PySide6.QtWidgets import QAbstractItemView, QCompleter, QPlainTextEdit

from desktop.cli._args import PERMISSION_MODES
from desktop.pi.cache_rules import rule_for
from desktop.pi.money import format_cost
from desktop.pi.routes import resolve_model
from desktop.session import commands
from desktop.session.commands import Command, Message, Problem
from desktop.ui.messages import RouteStatus

if TYPE_CHECKING:
    from desktop.ui.main_window import MainWindow
    from desktop.ui.worker import SessionWorker

#: Completions after which the user types an argument: the completer leaves a space after them.
_TAKES_ARGUMENT = {"/payload next", "/compact", "/model", "/mode"}


def capability_line(status: RouteStatus) -> str:
    """``/capability status``: the route, its delivery path and why (the whole text)."""
    capability = status.capability
    if not capability:
        return "Capability status: no route yet (the session is still opening)."
    route = status.route_key or capability.get("label") or "the current route"
    line = f"{route}: system updates as {capability.get('delivery') or 'unknown'}"
    if capability.get("toolPath"):
        line += f", tool changes as {capability['toolPath']}"
    if capability.get("reason"):
        line += f". Why: {capability['reason']}"
    return line


def route_table(worker: SessionWorker) -> str:
    """On the worker (the catalogs are read there): every route offered, with its price per
    million tokens and its prompt-cache rule, the current one marked."""
    lines = ["Routes (/model PROVIDER/ID switches; → is the current one):"]
    for choice in worker.choices:
        try:
            model = resolve_model(choice.route).model
        except Exception as exc:  # a route the catalog no longer has: said, not hidden
            lines.append(f"  {choice.key}: not in the catalog ({exc})")
            continue
        rates = model.get("cost") or {}

        def rate(name: str, rates: Mapping[str, Any] = rates) -> str:
            value = rates.get(name)
            return format_cost(float(value)) if isinstance(value, int | float) else "?"

        mark = "→" if choice.key == worker.route_key else " "
        lines.append(f"{mark} {choice.key}" + ("" if choice.available else f" (not available: {choice.why})"))
        lines.append(
            f"    per million tokens: {rate('input')} input, {rate('cacheRead')} cached input, "
            f"{rate('cacheWrite')} cache write, {rate('output')} output"
        )
        rule = rule_for(str(model.get("api") or ""), choice.route.provider)
        lines.append(f"    cache: {rule.description}")
    return "\n".join(lines)


class SlashCommands(QObject):
    """Carries out the composer's commands on the window (which owns the worker client)."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        #: What each submitted text became, in order (``Message``, ``Command`` or ``Problem``).
        self.handled: list[commands.Parsed] = []

    def submit(self, text: str) -> None:
        parsed = commands.parse(text)
        self.handled.append(parsed)
        if isinstance(parsed, Message):
            self.window.send(parsed.text)
        elif isinstance(parsed, Problem):
            self.window.say_local(parsed.text, "warning")
            editor = self.window.composer.editor
            if not editor.toPlainText():
                editor.setPlainText(text.strip())
                editor.moveCursor(editor.textCursor().MoveOperation.End)
        else:
            self._run(parsed)

    def _run(self, command: Command) -> None:
        window = self.window
        if command.name == "help":
            window.say_local("Commands:\n" + commands.help_text())
        elif command.name == "capability":
            window.say_local(capability_line(window.status))
        elif command.name == "payload":
            self._payload_next(command.argument)
        elif command.name == "compact":
            if window.busy:
                window.say_local("A turn is running; /compact waits until it ends.")
                return
            window.compact_asking(command.argument)  # the same preview as the Compact button
        elif command.name == "model" and not command.argument:
            window.client.ops.query(route_table, window.say_local, label="Listing the routes")
        elif command.name == "model":
            self._model(command.argument)
        elif command.name == "mode":
            self._mode(command.argument)

    def _payload_next(self, draft: str) -> None:
        """The Payload tab on the next request. A draft goes back into the composer: the preview
        follows the composer's text, and Ctrl+Enter then sends exactly the request shown."""
        window = self.window
        view = window.payload_view
        already_shown = window.tabs.currentWidget() is view
        if view.route_combo.currentIndex() != 0 or (already_shown and not draft):
            # The current route's request, whichever route the tab showed (the switcher says so
            # too); the pane is marked out of date until it arrives. A draft brings its own.
            view.route_combo.setCurrentIndex(0)
            view.request("main")
        window.tabs.setCurrentWidget(view)  # shown, the tab gets a fresh preview
        if draft:
            window.composer.editor.setPlainText(draft)
            window.composer.editor.moveCursor(QTextCursor.MoveOperation.End)
            window.statusBar().showMessage(
                "Payload tab: the first request of sending the draft in the composer (Ctrl+Enter sends it).",
                30000,
            )
            return
        window.statusBar().showMessage("Payload tab: the exact next request on the current route.", 30000)

    def _model(self, wanted: str) -> None:
        window = self.window
        keys = [choice.key for choice in window.status.routes]
        key = commands.match_route(wanted, keys)
        if key is None:
            offered = ", ".join(k.removeprefix("emulator/") for k in keys) or "none yet"
            self.window.say_local(f"No route {wanted}. Offered: {offered}.", "warning")
            return
        window.client.set_route.emit(key)
        self.window.statusBar().showMessage(f"Route: {key}", 30000)

    def _mode(self, name: str) -> None:
        mode = name.strip().lower()
        if mode not in PERMISSION_MODES:
            self.window.say_local(f"Unknown mode {name}. Modes: {', '.join(PERMISSION_MODES)}.", "warning")
            return
        self.window.client.set_mode.emit(mode)
        self.window.statusBar().showMessage(f"Permission mode: {mode}", 30000)


class SlashCompleter(QObject):
    """A ``QCompleter`` popup over the composer while its one line starts with ``/``."""

    def __init__(self, editor: QPlainTextEdit) -> None:
        super().__init__(editor)
        self.editor = editor
        self.completer = QCompleter(QStringListModel(commands.completions(), self), self)
        self.completer.setWidget(editor)
        self.completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.completer.setCompletionMode(QCompleter.CompletionMode.PopupCompletion)
        self.completer.activated.connect(self._insert)
        editor.textChanged.connect(self._update)
        if not editor.toolTip():  # hovering the composer says what typing / offers
            editor.setToolTip("Type / for a command:\n" + commands.help_text())
        self.popup().installEventFilter(self)  # after QCompleter's own filter, so it runs first

    def popup(self) -> QAbstractItemView:
        popup = self.completer.popup()
        assert popup is not None  # a QCompleter always has one once it has a widget
        return popup

    def _update(self) -> None:
        text = self.editor.toPlainText()
        offering = text.startswith("/") and not text.startswith("//") and "\n" not in text
        if offering:
            self.completer.setCompletionPrefix(text)
            exact = self.completer.completionCount() == 1 and self.completer.currentCompletion() == text
            offering = self.completer.completionCount() > 0 and not exact
        if not offering:
            self.popup().hide()
            return
        self.popup().setCurrentIndex(self.completer.completionModel().index(0, 0))
        rect = self.editor.cursorRect()
        rect.setWidth(self.popup().sizeHintForColumn(0) + 24)
        self.completer.complete(rect)

    def _insert(self, completion: str) -> None:
        text = completion + (" " if completion in _TAKES_ARGUMENT else "")
        self.editor.setPlainText(text)
        self.editor.moveCursor(self.editor.textCursor().MoveOperation.End)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Enter or Tab on the open popup takes the highlighted command (QCompleter would also
        pass the key on to the composer, which would add a new line or move the focus)."""
        if watched is self.popup() and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Tab):
                index = self.popup().currentIndex()
                self.popup().hide()
                if index.isValid():
                    self._insert(str(index.data()))
                return True
        return super().eventFilter(watched, event)
