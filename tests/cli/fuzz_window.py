"""The window's open and render path for one session file, in this process (design T9, X1, G9).

The fuzz test cannot afford a window per mutated file, so this drives the parts the window is
made of, as the window connects them: the real ``SessionWorker`` (its ``open_session`` slot, the
one File → Open, Open Recent, the browser and the command line reach) on this thread, and the
window's models and views fed from its signals as ``MainWindow`` feeds them: the timeline model
and its filter (from the row index, the rows or the foreign reader), the usage tab, the foreign
session bar, and for every row each role the timeline's delegate and tooltip read, the section
diff of every system or compaction row, and the Message tab over the whole transcript.
The Payload tab's previews are computed too (the worker sends them while the tab is shown).

Anything that escapes, and anything the worker's own last-resort guards catch (a logged
"open failed", a preview whose error is a Python exception), is a failure: those guards keep the
window alive, but a reader that needs them did not set the bad entry aside where it was read.
"""

from __future__ import annotations

import builtins
import logging
import sys
import traceback
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from desktop.cli._boundary import describe
from desktop.session.inspector.routes import pick_route, route_choices
from desktop.session.inspector.section_diff import section_diff
from desktop.ui.foreign_bar import ForeignBar
from desktop.ui.main_window import show_rows
from desktop.ui.message_view import MessageView
from desktop.ui.messages import IndexedRows, OpenProblem, SessionIndexed, SessionOpened
from desktop.ui.row_view import RowView
from desktop.ui.section_diff_view import SectionDiffView, render_section_diff
from desktop.ui.timeline_delegate import row_tooltip, usage_hint
from desktop.ui.timeline_model import (
    ANCHORED_ROLE,
    ID_ROLE,
    KIND_ROLE,
    ROW_ROLE,
    TIME_ROLE,
    USAGE_ROLE,
    TimelineFilter,
    TimelineModel,
)
from desktop.ui.usage_view import UsageView
from desktop.ui.worker import SessionWorker

ROLES = (
    Qt.ItemDataRole.DisplayRole,
    TIME_ROLE,
    USAGE_ROLE,
    ANCHORED_ROLE,
    Qt.ItemDataRole.ToolTipRole,
    KIND_ROLE,
    ID_ROLE,
    ROW_ROLE,
)
_BUG_NAMES = {
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, Exception) and not issubclass(value, OSError)
} | {"JSONEncodeError", "JSONDecodeError"}


def is_bug(error: str) -> bool:
    """Whether an error a pane shows (``"TypeError: ..."``) is a Python exception, not a refusal."""
    return error.split(":", 1)[0].strip() in _BUG_NAMES


def where(error: BaseException) -> str:
    """The exception and the innermost frame of the app's own code, for the failure list."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if "/desktop/" in f.filename]
    at = f" at {frames[-1].filename.rsplit('/desktop/', 1)[-1]}:{frames[-1].lineno}" if frames else ""
    return f"{type(error).__name__}: {str(error)[:200]}{at}"


class _Guarded(logging.Handler):
    """Exceptions the worker's last-resort guards log (``log.exception``)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.caught: list[BaseException] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info and record.exc_info[1] is not None:
            self.caught.append(record.exc_info[1])


