"""The Row tab: the selected journal row as stored, indented and coloured.

Floats are shown rounded to 12 significant digits (``desktop.pi.money.tidy``), so a summed
cost reads 0.0000564, not 0.000056399999999999995; the journal itself is never changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from desktop.pi.money import tidy
from desktop.ui.json_highlighter import MAX_CHARS, JsonHighlighter
from desktop.ui.theme import is_dark


class RowView(QPlainTextEdit):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("rowView")
        self.setReadOnly(True)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setPlaceholderText("Select a row in the timeline to see it as stored in the journal.")
        self._highlighter = JsonHighlighter(self.document(), is_dark(self.palette()))

    def show_row(self, row: Mapping[str, Any] | None) -> None:
        if row is None:
            self.clear()
            return
        text = orjson.dumps(tidy(row), option=orjson.OPT_INDENT_2, default=str).decode()
        if len(text) > MAX_CHARS:
            self._highlighter.setDocument(None)  # type: ignore[arg-type]
        elif self._highlighter.document() is None:
            self._highlighter.setDocument(self.document())
        self.setPlainText(text)
