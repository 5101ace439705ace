"""The session browser: Pi Desktop's own sessions and pi and Claude Code sessions on this
machine, by workspace (design X1, X7). Desktop sessions show their route, last activity and cost,
and the search looks inside every Desktop session's conversation too.

The worker lists them (``desktop.session.foreign.browse`` reads the head of every file, so it
never runs on the GUI thread) and sends plain dicts (``browse_rows``); this dialog shows them
in a tree, workspace then session, newest first, with a filter box. Opening a session hands
its path back to the window, which asks the worker to open it read-only.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLineEdit,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.pi.money import format_cost
from desktop.ui.inert import named, plain_label, plain_tip

FORMAT_NAMES = {"desktop": "Pi Desktop", "pi": "pi", "claude-code": "Claude Code", "codex": "Codex CLI"}
PATH_ROLE = Qt.ItemDataRole.UserRole + 1
COLUMNS = ["Session", "Source", "Route", "Last activity", "Cost", "Size"]


def desktop_rows(sessions: Sequence[Any]) -> list[dict[str, Any]]:
    """Pi Desktop sessions (``desktop_sessions.list_sessions``) grouped by workspace, newest first."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for s in sessions:
        groups.setdefault(s.workspace, []).append(
            {
                "path": str(s.path),
                "title": s.title,
                "modified": s.last_activity,
                "size": s.size,
                "route": s.route,
                "cost": s.cost,
                "text": s.text,
                "problem": s.problem,
            }
        )
    return [
        {"format": "desktop", "workspace": workspace, "folder": workspace, "sessions": items}
        for workspace, items in groups.items()
    ]


def browse_rows(workspaces: Sequence[Any]) -> list[dict[str, Any]]:
    """``browse()``'s workspaces as plain dicts for the signal (runs on the worker)."""
    return [
        {
            "format": w.format,
            "workspace": w.workspace,
            "folder": str(w.folder),
            "sessions": [
                {
                    "path": str(s.path),
                    "id": s.session_id,
                    "title": s.title,
                    "modified": s.modified,
                    "size": s.size,
                    "problem": s.problem,
                }
                for s in w.sessions
            ],
        }
        for w in workspaces
    ]


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)


#: Room beside a column's widest value (the item delegate's focus margins, both sides).
COLUMN_MARGIN = 12


