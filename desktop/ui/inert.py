"""Text from files, tools and models shown without reading anything it names (design G11).

Qt's rich text resolves what a text refers to: an ``<img src>``, a Markdown image, a CSS
``@import`` or ``background-image``. Its default loader reads any local path, on the window
thread with the interpreter lock held: ``/dev/zero`` until memory runs out (the app aborts), a
FIFO until someone writes to it (the window freezes, Stop and SIGTERM with it). A label, tooltip
or message box guesses rich text from the first tag it sees, so a session *file name* such as
``<img src=&#47;dev&#47;zero>.jsonl`` is enough. Everything the window shows came from somewhere
untrusted, so:

- documents that render HTML are ``InertDocument``: they know only the resources the window
  added itself (``addResource``) and answer every other name with an empty image;
- browsers are ``InertBrowser``: no link navigates, in-page anchors scroll;
- labels and message boxes with such text are plain text; tooltips go through ``plain_tip``;
- image blocks are decoded from the row's own bytes by ``decode_image``: PNG, JPEG, GIF or WebP
  within size limits. SVG is refused, since an SVG can name other files and Qt's SVG reader
  loads them.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any, TypeVar

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QObject, QSize, Qt, QUrl
from PySide6.QtGui import QImage, QImageReader, QTextDocument
from PySide6.QtWidgets import QLabel, QMessageBox, QTextBrowser, QWidget

#: An image block larger than this (decoded bytes) is not decoded.
MAX_IMAGE_BYTES = 20 * 1024 * 1024
#: Nor one wider or taller than this, or with more pixels than ``MAX_IMAGE_PIXELS``
#: (read from the header before any pixel is decoded).
MAX_IMAGE_SIDE = 10_000
MAX_IMAGE_PIXELS = 25_000_000

_RASTER = {b"png": "PNG", b"jpeg": "JPEG", b"gif": "GIF", b"webp": "WebP"}
_Widget = TypeVar("_Widget", bound=QWidget)


def _empty_image() -> QImage:
    image = QImage(1, 1, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    return image


class InertDocument(QTextDocument):
    """A document that renders only what it was given.

    A resource the window added (``addResource``) is found before ``loadResource`` is asked;
    every other name gets an empty image (an image resource) or nothing. The image must not
    be null: for a null one Qt's image handler reads the name from disk itself.
    """

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.refused: set[str] = set()
        """Names a text asked for and did not get (the tests read it)."""

    def loadResource(self, type: int, name: QUrl | str) -> Any:
        self.refused.add(name.toString() if isinstance(name, QUrl) else name)
        if type == QTextDocument.ResourceType.ImageResource.value:
            return _empty_image()
        return None


class InertBrowser(QTextBrowser):
    """A ``QTextBrowser`` on an ``InertDocument`` whose links never navigate.

    A click on ``#name`` scrolls to that anchor; every other link is only emitted as
    ``anchorClicked`` for the owner to handle (or ignore): a link in a message never opens a
    file, a folder or a web page by itself.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setDocument(InertDocument(self))
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.anchorClicked.connect(self._in_page)

    def inert_document(self) -> InertDocument:
        document = self.document()
        assert isinstance(document, InertDocument)
        return document

    def loadResource(self, type: int, name: QUrl | str) -> Any:
        return self.inert_document().loadResource(type, name)

    def _in_page(self, url: QUrl) -> None:
        if url.hasFragment() and not url.scheme() and not url.path():
            self.scrollToAnchor(url.fragment())


def named(widget: _Widget, name: str, tip: str = "", accessible: str = "") -> _Widget:
    """``widget`` with its object name (what styles and tests find it by), tooltip and the name
    a screen reader says; an empty tooltip or accessible name is left unset."""
    widget.setObjectName(name)
    if tip:
        widget.setToolTip(tip)
    if accessible:
        widget.setAccessibleName(accessible)
    return widget


def plain_label(
    text: str = "", parent: QWidget | None = None, *, name: str = "", wrap: bool = False
) -> QLabel:
    """A label that shows ``text`` as written, whatever tags it contains."""
    label = named(QLabel(parent), name)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(wrap)
    label.setText(text)
    return label


def plain_message_box(
    icon: QMessageBox.Icon, title: str, text: str, parent: QWidget | None = None
) -> QMessageBox:
    """A message box with one OK button that shows ``text`` as written (the format is set
    before the text: a box given rich text at construction has parsed it already)."""
    box = QMessageBox(parent)
    box.setIcon(icon)
    box.setWindowTitle(title)
    box.setTextFormat(Qt.TextFormat.PlainText)
    box.setText(text)
    box.setStandardButtons(QMessageBox.StandardButton.Ok)
    return box


def question_box(
    parent: QWidget, name: str, title: str, text: str, informative: str, yes: str, on_yes: Callable[[], None]
) -> QMessageBox:
    """A plain-text question, opened, whose Yes button says ``yes``; Cancel is the default."""
    box = named(plain_message_box(QMessageBox.Icon.Question, title, text, parent), name)
    box.setInformativeText(informative)
    box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel)
    box.button(QMessageBox.StandardButton.Yes).setText(yes)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    box.finished.connect(lambda result: on_yes() if result == QMessageBox.StandardButton.Yes else None)
    box.open()
    return box


def plain_tip(text: str) -> str:
    """``text`` as a tooltip shows it literally. Qt guesses rich text in tooltips and offers no
    plain format for them, so the text is escaped inside an explicit rich-text wrapper."""
    if not text:
        return ""
    escaped = html.escape(text, quote=False).replace("\n", "<br>")
    return f"<qt><p style='white-space: pre-wrap'>{escaped}</p></qt>"


def decode_image(data: bytes, max_width: int) -> QImage | str:
    """The image a row carries, at most ``max_width`` wide, or why it is not shown (a phrase).

    Only the row's own bytes are read, only as PNG, JPEG, GIF or WebP (told by their first
    bytes, not by the block's ``mimeType``), and only within the size limits above.
    """
    if len(data) > MAX_IMAGE_BYTES:
        return f"{len(data):,} bytes, more than the {MAX_IMAGE_BYTES:,} shown"
    kind = _sniff(data)
    if kind is None:
        if data.lstrip()[:1] == b"<" or data[:2] == b"\x1f\x8b":
            return "SVG, which can refer to other files"
        return "not a PNG, JPEG, GIF or WebP image"
    buffer = QBuffer()
    buffer.setData(QByteArray(data))
    buffer.open(QIODevice.OpenModeFlag.ReadOnly)
    reader = QImageReader(buffer, QByteArray(kind))
    reader.setAutoDetectImageFormat(False)
    size = reader.size()
    if not size.isValid():
        return f"unreadable {_RASTER[kind]} data"
    if max(size.width(), size.height()) > MAX_IMAGE_SIDE or size.width() * size.height() > MAX_IMAGE_PIXELS:
        return f"{size.width():,} × {size.height():,} pixels, too large to show"
    if size.width() > max_width:  # JPEG decodes straight at the smaller size
        reader.setScaledSize(QSize(max_width, max(1, round(size.height() * max_width / size.width()))))
    image = reader.read()
    if image.isNull():
        return f"unreadable {_RASTER[kind]} data ({reader.errorString()})"
    return image


def _sniff(data: bytes) -> bytes | None:
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return b"png"
    if data.startswith(b"\xff\xd8\xff"):
        return b"jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return b"gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return b"webp"
    return None
