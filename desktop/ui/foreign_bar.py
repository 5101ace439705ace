"""The bar above a foreign session's timeline: what it is, its branch, "Continue in Pi Desktop".

A pi or Claude Code session opens read-only (design X1). This bar says so, offers the branch
switcher (a pi session is a tree: every leaf is a branch; a Claude Code sub-agent sidechain
is one too) and the fork into a new Desktop session (design X2). It only emits what the user
chose; the worker rebuilds the timeline or writes the fork.
"""

from __future__ import annotations

import html
import time
from collections.abc import Mapping, Sequence
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton, QWidget

from desktop.ui.inert import named, plain_tip
from desktop.ui.messages import ForeignBranch


def branch_label(branch: Mapping[str, Any]) -> str:
    """One line for the switcher: title, length, time, and whether it is pi's current leaf."""
    ts = branch.get("ts")
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(ts / 1000)) if isinstance(ts, int) else ""
    tags = []
    if branch.get("current"):
        tags.append("current")
    if branch.get("sidechain"):
        tags.append("sub-agent")
    tag = f" [{', '.join(tags)}]" if tags else ""
    title = str(branch.get("title") or branch.get("leaf"))
    if len(title) > 60:
        title = title[:59] + "…"
    return f"{title} — {branch.get('length', 0)} entries{', ' + when if when else ''}{tag}"


#: What the branch picker is, in its tooltip after the current branch's whole label.
BRANCHES_TIP = "Branches of the session tree (each leaf is one); pi continues the current one"


class ForeignBar(QWidget):
    branch_chosen = Signal(str)
    """The leaf id of the branch to show."""
    continue_requested = Signal(str)
    """The leaf id to fork from into a new Desktop session."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("foreignBar")
        self.label = named(QLabel(), "foreignLabel")
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.branches = named(QComboBox(), "branchSwitcher", BRANCHES_TIP)
        # The box may be narrower than a branch's label: its tooltip names the whole branch (G16).
        self.branches.currentIndexChanged.connect(self._name_current_branch)
        self.branches.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.branches.setMinimumContentsLength(12)
        self.branches.activated.connect(self._branch_activated)
        self.continue_button = named(QPushButton("Continue in Pi Desktop"), "continueButton")
        self.continue_button.setToolTip(
            "Fork this branch into a new Pi Desktop session: the source file stays untouched "
            "and no tool activation is carried over"
        )
        self.continue_button.clicked.connect(lambda: self.continue_requested.emit(self.current_leaf()))
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label)
        layout.addWidget(QLabel("Branch:"))
        layout.addWidget(self.branches, 1)
        layout.addWidget(self.continue_button)
        self.hide()

    def show_session(self, foreign: ForeignBranch | None) -> None:
        """The foreign branch shown (its format, every branch, the leaf); hidden for a Desktop session."""
        if foreign is None:
            self.hide()
            return
        self.label.setText(f"<b>{html.escape(foreign.name)}</b> · read-only")
        self.set_branches(foreign.branches, foreign.leaf or "")
        self.show()

    def set_branches(self, branches: Sequence[Mapping[str, Any]], leaf: str) -> None:
        self.branches.blockSignals(True)
        self.branches.clear()
        for branch in branches:
            self.branches.addItem(branch_label(branch), str(branch.get("leaf")))
            fork = branch.get("forkPoint")
            self.branches.setItemData(
                self.branches.count() - 1,
                plain_tip(f"leaf {branch.get('leaf')}" + (f", forks at {fork}" if fork else "")),
                Qt.ItemDataRole.ToolTipRole,
            )
        self.branches.setCurrentIndex(max(0, self.branches.findData(leaf)))
        self.branches.setEnabled(self.branches.count() > 1)
        self.branches.blockSignals(False)
        self._name_current_branch(self.branches.currentIndex())

    def _name_current_branch(self, _index: int) -> None:
        current = self.branches.currentText()
        self.branches.setToolTip(plain_tip(f"{current}\n\n{BRANCHES_TIP}") if current else BRANCHES_TIP)

    def current_leaf(self) -> str:
        return str(self.branches.currentData() or "")

    def _branch_activated(self, _index: int) -> None:
        leaf = self.current_leaf()
        if leaf:
            self.branch_chosen.emit(leaf)