class SessionBrowser(QDialog):
    """Workspaces and their sessions; double-click or Open emits ``open_requested(path)``."""

    open_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sessionBrowser")
        self.setWindowTitle("Browse sessions")
        self.resize(820, 520)
        self.filter = named(QLineEdit(), "sessionBrowserFilter")
        self.filter.setPlaceholderText("Search workspaces, titles and what Pi Desktop sessions say")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self._apply_filter)
        self.tree = named(QTreeWidget(), "sessionBrowserTree")
        self.tree.setHeaderLabels(COLUMNS)
        self.texts: dict[str, str] = {}
        """Each Desktop session's conversation text (lower case), for the search."""
        self.tree.setRootIsDecorated(True)
        self.tree.setUniformRowHeights(True)
        self.tree.itemDoubleClicked.connect(lambda item, _c: self._open(item))
        self.tree.currentItemChanged.connect(lambda *_a: self._selection_changed())
        # Folder names and errors as written (design G11).
        self.note = plain_label("Looking for sessions…", name="sessionBrowserNote", wrap=True)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Open | QDialogButtonBox.StandardButton.Close
        )
        self.buttons.accepted.connect(lambda: self._open(self.tree.currentItem()))
        self.buttons.rejected.connect(self.reject)
        self.open_button = self.buttons.button(QDialogButtonBox.StandardButton.Open)
        self.open_button.setEnabled(False)
        layout = QVBoxLayout(self)
        layout.addWidget(self.filter)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.note)
        layout.addWidget(self.buttons)

    def show_workspaces(self, workspaces: Sequence[Mapping[str, Any]], roots: Sequence[str] = ()) -> None:

        self.tree.clear()
        self.texts = {}
        total = 0
        for workspace in workspaces:
            sessions = workspace.get("sessions") or []
            source = FORMAT_NAMES.get(str(workspace.get("format")), str(workspace.get("format")))
            count = f"{len(sessions)} session{'s' if len(sessions) != 1 else ''}"
            top = QTreeWidgetItem([str(workspace.get("workspace", "")), source, "", "", "", count])
            top.setToolTip(0, plain_tip(str(workspace.get("folder", ""))))
            font = top.font(0)
            font.setBold(True)
            top.setFont(0, font)
            for session in sessions:
                modified = float(session.get("modified") or 0)
                cost = session.get("cost")
                child = QTreeWidgetItem(
                    [
                        str(session.get("title", "")),
                        source,
                        str(session.get("route") or ""),
                        time.strftime("%Y-%m-%d %H:%M", time.localtime(modified)) if modified else "",
                        format_cost(float(cost)) if isinstance(cost, int | float) else "",
                        _size(int(session.get("size") or 0)),
                    ]
                )
                path = str(session.get("path", ""))
                child.setData(0, PATH_ROLE, path)
                if session.get("text"):
                    self.texts[path] = str(session["text"])
                problem = session.get("problem")
                child.setToolTip(0, plain_tip(str(problem or path)))
                if problem:
                    child.setForeground(0, self.palette().brush(self.palette().ColorRole.PlaceholderText))
                top.addChild(child)
                total += 1
            self.tree.addTopLevelItem(top)
        self.tree.expandAll()
        for column in range(1, len(COLUMNS)):
            # Sized to the widest value with the delegate's margins on both sides, so a value
            # is never cut by a pixel or two (design G16).
            self.tree.resizeColumnToContents(column)
            self.tree.setColumnWidth(column, self.tree.columnWidth(column) + COLUMN_MARGIN)
        self.tree.setColumnWidth(0, max(320, self.tree.columnWidth(0)))
        where = (
            ", ".join(roots) if roots else "~/.pi/agent/sessions, ~/.claude/projects and ~/.codex/sessions"
        )
        self.note.setText(
            f"{total} session{'s' if total != 1 else ''} in {len(workspaces)} workspace"
            f"{'s' if len(workspaces) != 1 else ''} under {where}. pi, Claude Code and Codex CLI sessions open read-only."
            if total
            else f"No sessions under {where}."
        )
        self._apply_filter(self.filter.text())

    def show_error(self, text: str) -> None:
        self.tree.clear()
        self.note.setText(text)

    def _groups(self) -> list[tuple[QTreeWidgetItem, list[QTreeWidgetItem]]]:
        out = []
        for i in range(self.tree.topLevelItemCount()):
            top = self.tree.topLevelItem(i)
            if top is not None:
                children = [top.child(j) for j in range(top.childCount())]
                out.append((top, [c for c in children if c is not None]))
        return out

    def session_paths(self) -> list[str]:
        """Every listed session's path, in display order (tests and the filter read it)."""
        return [str(child.data(0, PATH_ROLE)) for _top, children in self._groups() for child in children]

    def _apply_filter(self, text: str) -> None:
        needle = text.strip().lower()
        for top, children in self._groups():
            workspace_match = needle in top.text(0).lower()
            shown = 0
            for child in children:
                visible = (
                    not needle
                    or workspace_match
                    or needle in child.text(0).lower()
                    or needle in self.texts.get(str(child.data(0, PATH_ROLE)), "")
                )
                child.setHidden(not visible)
                shown += visible
            top.setHidden(shown == 0)

    def _selection_changed(self) -> None:
        item = self.tree.currentItem()
        self.open_button.setEnabled(item is not None and bool(item.data(0, PATH_ROLE)))

    def _open(self, item: QTreeWidgetItem | None) -> None:
        path = item.data(0, PATH_ROLE) if item is not None else None
        if not path:
            return
        self.open_requested.emit(str(path))
        self.accept()
