"""A journal row as a person reads it: Markdown, code, tool calls and results (design X4).

``render_row`` turns one raw row into HTML for a ``QTextBrowser``: Markdown through Qt's own
``QTextDocument.setMarkdown`` (no extra parser), fenced code highlighted with Pygments, thinking
collapsed behind a link, a tool call as its name with readable arguments (a unified diff for
``edit``, the content for ``write``, the command for ``bash``), a tool result in monospace with
long output collapsed, an image block as a document resource. Toggles are links
``toggle:<key>``; the view keeps the set of expanded keys and renders again. The raw row stays
one click away in the Row tab. Pure apart from the Markdown conversion and the image decoding,
so the view can cache the result per row.

Nothing here reads what a text names (design G11): the Markdown is converted in an
``InertDocument``, an image the text refers to (``![x](/path)``, ``<img src=...>``) becomes a
note naming it, and only an image block's own bytes are decoded, within size limits.
"""

from __future__ import annotations

import base64
import binascii
import html
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
from pygments.util import ClassNotFound
from PySide6.QtGui import QColor, QImage, QTextCharFormat, QTextCursor, QTextDocument, QTextFormat

from desktop.pi.money import format_cost
from desktop.ui import rowinfo
from desktop.ui.banner import printable
from desktop.ui.bridge import edit_pairs, unified_diff
from desktop.ui.html import Colors, diff_line
from desktop.ui.inert import MAX_IMAGE_BYTES, InertDocument, decode_image
from desktop.ui.theme import kind_style

#: A tool result longer than this many lines shows its first ``PREVIEW_LINES`` until expanded.
COLLAPSE_LINES = 30
PREVIEW_LINES = 20
#: Characters of a collapsed result (a single very long line counts too).
COLLAPSE_CHARS = 6000
#: Code longer than this is shown plain: highlighting a megabyte would stall the window.
HIGHLIGHT_LIMIT = 100_000
#: Images wider than this are scaled down to it.
IMAGE_WIDTH = 480

