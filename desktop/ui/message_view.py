"""The Message tab: the selected row, or the transcript around it, as a person reads it (design X4).

One ``InertBrowser`` (a ``QTextBrowser`` that reads nothing a message names, design G11) shows
HTML from ``desktop.ui.message_html``. Conversation mode is on from the start (design X7): the
window hands over only the rows the timeline has on screen (plus a few either side), so a
100k-row session renders a screenful at a time and the transcript follows the timeline as it
scrolls. While the timeline follows the newest rows the pane follows them too, a streaming reply
included, unless the reader scrolled the pane up; "Jump to latest" brings both back to the end. Rendered rows are cached by id
and by which of their parts are expanded, so scrolling back and forth does not convert the same
Markdown again. "Raw JSON" switches to the Row tab.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

from PySide6.QtCore import QUrl, Signal
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from desktop.ui.inert import InertBrowser, named
from desktop.ui.message_html import Rendered, render_row, row_key
from desktop.ui.theme import is_dark

_CACHE_SIZE = 400


class MessageView(QWidget):
    raw_requested = Signal()
    conversation_toggled = Signal(bool)
    jump_requested = Signal()
    """The reader asked for the newest rows ("Jump to latest")."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("messageView")
        self.conversation = named(QCheckBox("Conversation"), "conversationToggle")
        self.conversation.setToolTip(
            "Show the whole transcript around the timeline's visible rows, scrolling with the timeline "
            "and following new replies; off: only the selected row"
        )
        self.conversation.setAccessibleName("Conversation mode")
        self.conversation.setChecked(True)
        self.conversation.toggled.connect(self.conversation_toggled)
        self.jump_button = named(QPushButton("Jump to latest ↓"), "jumpToLatest", accessible="Jump to latest")
        self.jump_button.setToolTip(
            "Scroll the conversation and the timeline to the newest row and follow it"
        )
        self.jump_button.clicked.connect(self._jump)
        self.jump_button.hide()
        self.raw_button = named(
            QPushButton("Raw JSON"),
            "rawJsonButton",
            "The selected row exactly as stored in the session file (Row tab)",
            "Show raw JSON",
        )
        self.raw_button.clicked.connect(self.raw_requested)
        # Reads nothing a message names (design G11).
        self.browser = named(InertBrowser(), "messageBrowser", accessible="Rendered message")
        self.browser.anchorClicked.connect(self._link)
        self.browser.setPlaceholderText("Select a row in the timeline to read it here.")
        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        bar.addWidget(self.conversation)
        bar.addStretch(1)
        bar.addWidget(self.jump_button)
        bar.addWidget(self.raw_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(self.browser, 1)
        self.expanded: set[str] = set()
        self.rows: list[Mapping[str, Any]] = []
        self.focus_key: str | None = None
        self._cache: OrderedDict[tuple[str, frozenset[str], bool], Rendered] = OrderedDict()
        self.renders = 0
        """Rows converted to HTML since start (cache misses); the tests read it."""
        self.following = False
        """The last rows shown end the conversation and the pane keeps its end in view."""
        self.scrolled_up = False
        """The reader scrolled the pane away from the end while it was following."""
        self.behind = False
        """The timeline is not at its newest rows (the window says so)."""
        self._rendering = False
        self.browser.verticalScrollBar().valueChanged.connect(self._user_scrolled)
        self.local_notes: list[tuple[str | None, dict[str, Any]]] = []
        """Answers to slash commands: (the id of the row they follow, the note row). They live
        in the pane only: never sent to the model, never journaled (design X7)."""

    # --- what to show ----------------------------------------------------------------------

    def show_row(self, row: Mapping[str, Any] | None) -> None:
        self.show_rows([row] if row is not None else [], focus=0)

    def show_rows(
        self,
        rows: Sequence[Mapping[str, Any]],
        focus: int = 0,
        *,
        follow: bool = False,
        at_start: bool = False,
    ) -> None:
        """Render ``rows`` and scroll so the row at ``focus`` is at the top; with ``follow`` keep the
        end in view instead, unless the reader scrolled up (then the position stays). The local
        notes that follow a shown row come with it (``at_start``: the rows begin the session)."""
        focus_row = rows[focus] if 0 <= focus < len(rows) else None
        self.rows = self._with_notes(list(rows), at_start) if len(rows) > 1 or follow else list(rows)
        self.focus_key = next(
            (row_key(row, index) for index, row in enumerate(self.rows) if row is focus_row), None
        )
        if not follow:
            self.scrolled_up = False
        self.following = follow
        self._render(keep_scroll=follow and self.scrolled_up)
        self._update_jump()

    def set_behind(self, behind: bool) -> None:
        """The timeline left (or came back to) its newest rows."""
        self.behind = behind
        self._update_jump()

    def _update_jump(self) -> None:
        show = self.conversation.isChecked() and bool(self.rows) and (self.behind or self.scrolled_up)
        self.jump_button.setVisible(show)

    def _user_scrolled(self, value: int) -> None:
        if self._rendering or not self.following:
            return
        bar = self.browser.verticalScrollBar()
        self.scrolled_up = value < bar.maximum() - 4
        self._update_jump()

    def _jump(self) -> None:
        self.scrolled_up = False
        self.behind = False
        self.jump_button.hide()
        self.jump_requested.emit()

    def clear(self) -> None:
        self.show_rows([])

    def _with_notes(self, rows: list[Mapping[str, Any]], at_start: bool) -> list[Mapping[str, Any]]:
        if not self.local_notes:
            return rows
        out: list[Mapping[str, Any]] = (
            [row for after, row in self.local_notes if after is None] if at_start else []
        )
        for row in rows:
            out.append(row)
            row_id = row.get("id")
            out.extend(note for after, note in self.local_notes if after is not None and after == row_id)
        return out

    # --- rendering ---------------------------------------------------------------------------

    def _rendered(self, row: Mapping[str, Any], index: int, dark: bool) -> Rendered:
        key = row_key(row, index)
        mine = frozenset(k for k in self.expanded if k.startswith(key + ":"))
        cache_key = (key, mine, dark)
        cached = self._cache.get(cache_key) if row.get("id") and row.get("type") != "streaming" else None
        if cached is not None:
            self._cache.move_to_end(cache_key)
            return cached
        self.renders += 1
        rendered = render_row(row, dark=dark, expanded=mine, index=index)
        if row.get("id") and row.get("type") != "streaming":
            self._cache[cache_key] = rendered
            while len(self._cache) > _CACHE_SIZE:
                self._cache.popitem(last=False)
        return rendered

    def _render(self, *, keep_scroll: bool) -> None:
        bar = self.browser.verticalScrollBar()
        position = bar.value()
        dark = is_dark(self.palette())
        parts = [self._rendered(row, index, dark) for index, row in enumerate(self.rows)]
        document = self.browser.document()
        for part in parts:
            for name, image in part.images.items():
                document.addResource(QTextDocument.ResourceType.ImageResource, QUrl(name), image)
        self._rendering = True
        try:
            self.browser.setHtml("<hr>".join(part.html for part in parts))
            if keep_scroll:
                bar.setValue(position)
            elif self.following:
                bar.setValue(bar.maximum())
            elif self.focus_key is not None and len(self.rows) > 1:
                self.browser.scrollToAnchor(self.focus_key)
            else:
                bar.setValue(0)
        finally:
            self._rendering = False

    def _link(self, url: QUrl) -> None:
        target = url.toString()
        if target.startswith("toggle:"):
            key = target.removeprefix("toggle:")
            self.expanded.symmetric_difference_update({key})
            self._render(keep_scroll=True)
