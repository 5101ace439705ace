"""Help → "What am I looking at?": the inspector explained, with small pictures (design G7).

The page is built in the app (no browser, no network): HTML in a ``QTextBrowser`` and three
diagrams painted with ``QPainter`` into images registered as document resources. The
glossary section is ``desktop.ui.glossary`` itself, and the shortcut list is read from the
window's actions, so neither can drift from what the window really does.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from PySide6.QtCore import QPoint, QRect, Qt, QUrl
from PySide6.QtGui import QColor, QFont, QImage, QPainter, QPen, QTextDocument
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QVBoxLayout, QWidget

from desktop.ui import rowinfo
from desktop.ui.glossary import GLOSSARY
from desktop.ui.inert import InertBrowser, named
from desktop.ui.theme import is_dark, kind_style

PICTURES = ("timeline-row", "anchored", "cache-break")


def _canvas(width: int, height: int, dark: bool) -> tuple[QImage, QPainter]:
    image = QImage(width * 2, height * 2, QImage.Format.Format_ARGB32_Premultiplied)
    image.setDevicePixelRatio(2.0)  # sharp on high-DPI screens
    image.fill(QColor("#1e1f22" if dark else "#ffffff"))
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    font = QFont()
    font.setPixelSize(12)
    painter.setFont(font)
    return image, painter


def _box(painter: QPainter, rect: QRect, fill: str, text: str, fg: str = "#ffffff") -> None:
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(QColor(fill))
    painter.drawRoundedRect(rect, 4, 4)
    painter.setPen(QColor(fg))
    painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)


def picture(name: str, dark: bool) -> QImage:
    """One diagram of the help page, drawn for the current palette."""
    ink = QColor("#e8eaed" if dark else "#1f2328")
    muted = QColor("#9aa0a6" if dark else "#6a737d")
    # The timeline's own colours (theme.kind_style), so the picture shows what the window shows.
    assistant, user, system = (kind_style(k, dark) for k in (rowinfo.ASSISTANT, rowinfo.USER, rowinfo.SYSTEM))
    badge_fg = assistant.badge_text.name()
    if name == "timeline-row":
        image, p = _canvas(600, 58, dark)
        p.fillRect(QRect(4, 6, 4, 24), assistant.accent)
        p.setPen(muted)
        p.drawText(QRect(14, 6, 60, 24), Qt.AlignmentFlag.AlignVCenter, "12:04:31")
        _box(p, QRect(76, 10, 80, 16), assistant.accent.name(), assistant.label.upper(), badge_fg)
        p.setPen(ink)
        p.drawText(QRect(164, 6, 200, 24), Qt.AlignmentFlag.AlignVCenter, "The tests pass now; I chang…")
        p.setPen(muted)
        right = Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight
        p.drawText(QRect(360, 6, 236, 24), right, "in 2.1k · hit 87% · out 11 · $0.0006")
        p.setPen(QPen(muted, 1, Qt.PenStyle.DashLine))
        for x, label in ((16, "time"), (78, "badge"), (166, "text"), (410, "usage (yields when narrow)")):
            p.drawLine(QPoint(x, 32), QPoint(x, 38))
            p.drawText(QRect(x, 38, 190, 18), Qt.AlignmentFlag.AlignLeft, label)
    elif name == "anchored":
        image, p = _canvas(520, 96, dark)
        p.setPen(ink)
        p.drawText(QRect(10, 4, 240, 18), Qt.AlignmentFlag.AlignLeft, "In the file (journal order)")
        p.drawText(QRect(270, 4, 240, 18), Qt.AlignmentFlag.AlignLeft, "What the model reads")
        _box(p, QRect(10, 26, 230, 26), user.accent.name(), "user: “fix the test”", badge_fg)
        _box(p, QRect(10, 60, 230, 26), system.accent.name(), "system: guidance changed (before ↑)", badge_fg)
        _box(p, QRect(270, 26, 230, 26), system.accent.name(), "system: guidance changed", badge_fg)
        _box(p, QRect(270, 60, 230, 26), user.accent.name(), "user: “fix the test”", badge_fg)
        p.setPen(QPen(muted, 1.5))
        p.drawLine(QPoint(244, 73), QPoint(266, 39))
    else:  # cache-break
        image, p = _canvas(520, 74, dark)
        p.setPen(ink)
        p.drawText(
            QRect(10, 2, 500, 18),
            Qt.AlignmentFlag.AlignLeft,
            "The next request, in the provider's cache order",
        )
        _box(p, QRect(10, 24, 330, 24), "#16a34a", "cached prefix (predicted)")
        _box(p, QRect(342, 24, 168, 24), "#dc2626", "uncached")
        p.setPen(QPen(QColor("#f59e0b"), 2))
        p.drawLine(QPoint(341, 18), QPoint(341, 54))
        p.setPen(muted)
        p.drawText(QRect(290, 54, 200, 18), Qt.AlignmentFlag.AlignLeft, "↑ cache break")
    p.end()
    return image


def help_html(shortcuts: Sequence[tuple[str, str]]) -> str:
    """The page's text; images are referenced as ``picture:<name>``."""
    glossary = "".join(
        f"<dt id='{html.escape(key)}'><a name='{html.escape(key)}'></a><b>{html.escape(entry.title)}</b></dt>"
        f"<dd>{html.escape(entry.text)}</dd>"
        for key, entry in sorted(GLOSSARY.items(), key=lambda kv: kv[1].title.lower())
    )
    keys = "".join(
        f"<tr><td style='padding-right: 16px'><code>{html.escape(seq)}</code></td><td>{html.escape(what)}</td></tr>"
        for what, seq in shortcuts
    )
    return f"""
<h2>What am I looking at?</h2>
<p>Pi Desktop is a coding agent that shows you exactly what it sends to the model. The window has
three parts: the <b>timeline</b> on the left (every row of the session file, in order), the
<b>detail tabs</b> on the right (the selected row and the next request), and the <b>composer</b>
at the bottom left, where you type.</p>

<h3>The timeline</h3>
<p><img src="picture:timeline-row"></p>
<p>Each row has a coloured stripe and badge for its kind (user, assistant, tool, system,
compaction, note or error), the time, and its text. Assistant rows end with their figures: prompt
tokens (<i>in</i>), the share read from the provider's cache (<i>hit</i>), output tokens
(<i>out</i>) and the cost; when the timeline is narrow the figures give way to the text. Hover a
row for its whole text and the figures in words. Search with Ctrl+F; the
<b>Kinds</b> button hides kinds you do not need.</p>

<h3>Hidden system rows</h3>
<p><img src="picture:anchored"></p>
<p>Besides the chat, the session file holds <b>hidden system rows</b>: Desktop's instructions,
the environment, workspace guidance, skills and tool changes. A new one is written only when
something changed, and it carries only the changed <b>sections</b> (a section set to null is a
<b>tombstone</b>: it no longer applies). Your message is saved first so it is never lost; the
update is <b>anchored</b> before it, so the model reads it first. Show them with Ctrl+H and
select one: the <b>Section diff</b> tab shows each section before and after.</p>

<h3>The next request and the prompt cache</h3>
<p><img src="picture:cache-break"></p>
<p>Providers cache the start of a request, each in its own terms. The <b>Payload</b> tab shows
the exact bytes of the next request (with your draft as the next message), predicts how many
input tokens the provider will read from its cache and what the request will cost, and marks
the <b>cache break</b>: where the provider's cached prefix ends, and which section, tool or
message changed there. After the reply it checks the prediction against the usage the provider
reported. Tick <b>Changes</b> to see what changed since the last request. The toolbar's coloured dot says how system updates travel on this route:
<b>native system sections</b> (green), <b>attributed</b> user updates (amber), or <b>folded</b>
into the leading prompt (red, breaks the cache on every change). The <b>Usage</b> tab adds up
cached and uncached tokens and the cost of every request, and charts each request's cost:
green for cache reads, amber for uncached input, blue for output, so a request that missed the
cache stands out as a tall amber bar; a grey hatched slot is a request the catalog has no
price for (<i>price unknown</i>, never $0.00).</p>

<h3>Tools and activation</h3>
<p>MCP and extension tools are <b>deferred</b>: the model finds them with ToolSearch, and only
then may they run. The <b>Activation</b> tab lists the active ones, the <b>epoch</b> (a change of
route, account, mode or catalog starts a new one and revokes them), the <b>identity</b> they are
bound to, and the <b>declaration policy</b>: <i>fixed</i> (every schema declared from the first
request) or <i>on demand</i> (a schema is declared when it is activated).</p>

<h3>Compaction</h3>
<p>When the context gets long, <b>Compact</b> replaces older messages with a summary and keeps
the newest ~20,000 tokens verbatim. Hover the button to see what would be summarized before you
click.</p>

<h3>Glossary</h3>
<dl>{glossary}</dl>

<h3>Keyboard shortcuts</h3>
<table cellspacing="0" cellpadding="2">{keys}</table>
<p>Tab and Shift+Tab move between the timeline, the tabs and the composer; Ctrl+Tab switches
detail tabs; arrow keys move through the timeline.</p>
"""


class HelpPage(QDialog):
    """A non-modal window with the page; opening it again raises the same window."""

    def __init__(self, shortcuts: Sequence[tuple[str, str]], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("helpPage")
        self.setWindowTitle("What am I looking at? — Pi Desktop")
        self.resize(760, 720)
        self.browser = named(InertBrowser(), "helpBrowser", accessible="Help: what am I looking at")
        dark = is_dark(self.palette())
        document = self.browser.document()
        for name in PICTURES:
            document.addResource(
                QTextDocument.ResourceType.ImageResource, QUrl(f"picture:{name}"), picture(name, dark)
            )
        self.browser.setHtml(help_html(shortcuts))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.browser)
        layout.addWidget(buttons)
