"""The permission prompt: the Host asks (on the worker thread), the user answers here.

The dialog is window-modal but opened with ``open()``, never ``exec()``: the GUI event loop
keeps running (the stream keeps painting) while the question waits, and the answer goes back
as a signal carrying the request id.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from PySide6.QtCore import Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from desktop.ui.html import esc


class PermissionDialog(QDialog):
    answered = Signal(int, bool, bool)
    """(request id, allowed, remember for this session)"""

    def __init__(self, request_id: int, info: Mapping[str, Any], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("permissionDialog")
        self.request_id = request_id
        self.info = dict(info)
        self._sent = False
        self.setWindowTitle(f"Allow {info.get('tool', 'tool')}?")
        effect = info.get("effect", "")
        summary = QLabel(
            f"<b>{esc(info.get('tool', '?'))}</b> wants to "
            f"{esc({'write': 'change files', 'execute': 'run a command', 'external': 'use an external tool'}.get(str(effect), str(effect)))}:"
            f"<br><code>{esc(info.get('summary', ''))}</code>"
            f"<br><span style='color: gray'>Permission mode: {esc(info.get('mode', ''))}</span>"
        )
        summary.setWordWrap(True)
        args = QPlainTextEdit(orjson.dumps(info.get("arguments") or {}, option=orjson.OPT_INDENT_2).decode())
        args.setReadOnly(True)
        args.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        args.setMaximumHeight(180)
        self.remember = QCheckBox(f"Allow {info.get('tool', 'this tool')} for the rest of this session")
        buttons = QDialogButtonBox()
        self.allow_button = buttons.addButton("Allow", QDialogButtonBox.ButtonRole.AcceptRole)
        self.deny_button = buttons.addButton("Deny", QDialogButtonBox.ButtonRole.RejectRole)
        self.allow_button.setObjectName("allowButton")
        self.deny_button.setObjectName("denyButton")
        self.deny_button.setDefault(True)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(summary)
        layout.addWidget(args)
        layout.addWidget(self.remember)
        layout.addWidget(buttons)
        self.finished.connect(self._send)

    def _send(self, result: int) -> None:
        if self._sent:
            return
        self._sent = True
        allowed = result == QDialog.DialogCode.Accepted
        self.answered.emit(self.request_id, allowed, allowed and self.remember.isChecked())
