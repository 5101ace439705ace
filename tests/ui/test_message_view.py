"""The Message tab renders rows as people read them (design X4)."""

from __future__ import annotations

import base64
from typing import Any

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QUrl
from PySide6.QtGui import QColor, QImage, QTextDocument

from desktop.ui.message_html import COLLAPSE_LINES, render_row
from desktop.ui.message_view import MessageView
from tests.ui.synthetic import assistant_row, system_row, tool_row, user_row


def assistant_blocks(row_id: str, blocks: list[dict[str, Any]]) -> dict[str, Any]:
    row = assistant_row(row_id, "")
    row["message"]["content"] = blocks
    return row


def plain(view: MessageView) -> str:
    return view.browser.toPlainText()


def test_markdown_is_rendered_and_code_highlighted(view: MessageView) -> None:
    text = (
        "# Plan\n\nThis is **bold** and `code`.\n\n```python\ndef f(x):\n    return 42\n```\n\n- one\n- two"
    )
    view.show_row(assistant_row("a1", text))
    shown = plain(view)
    assert "# Plan" not in shown and "**" not in shown and "```" not in shown
    assert "Plan" in shown and "bold" in shown and "def f(x):" in shown
    # The code block carries Pygments colours: `def` is not in the text colour.
    html = view.browser.toHtml()
    assert html.count("color:#") >= 2
    document = view.browser.document()
    block = document.find("def")
    assert block.charFormat().foreground().color() != QColor("black")
    assert block.charFormat().fontFixedPitch() or "monospace" in block.charFormat().fontFamilies()[0]


def test_thinking_is_collapsed_until_clicked(view: MessageView) -> None:
    row = assistant_blocks(
        "a2",
        [
            {"type": "thinking", "thinking": "secret pondering about parsers"},
            {"type": "text", "text": "Done."},
        ],
    )
    view.show_row(row)
    assert "Thinking · 4 words" in plain(view)
    assert "secret pondering" not in plain(view)
    view._link(QUrl("toggle:a2:thinking:0"))
    assert "secret pondering" in plain(view)
    view._link(QUrl("toggle:a2:thinking:0"))
    assert "secret pondering" not in plain(view)


def test_edit_call_is_a_unified_diff_and_write_shows_content(view: MessageView) -> None:
    edit = {
        "type": "toolCall",
        "id": "c1",
        "name": "edit",
        "arguments": {
            "path": "src/app.py",
            "edits": [{"oldText": "x = 1\ny = 2", "newText": "x = 1\ny = 3"}],
        },
    }
    write = {
        "type": "toolCall",
        "id": "c2",
        "name": "write",
        "arguments": {"path": "notes.md", "content": "hello\nworld\n"},
    }
    bash = {"type": "toolCall", "id": "c3", "name": "bash", "arguments": {"command": "ls -la | wc -l"}}
    view.show_row(assistant_blocks("a3", [edit, write, bash]))
    shown = plain(view)
    assert "edit src/app.py · 1 replacement" in shown
    assert "-y = 2" in shown and "+y = 3" in shown and "--- a/src/app.py" in shown
    assert "write notes.md · 2 lines" in shown and "hello\nworld" in shown
    assert "ls -la | wc -l" in shown
    assert '"path"' not in shown  # no raw JSON for the known tools


def test_long_tool_output_is_collapsed_and_monospace(view: MessageView) -> None:
    output = "\n".join(f"line {i}" for i in range(COLLAPSE_LINES * 3))
    view.show_row(tool_row("t1", "bash", output))
    shown = plain(view)
    assert "line 0" in shown and f"line {COLLAPSE_LINES * 3 - 1}" not in shown
    assert f"show all {COLLAPSE_LINES * 3} lines" in shown
    assert "\\n" not in shown  # real line breaks, not an escaped string
    view._link(QUrl("toggle:t1:output"))
    assert f"line {COLLAPSE_LINES * 3 - 1}" in plain(view)
    cursor = view.browser.document().find("line 5")
    assert cursor.charFormat().fontFixedPitch() or "monospace" in cursor.charFormat().fontFamilies()[0]


def test_images_are_shown(view: MessageView) -> None:
    image = QImage(800, 20, QImage.Format.Format_RGB32)
    image.fill(QColor("red"))
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    row = user_row("u1", "")
    row["message"]["content"] = [
        {"type": "text", "text": "look"},
        {"type": "image", "data": base64.b64encode(bytes(data.data())).decode(), "mimeType": "image/png"},
    ]
    view.show_row(row)
    resource = view.browser.document().resource(QTextDocument.ResourceType.ImageResource, QUrl("image:u1:1"))
    assert isinstance(resource, QImage) and not resource.isNull()
    assert resource.width() == 480  # scaled to fit


def test_invalid_bytes_and_control_characters_are_escaped() -> None:
    row = tool_row("t2", "read", "ok \udcff\x1b[31m red")
    html = render_row(row, dark=False).html
    assert "\\xff" in html and "\\x1b[31m" in html and "\udcff" not in html


def test_conversation_renders_only_the_rows_given_and_caches_them(view: MessageView) -> None:
    rows = [user_row(f"u{i}", f"question {i}") for i in range(6)] + [system_row("s1", {"guidance": None})]
    view.show_rows(rows, focus=2)
    assert view.renders == 7
    assert "question 0" in plain(view) and "question 5" in plain(view) and "tombstone" in plain(view)
    view.show_rows(rows[1:], focus=0)
    assert view.renders == 7  # every row came from the cache