class WindowPath:
    """One worker and one set of the window's models and views, reused for every file."""

    def __init__(self, data_dir: Path, workspace: Path, emulator_url: str) -> None:
        worker = SessionWorker(data_dir=str(data_dir), workspace=str(workspace), offline=True)
        worker.choices = route_choices(emulator_url, [])
        worker.route_key = worker.seed_route_key = pick_route(worker.choices, "")
        # A mutated header may name another folder: the workspace question is answered No,
        # as a user keeping the folder they opened from would (design A10).
        worker.bridge.questioned.connect(
            lambda request_id, _info: worker.bridge.answer(request_id, False, False),
            Qt.ConnectionType.DirectConnection,
        )
        worker.session_indexed.connect(self._indexed, Qt.ConnectionType.DirectConnection)
        worker.session_opened.connect(self._opened, Qt.ConnectionType.DirectConnection)
        worker.open_problem.connect(self._problem, Qt.ConnectionType.DirectConnection)
        worker.preview_ready.connect(self._preview, Qt.ConnectionType.DirectConnection)
        self.worker = worker
        self.previews = False
        self.timeline = TimelineModel()
        self.filter = TimelineFilter()
        self.filter.setSourceModel(self.timeline)
        self.usage_view = UsageView()
        self.row_view = RowView()
        self.message_view = MessageView()
        self.diff_view = SectionDiffView()
        self.bar = ForeignBar()
        self.guarded = _Guarded()
        logging.getLogger("desktop.ui").addHandler(self.guarded)
        self.failures: list[str] = []
        self.opened: SessionOpened | None = None
        self.problems: list[str] = []

    def close(self) -> None:
        logging.getLogger("desktop.ui").removeHandler(self.guarded)
        self.worker._close_session()
        for widget in (self.usage_view, self.row_view, self.message_view, self.diff_view, self.bar):
            widget.deleteLater()

    # --- the window's handlers (``MainWindow.on_session_indexed`` / ``on_session_opened``) ---

    def _indexed(self, indexed: SessionIndexed) -> None:
        self.timeline.set_index(indexed.index)
        self.usage_view.set_lines(indexed.index.usage, indexed.index.usage_total)
        indexed.painted.set()  # the worker waits for the window's paint before it goes on

    def _opened(self, opened: SessionOpened) -> None:
        self.opened = opened
        show_rows(self.timeline, self.usage_view, opened.rows)
        if isinstance(opened.rows, IndexedRows) and opened.rows.appended:
            self.timeline.append_rows(opened.rows.appended)
            self.usage_view.add_rows(opened.rows.appended)
        self.bar.show_session(opened.session.foreign)
        if opened.painted is not None:
            opened.painted.set()

    def _problem(self, problem: OpenProblem) -> None:
        self.problems.append(problem.text)

    def _preview(self, _slot: str, preview: Mapping[str, Any]) -> None:
        for error in (preview.get("error"), (preview.get("cache") or {}).get("error")):
            if isinstance(error, str) and is_bug(error):
                self.failures.append(f"payload tab: {error[:300]}")

    # --- one file ---------------------------------------------------------------------------

    def open(self, path: Path, *, previews: bool) -> list[str]:
        """Open ``path`` as the window does and render every row; the failures found.

        ``previews``: with the Payload tab on screen (its previews are computed on open). A
        Desktop session's next request is what ``payload`` prints, fuzzed there; a foreign
        session's is only ever seen in the tab."""
        if previews != self.previews:
            self.previews = previews
            self.worker.set_previews_shown(previews)
        self.failures = []
        self.problems = []
        self.opened = None
        self.guarded.caught.clear()
        hook = sys.excepthook  # where Qt reports an exception in a Python override (data())
        sys.excepthook = lambda _kind, error, _tb: self.failures.append(f"in Qt: {where(error)}")
        try:
            self.worker.open_session(str(path))
            if self.opened is not None:
                self._render()
        except Exception as error:  # the harness reports it with the others
            self.failures.append(f"escaped: {where(error)}")
        finally:
            sys.excepthook = hook
        for error in self.guarded.caught:
            if describe(error) is None:  # not one of the errors the app words for the user
                self.failures.append(f"caught by the worker's guard: {where(error)}")
        return self.failures

    def _render(self) -> None:
        """Every row as the timeline paints it (each role its delegate and tooltip read), every
        system and compaction row's section diff as the Diff tab draws it, the whole transcript
        in the Message tab (conversation mode) and the last row in the Row and Diff tabs (what
        the window selects). A tab's widget takes one text per file: laying out a document per
        row would cost more than everything else here, and the text is the part a row decides."""
        timeline = self.timeline
        rows: list[Mapping[str, Any]] = []
        diff: Any = None
        for position in range(timeline.rowCount()):
            index = timeline.index(position, 0)
            for role in ROLES:
                timeline.data(index, role)
            row_tooltip(index)
            usage_hint(index.data(USAGE_ROLE))
            timeline.search_text(position)
            row = timeline.row_at(position)
            if row is None:
                continue
            rows.append(row)
            if row.get("type") in ("system", "compaction"):
                if "foreign" in row:
                    diff = row.get("diff")
                else:
                    diff = section_diff(
                        timeline.rows, position, timeline.state_positions(position), timeline.ids
                    )
                if diff is not None:
                    render_section_diff(diff, False)
        for position in range(self.filter.rowCount()):
            self.filter.data(self.filter.index(position, 0), Qt.ItemDataRole.DisplayRole)
        self.filter.set_search("a")
        self.filter.set_search("")
        if rows:
            self.row_view.show_row(rows[-1])
        if diff is not None:
            self.diff_view.show_diff(diff)
        self.message_view._cache.clear()  # rows of earlier files had the same ids
        self.message_view.show_rows(rows)