_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})\s*([\w+#.-]*)[^\n]*$")
_BODY = re.compile(r"<body[^>]*>(.*)</body>", re.S)
_OBJECT = "\ufffc"


@dataclass
class Rendered:
    html: str
    #: Image resources the HTML refers to as ``src="<name>"``: name -> the decoded image.
    images: dict[str, QImage] = field(default_factory=dict)


def esc(text: object) -> str:
    return html.escape(printable(str(text)), quote=False)


# --- Markdown and code --------------------------------------------------------------------------


def _lexer(language: str = "", filename: str = "") -> Lexer | None:
    try:
        if language:
            return get_lexer_by_name(language)
        if filename:
            return get_lexer_for_filename(filename)
    except ClassNotFound:
        return None
    return None


def code_block(code: str, c: Colors, *, language: str = "", filename: str = "") -> str:
    """A ``<pre>`` with the code highlighted (language by fence name or file name), or plain."""
    code = printable(code)
    lexer = _lexer(language, filename) if len(code) <= HIGHLIGHT_LIMIT else None
    if lexer is None:
        inner = html.escape(code, quote=False)
    else:
        formatter = HtmlFormatter(nowrap=True, noclasses=True, style="monokai" if c.dark else "default")
        inner = highlight(code, lexer, formatter).rstrip("\n")
    return (
        f'<table width="100%" cellspacing="0" cellpadding="6" style="background: {c.code_bg};'
        f' border: 1px solid {c.border}; margin: 4px 0"><tr><td>'
        f'<pre style="margin: 0; white-space: pre-wrap; font-family: monospace">{inner}</pre></td></tr></table>'
    )


def _prose(text: str, c: Colors) -> str:
    document = InertDocument()
    document.setMarkdown(text)
    _name_images(document, c)
    match = _BODY.search(document.toHtml())
    return match.group(1) if match else html.escape(text)


def _name_images(document: QTextDocument, c: Colors) -> None:
    """Each image the text refers to becomes a note naming it: the window shows only images a
    row carries (design G11), and a path in a reply is not the user's to open by looking."""
    found: list[tuple[int, str]] = []
    # An image is one object-replacement character: found by Qt's own search, not a Python walk.
    cursor = document.find(_OBJECT)
    while not cursor.isNull():
        form = cursor.charFormat()  # the character just before the position: the one found
        if form.isImageFormat():
            alt = str(form.property(QTextFormat.Property.ImageAltText) or "")
            name = form.toImageFormat().name()
            note = f"[image “{alt}” not shown: {name}]" if alt else f"[image not shown: {name}]"
            found.append((cursor.selectionStart(), note))
        cursor = document.find(_OBJECT, cursor)
    if not found:
        return
    muted = QTextCharFormat()
    muted.setForeground(QColor(c.muted))
    muted.setFontItalic(True)
    cursor = QTextCursor(document)
    for position, note in reversed(found):
        cursor.setPosition(position)
        cursor.setPosition(position + 1, QTextCursor.MoveMode.KeepAnchor)
        cursor.insertText(note, muted)


def markdown(text: str, c: Colors) -> str:
    """Markdown to HTML: prose by Qt, fenced code blocks highlighted (an open fence runs to the end)."""
    text = printable(text)
    out: list[str] = []
    prose: list[str] = []
    lines = text.split("\n")
    index = 0
    while index < len(lines):
        match = _FENCE.match(lines[index])
        if not match:
            prose.append(lines[index])
            index += 1
            continue
        fence, language = match.group(2), match.group(3)
        end = index + 1
        while end < len(lines) and not lines[end].strip().startswith(fence):
            end += 1
        if prose:
            out.append(_prose("\n".join(prose), c))
            prose = []
        out.append(code_block("\n".join(lines[index + 1 : end]), c, language=language))
        index = end + 1
    if prose:
        out.append(_prose("\n".join(prose), c))
    return "".join(out)


# --- pieces -------------------------------------------------------------------------------------


def _toggle(key: str, label: str, expanded: bool, c: Colors) -> str:
    arrow = "▾" if expanded else "▸"
    return f'<p style="margin: 4px 0"><a href="toggle:{html.escape(key)}" style="color: {c.muted}">{arrow} {esc(label)}</a></p>'


def _words(text: str) -> str:
    count = len(text.split())
    return f"{count:,} word{'s' if count != 1 else ''}"


def _diff_html(path: str, old: str, new: str, c: Colors) -> str:
    diff = unified_diff(path, printable(old), printable(new))
    no_change = f'<div style="color: {c.muted}">(no change)</div>'
    rows = [diff_line(line, c) for line in diff.split("\n")] if diff else [no_change]
    return (
        f'<table width="100%" cellspacing="0" cellpadding="6" style="background: {c.code_bg};'
        f' border: 1px solid {c.border}; margin: 4px 0"><tr><td style="font-family: monospace;'
        f' white-space: pre-wrap">{"".join(rows)}</td></tr></table>'
    )


def tool_call_html(block: Mapping[str, Any], c: Colors) -> str:
    name = str(block.get("name", "?"))
    arguments = block.get("arguments")
    args: Mapping[str, Any] = arguments if isinstance(arguments, Mapping) else {}
    head = f'<p style="margin: 6px 0 2px 0"><b>→ {esc(name)}</b>'
    path = str(args.get("path", "") or args.get("file_path", ""))
    if name == "edit" and path:
        pairs = edit_pairs(args)
        body = "".join(_diff_html(path, old, new, c) for old, new in pairs)
        return f"{head} <code>{esc(path)}</code> · {len(pairs)} replacement{'s' if len(pairs) != 1 else ''}</p>{body}"
    if name == "write" and path:
        content = str(args.get("content", ""))
        lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
        return (
            f"{head} <code>{esc(path)}</code> · {lines:,} line{'s' if lines != 1 else ''}</p>"
            + code_block(content, c, filename=path)
        )
    if name == "bash" and "command" in args:
        extra = {k: v for k, v in args.items() if k != "command"}
        note = " · " + esc(", ".join(f"{k}={v}" for k, v in extra.items())) if extra else ""
        return f"{head}{note}</p>" + code_block(str(args["command"]), c, language="bash")
    if not args:
        raw = arguments if isinstance(arguments, str) else ""
        return f"{head}</p>" + (code_block(raw, c) if raw else "")
    simple = all(isinstance(v, str | int | float | bool) and "\n" not in str(v) for v in args.values())
    if simple and sum(len(str(v)) for v in args.values()) < 300:
        items = " · ".join(
            f'<span style="color: {c.muted}">{esc(k)}</span> {esc(v)}' for k, v in args.items()
        )
        return f"{head} {items}</p>"
    pretty = orjson.dumps(args, option=orjson.OPT_INDENT_2, default=str).decode()
    return f"{head}</p>" + code_block(pretty, c, language="json")


def _image(block: Mapping[str, Any], key: str, rendered: Rendered, c: Colors) -> str:
    data = block.get("data")
    if not isinstance(data, str):
        return f'<p style="color: {c.muted}">[image without data]</p>'
    if len(data) // 4 * 3 > MAX_IMAGE_BYTES:  # refused before decoding the text
        image: QImage | str = f"about {len(data) // 4 * 3:,} bytes, more than the {MAX_IMAGE_BYTES:,} shown"
    else:
        try:
            raw = base64.b64decode(data, validate=False)
        except (binascii.Error, ValueError):
            return f'<p style="color: {c.bad}">[image: invalid base64 data]</p>'
        image = decode_image(raw, IMAGE_WIDTH)
    if isinstance(image, str):
        return f'<p style="color: {c.muted}"><i>[image not shown: {esc(image)}]</i></p>'
    name = f"image:{key}"
    rendered.images[name] = image
    return f'<p><img src="{html.escape(name)}"></p>'


def _result_text(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts = [
        str(b.get("text", "")) for b in content or () if isinstance(b, Mapping) and b.get("type") == "text"
    ]
    return "\n".join(parts)


def tool_result_html(
    row_key: str, message: Mapping[str, Any], expanded: frozenset[str], rendered: Rendered, c: Colors
) -> str:
    text = printable(_result_text(message))
    lines = text.split("\n")
    key = f"{row_key}:output"
    long = len(lines) > COLLAPSE_LINES or len(text) > COLLAPSE_CHARS
    out: list[str] = []
    if long and key not in expanded:
        preview = "\n".join(lines[:PREVIEW_LINES])[:COLLAPSE_CHARS]
        out.append(code_block(preview, c))
        out.append(_toggle(key, f"show all {len(lines):,} lines ({len(text):,} characters)", False, c))
    else:
        out.append(code_block(text, c) if text else f'<p style="color: {c.muted}"><i>(no output)</i></p>')
        if long:
            out.append(_toggle(key, "show less", True, c))
    content = message.get("content")
    for index, block in enumerate(content if isinstance(content, list) else ()):
        if isinstance(block, Mapping) and block.get("type") == "image":
            out.append(_image(block, f"{row_key}:{index}", rendered, c))
    return "".join(out)


# --- rows ---------------------------------------------------------------------------------------

_ROLE_TITLES = {
    "user": "You",
    "assistant": "Assistant",
    "toolResult": "Tool result",
    "system": "System update",
    "compaction": "Compaction",
    "note": "Note",
    "streaming": "Assistant (streaming)",
    "local": "Pi Desktop",
}


def _header(title: str, color: str, c: Colors, *details: str) -> str:
    """The row's title in its colour, then the details that are not empty (its time first)."""
    detail = " · ".join(d for d in details if d)
    extra = f' <span style="color: {c.muted}; font-weight: normal">· {esc(detail)}</span>' if detail else ""
    return f'<p style="margin: 8px 0 2px 0"><b style="color: {color}">{esc(title)}</b>{extra}</p>'


def usage_line(usage: Mapping[str, Any]) -> str:
    """Tokens, hit ratio and cost of one request, in words (the timeline's tooltip says the same)."""
    inp, read, write = (int(usage.get(k) or 0) for k in ("input", "cacheRead", "cacheWrite"))
    prompt = inp + read + write
    cost = usage.get("cost")
    total = float(cost.get("total") or 0) if isinstance(cost, Mapping) else 0.0
    hit = f"{read / prompt:.0%}" if prompt else "—"
    return (
        f"{prompt:,} input tokens ({read:,} cached, {inp + write:,} uncached) · cache hit {hit} · "
        f"{int(usage.get('output') or 0):,} output · {format_cost(total)}"
    )


def _message_blocks(
    row_key: str, message: Mapping[str, Any], expanded: frozenset[str], rendered: Rendered, c: Colors
) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return markdown(content, c)
    out: list[str] = []
    for index, block in enumerate(content if isinstance(content, list) else ()):
        if not isinstance(block, Mapping):
            continue
        kind = block.get("type")
        if kind == "text":
            out.append(markdown(str(block.get("text", "")), c))
        elif kind == "thinking":
            thought = str(block.get("thinking", ""))
            key = f"{row_key}:thinking:{index}"
            is_open = key in expanded
            if not thought and block.get("redacted"):
                out.append(f'<p style="color: {c.muted}"><i>Thinking (redacted by the provider)</i></p>')
                continue
            out.append(_toggle(key, f"Thinking · {_words(thought)}", is_open, c))
            if is_open:
                out.append(f'<div style="color: {c.muted}; margin-left: 12px">{markdown(thought, c)}</div>')
        elif kind == "toolCall":
            out.append(tool_call_html(block, c))
        elif kind == "image":
            out.append(_image(block, f"{row_key}:{index}", rendered, c))
    return "".join(out)


def _system_html(row: Mapping[str, Any], row_key: str, expanded: frozenset[str], c: Colors) -> str:
    meta = row.get("modelSystem")
    message = meta.get("message") if isinstance(meta, Mapping) else None
    out = [f'<p style="color: {c.muted}">{esc(rowinfo.system_summary(row))}</p>']
    if not isinstance(message, Mapping):
        return "".join(out)
    for name, value in (message.get("sections") or {}).items():
        key = f"{row_key}:section:{name}"
        if value is None:
            out.append(
                f'<p style="margin: 2px 0">&sect; <b>{esc(name)}</b> <i style="color: {c.removed_fg}">removed (tombstone)</i></p>'
            )
            continue
        text = str(value)
        out.append(_toggle(key, f"{name} · {len(text):,} characters", key in expanded, c))
        if key in expanded:
            out.append(code_block(text, c))
    for label, tools in (("added", message.get("toolsAdded")), ("removed", message.get("toolsRemoved"))):
        names = [str(t.get("name", "?")) for t in tools or () if isinstance(t, Mapping)]
        if names:
            out.append(f"<p>Tools {label}: {esc(', '.join(names))}</p>")
    return "".join(out)


#: The app's own notes whose first words are its jargon, said in words a user knows.
_NOTE_MEANINGS = {
    "fixed declarations:": "every tool the model may use is described in the first request and "
    "that list never changes, so the provider keeps reusing its cache of the conversation's start.",
    "on-demand declarations:": "a tool is described to the model only once it is needed; each one "
    "is added at the end of the conversation, so the earlier parts stay cached and the first "
    "request is smaller.",
}


def note_meaning(text: str) -> str:
    """A plain explanation of one of the app's own notes, or ``""``."""
    return next((meaning for prefix, meaning in _NOTE_MEANINGS.items() if text.startswith(prefix)), "")


def row_key(row: Mapping[str, Any], fallback: int = 0) -> str:
    value = row.get("id")
    return str(value) if value else f"row{fallback}"


def render_row(
    row: Mapping[str, Any], *, dark: bool, expanded: frozenset[str] = frozenset(), index: int = 0
) -> Rendered:
    """One row as a person reads it."""
    c = Colors(dark)
    rendered = Rendered("")
    key = row_key(row, index)
    kind = row.get("type")
    title = _ROLE_TITLES.get(str(kind), f"Row of unknown type {kind!r}")
    when = rowinfo.row_time(row)
    parts: list[str] = []
    # The timeline's colour for the kind (theme.kind_style): an answer is never painted in the
    # colour of a system row.
    code = {"user": rowinfo.USER, "assistant": rowinfo.ASSISTANT, "toolResult": rowinfo.TOOL}.get(str(kind))
    color = kind_style(code, dark).accent.name() if code is not None else c.muted
    message = row.get("message") if isinstance(row.get("message"), Mapping) else None
    if kind in ("user", "assistant", "streaming") and message is not None:
        model = str(message.get("model") or "") if kind == "assistant" else ""
        parts.append(_header(title, color, c, when, model))
        stop = message.get("stopReason")
        if kind == "assistant" and stop in ("error", "aborted"):
            why = message.get("errorMessage") or stop
            parts.append(
                f'<table width="100%" cellpadding="6" style="border: 1px solid {c.bad}"><tr><td style="color: {c.bad}">'
                f"<b>{esc(str(stop).capitalize())}</b>: {esc(why)}</td></tr></table>"
            )
        parts.append(_message_blocks(key, message, expanded, rendered, c))
        usage = message.get("usage")
        if kind == "assistant" and isinstance(usage, Mapping):
            parts.append(f'<p style="color: {c.muted}; font-size: small">{esc(usage_line(usage))}</p>')
    elif kind == "toolResult" and message is not None:
        failed = bool(message.get("isError"))
        name = str(message.get("toolName", "?"))
        parts.append(
            _header(f"{title}: {name}", c.bad if failed else color, c, when, "failed" if failed else "")
        )
        parts.append(tool_result_html(key, message, expanded, rendered, c))
    elif kind == "system":
        anchored = f"anchored before {row.get('before')}" if row.get("before") else ""
        parts.append(_header(title, c.muted, c, when, anchored))
        parts.append(_system_html(row, key, expanded, c))
    elif kind == "compaction":
        tokens = row.get("tokensBefore")
        detail = f"~{tokens:,} tokens before" if isinstance(tokens, int) else ""
        parts.append(_header(title, c.warn, c, when, detail))
        parts.append(markdown(str(row.get("summary", "")), c))
    elif kind == "local":  # a slash command's answer: shown here only, never sent nor journaled
        level = str(row.get("level", "info"))
        color = c.bad if level == "error" else c.warn if level == "warning" else c.muted
        parts.append(_header(title, color, c, when, "only you see this"))
        lines = str(row.get("text", "")).split("\n")
        parts.append("".join(f'<p style="margin: 1px 0">{esc(line) or "&nbsp;"}</p>' for line in lines))
    elif kind == "note":
        level = str(row.get("level", "info"))
        parts.append(_header(f"{title} ({level})", c.bad if level == "error" else c.muted, c, when))
        text = str(row.get("text", ""))
        parts.append(f"<p>{esc(text)}</p>")
        meaning = note_meaning(text)
        if meaning:
            parts.append(f'<p style="color: {c.muted}"><i>What this means:</i> {esc(meaning)}</p>')
    else:
        parts.append(_header(title, c.muted, c, when))
        parts.append(f'<p style="color: {c.muted}">{esc(rowinfo.row_summary(row))}</p>')
    rendered.html = f'<a name="{html.escape(key)}"></a>' + "".join(parts)
    return rendered
