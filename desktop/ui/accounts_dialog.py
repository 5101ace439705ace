"""The accounts dialog: API keys in the OS keyring (design D3, G5).

Keys are stored under the keyring service ``pi-desktop`` with the user name
``<provider>/<account>``. The dialog never reads a key back: the worker reports, per
provider, where a key would come from (keyring, environment or nowhere) and an eight-digit
fingerprint. Every keyring call happens on the worker thread (D-Bus can block).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.host import accounts
from desktop.ui.inert import plain_label


class AccountsDialog(QDialog):
    save_requested = Signal(str, str, str)
    """(provider, account, key)"""
    delete_requested = Signal(str, str)

    def __init__(self, providers: Sequence[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("accountsDialog")
        self.setWindowTitle("Accounts")
        self.resize(620, 420)
        self.table = QTableWidget(0, 3)
        self.table.setHorizontalHeaderLabels(["Provider", "Key from", "Fingerprint"])
        # Every column stays in view: provider and fingerprint fit their text, "Key from" takes
        # the rest and elides in the middle (the whole text is the cell's tooltip; design G7).
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.table.setAccessibleName("Accounts")
        self.table.verticalHeader().setVisible(False)
        self.provider = QComboBox()
        self.provider.addItems(list(providers))
        self.account = QLineEdit("default")
        self.key = QLineEdit()
        self.key.setEchoMode(QLineEdit.EchoMode.Password)
        self.key.setPlaceholderText("Paste the API key (stored in the OS keyring, never in a file)")
        form = QFormLayout()
        form.addRow("Provider", self.provider)
        form.addRow("Account", self.account)
        form.addRow("API key", self.key)
        save = QPushButton("Save to keyring")
        delete = QPushButton("Remove from keyring")
        save.clicked.connect(self._save)
        delete.clicked.connect(self._delete)
        actions = QHBoxLayout()
        actions.addWidget(save)
        actions.addWidget(delete)
        actions.addStretch(1)
        self.status = plain_label(name="accountsStatus", wrap=True)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(
            QLabel("Where each provider's key comes from (keyring first, then the environment):")
        )
        layout.addWidget(self.table, 1)
        layout.addLayout(form)
        layout.addLayout(actions)
        layout.addWidget(self.status)
        layout.addWidget(close)

    def _save(self) -> None:
        key = self.key.text()
        self.key.clear()
        self.save_requested.emit(self.provider.currentText(), self.account.text().strip() or "default", key)

    def _delete(self) -> None:
        self.delete_requested.emit(self.provider.currentText(), self.account.text().strip() or "default")

    def show_accounts(self, entries: Sequence[Mapping[str, Any]], message: str = "") -> None:
        self.table.setRowCount(len(entries))
        for row, entry in enumerate(entries):
            for column, key in enumerate(("provider", "source", "fingerprint")):
                item = QTableWidgetItem(str(entry.get(key, "")))
                item.setToolTip(item.text())
                self.table.setItem(row, column, item)
        if message:
            self.status.setText(message)


# --- the dialog's background work (run on the worker thread through ``WorkerOps``) -----------------

AccountsReport = tuple[list[dict[str, Any]], str]
"""(one entry per provider: where its key comes from and a fingerprint, a note for the status line)"""


def read_accounts(note: str = "") -> AccountsReport:
    """Where each provider's key would come from; never the key itself (keyring: worker only)."""

    entries: list[dict[str, Any]] = []
    for provider in accounts.ENV_API_KEYS:
        _key, info = accounts.resolve_api_key(provider, accounts.keyring_username(provider))
        entries.append(
            {
                "provider": provider,
                "source": {"keyring": "keyring", "env": f"environment ({info.detail})"}.get(info.source, "—"),
                "fingerprint": info.fingerprint,
            }
        )
    return entries, note


def save_key(provider: str, account: str, key: str) -> AccountsReport:
    try:
        accounts.set_api_key(accounts.keyring_username(provider, account), key)
        note = f"Saved the key for {provider}/{account} in the keyring."
    except Exception as exc:  # KeyringUnavailable, ValueError: the message says what to do
        note = str(exc)
    return read_accounts(note)


def delete_key(provider: str, account: str) -> AccountsReport:
    try:
        removed = accounts.delete_api_key(accounts.keyring_username(provider, account))
        note = (
            f"Removed the key for {provider}/{account}."
            if removed
            else f"No key stored for {provider}/{account}."
        )
    except Exception as exc:
        note = str(exc)
    return read_accounts(note)
