"""The Usage tab's cache misses: the same figures and causes ``status`` gives (design P13).

The worker reads the session's transcript (``desktop.pi.cache_misses.transcript_summary``, the
function ``status`` and ``chat --jsonl`` call) and sends the summary with the window's state;
this panel shows it: the session's hit ratio, the miss count, the tokens re-cached, and each
miss with its cause from the closed set and its place (section, tool, message, byte, idle time).
Every text is plain (a tool's or a model's name came from a file or a model).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from PySide6.QtWidgets import QLabel, QSizePolicy, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

from desktop.ui.inert import named

_HEADERS = ("Message", "Cause", "Where", "Re-cached")
#: The table lists the latest misses only: a long session can have thousands, and filling and
#: sizing a table of all of them on the GUI thread stalls the window (design G9); the summary
#: line above it counts every miss.
SHOWN_MISSES = 200


def place_text(place: Mapping[str, Any]) -> str:
    """ "messages, message 4, byte 1,234", "tool 'read'", "idle 6:10", "from anthropic/x"."""
    parts: list[str] = []
    if place.get("section"):
        parts.append(str(place["section"]))
    if place.get("tool"):
        parts.append(f"tool '{place['tool']}'")
    if place.get("label") and place.get("label") != place.get("section"):
        parts.append(str(place["label"]))
    if isinstance(place.get("message"), int):
        parts.append(f"message {place['message'] + 1}")
    if isinstance(place.get("byte"), int):
        parts.append(f"byte {place['byte']:,}")
    idle = place.get("idleSeconds")
    if isinstance(idle, int | float):
        minutes, seconds = divmod(int(idle), 60)
        parts.append(f"idle {minutes}:{seconds:02d}")
    if place.get("from"):
        parts.append(f"from {place['from']}" + (f" to {place['to']}" if place.get("to") else ""))
    return ", ".join(parts) or "—"


def summary_text(summary: Mapping[str, Any]) -> str:
    """One line: "Cache: hit ratio 91% · 2 misses (ttl_expired_5m 1, tools_changed 1) ·
    12,400 tokens re-cached", as ``status`` words it."""
    ratio = summary.get("hitRatio")
    misses = int(summary.get("misses") or 0)
    causes = summary.get("causes") or {}
    listed = ", ".join(f"{name} {count}" for name, count in causes.items())
    return (
        f"Cache: hit ratio {float(ratio or 0):.0%} · {misses} miss{'es' if misses != 1 else ''}"
        + (f" ({listed})" if listed else "")
        + f" · {int(summary.get('recachedTokens') or 0):,} tokens re-cached"
    )


class CacheMissPanel(QWidget):
    """The session's cache misses, each with its cause and place."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("cacheMisses")
        self.shown = False
        self.summary = named(QLabel("Cache: no reply on this session yet"), "cacheMissSummary")
        self.summary.setWordWrap(True)
        self.summary.setToolTip(
            "A miss is a reply whose cache read fell short of what the request before it left in "
            "the cache; its cause is one of the causes Claude Code reports, with where it happened."
        )
        self.table = named(QTableWidget(0, len(_HEADERS)), "cacheMissTable")
        self.table.setHorizontalHeaderLabels(list(_HEADERS))
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setStretchLastSection(False)
        self.table.horizontalHeader().setSectionResizeMode(
            2, self.table.horizontalHeader().ResizeMode.Stretch
        )
        self.table.setMaximumHeight(120)
        self.table.hide()
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.summary)
        layout.addWidget(self.table)

    def set_summary(self, summary: Mapping[str, Any] | None) -> bool:
        """Show ``transcript_summary(...).to_json()``; None leaves the panel as it is. Whether
        a summary is shown."""
        if not isinstance(summary, Mapping):
            return self.shown
        self.shown = True
        self.summary.setText(summary_text(summary))
        misses = [m for m in summary.get("missList") or () if isinstance(m, Mapping)][-SHOWN_MISSES:]
        count = int(summary.get("misses") or 0)
        self.table.setToolTip(
            f"The latest {len(misses):,} of {count:,} misses" if count > len(misses) else ""
        )
        self.table.setRowCount(len(misses))
        for row, miss in enumerate(misses):
            found = miss.get("place")
            place: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
            message = miss.get("message")
            cells = (
                str(message + 1) if isinstance(message, int) else "",
                str(miss.get("cause", "unknown")),
                place_text(place),
                f"{int(miss.get('recachedTokens') or 0):,}",
            )
            for column, text in enumerate(cells):
                self.table.setItem(row, column, QTableWidgetItem(text))
        self.table.resizeColumnsToContents()
        self.table.setVisible(bool(misses))
        return True
