"""The permission prompt: the Host asks (on the worker thread), the user answers here.

The dialog is window-modal but opened with ``open()``, never ``exec()``: the GUI event loop
keeps running (the stream keeps painting) while the question waits, and the answer goes back
as a signal carrying the request id.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from desktop.ui.banner import printable
from desktop.ui.glossary import tooltip
from desktop.ui.html import Colors, diff_line, esc
from desktop.ui.inert import InertBrowser, named, plain_label
from desktop.ui.theme import is_dark

#: What each permission mode means for the next calls, in one line (design G7).
MODE_CONSEQUENCES = {
    "ask": "Mode “ask”: every file change and every command waits for your answer; reads never ask.",
    "accept-edits": "Mode “accept-edits”: file changes in the workspace run without asking; commands and "
    "external tools ask.",
    "read-only": "Mode “read-only”: file changes and commands are refused without asking.",
    "full-access": "Mode “full-access”: everything runs without asking.",
}
_EFFECT_WORDS = {"write": "change files", "execute": "run a command", "external": "use an external tool"}


def diff_html(diff: str, dark: bool) -> str:
    """A unified diff with added and removed lines tinted."""
    c = Colors(dark)
    lines = [diff_line(line, c) for line in diff.splitlines()]
    return f'<div style="font-family: monospace; white-space: pre-wrap">{"".join(lines)}</div>'


class PermissionDialog(QDialog):
    """Everything needed to judge one call: where, exactly what, and what the mode means."""

    answered = Signal(int, bool, bool)
    """(request id, allowed, remember for this session)"""

    def __init__(self, request_id: int, info: Mapping[str, Any], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("permissionDialog")
        self.request_id = request_id
        self.info = dict(info)
        self._sent = False
        tool = str(info.get("tool", "tool"))
        self.setWindowTitle(f"Allow {tool}?")
        effect = str(info.get("effect", ""))
        cwd = str(info.get("cwd", "") or "")
        summary = QLabel(
            f"<b>{esc(tool)}</b> wants to {esc(_EFFECT_WORDS.get(effect, effect))}"
            + (f" in <code>{esc(cwd)}</code>" if cwd else "")
            + ":"
        )
        summary.setObjectName("permissionSummary")
        summary.setTextFormat(Qt.TextFormat.RichText)  # escaped above
        summary.setWordWrap(True)
        summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        arguments = info.get("arguments") or {}
        diff = str(info.get("diff", "") or "")
        self.detail = named(InertBrowser(), "permissionDetail", accessible="What the tool will do")
        self.detail.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        if diff:
            self.detail.setHtml(diff_html(diff, is_dark(self.palette())))
        elif tool == "bash" and isinstance(arguments, Mapping) and "command" in arguments:
            self.detail.setPlainText(printable(str(arguments["command"])))  # the whole command
        else:
            self.detail.setPlainText(
                printable(orjson.dumps(arguments, option=orjson.OPT_INDENT_2, default=str).decode())
            )
        # As tall as what it shows (a one-line command stays one line), at most about 24 lines.
        shown_lines = self.detail.document().lineCount() if not diff else diff.count("\n") + 1
        spacing = self.detail.fontMetrics().lineSpacing()
        self.detail.setMinimumHeight(min(shown_lines + 1, 4) * spacing + 16)
        self.detail.setMaximumHeight(min(shown_lines + 1, 24) * spacing + 16)
        mode = str(info.get("mode", ""))
        self.consequence = plain_label(
            MODE_CONSEQUENCES.get(mode, f"Permission mode: {mode}"), name="permissionMode", wrap=True
        )
        self.consequence.setToolTip(tooltip("permission mode"))
        self.remember = QCheckBox(f"Allow {tool.replace('&', '&&')} for the rest of this session")
        buttons = QDialogButtonBox()
        self.allow_button = buttons.addButton("Allow", QDialogButtonBox.ButtonRole.AcceptRole)
        self.deny_button = buttons.addButton("Deny", QDialogButtonBox.ButtonRole.RejectRole)
        self.allow_button.setObjectName("allowButton")
        self.deny_button.setObjectName("denyButton")
        self.allow_button.setAccessibleName(f"Allow {tool}")
        self.deny_button.setAccessibleName(f"Deny {tool}")
        self.deny_button.setDefault(True)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(summary)
        layout.addWidget(self.detail, 1)
        layout.addWidget(self.consequence)
        layout.addWidget(self.remember)
        layout.addWidget(buttons)
        self.finished.connect(self._send)
        self.resize(720, self.sizeHint().height())

    def _send(self, result: int) -> None:
        if self._sent:
            return
        self._sent = True
        allowed = result == QDialog.DialogCode.Accepted
        self.answered.emit(self.request_id, allowed, allowed and self.remember.isChecked())
