"""JSON colouring for the payload and row views (a ``QSyntaxHighlighter``).

One regular expression finds strings, numbers and literals per text block; a string followed
by a colon is a key. Very large documents switch highlighting off (``MAX_CHARS``) because
Qt highlights every block synchronously when the text is set.
"""

from __future__ import annotations

import re

from PySide6.QtGui import QColor, QFont, QSyntaxHighlighter, QTextCharFormat, QTextDocument

MAX_CHARS = 400_000
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"(\s*:)?|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|\btrue\b|\bfalse\b|\bnull\b')


def _format(color: str, bold: bool = False) -> QTextCharFormat:
    fmt = QTextCharFormat()
    fmt.setForeground(QColor(color))
    if bold:
        fmt.setFontWeight(QFont.Weight.DemiBold)
    return fmt


class JsonHighlighter(QSyntaxHighlighter):
    def __init__(self, document: QTextDocument, dark: bool = False) -> None:
        super().__init__(document)
        if dark:
            self._key, self._string = _format("#8ab4f8", True), _format("#a5d6a7")
            self._number, self._literal = _format("#f6b26b"), _format("#ce93d8")
        else:
            self._key, self._string = _format("#1a4fa0", True), _format("#22863a")
            self._number, self._literal = _format("#b35900"), _format("#8e24aa")

    def highlightBlock(self, text: str) -> None:
        for match in _TOKEN.finditer(text):
            token = match.group(0)
            if token.startswith('"'):
                fmt = self._key if match.group(1) else self._string
                length = len(token) - (len(match.group(1)) if match.group(1) else 0)
                self.setFormat(match.start(), length, fmt)
            elif token[0] in "-0123456789":
                self.setFormat(match.start(), len(token), self._number)
            else:
                self.setFormat(match.start(), len(token), self._literal)
