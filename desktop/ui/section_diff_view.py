"""The Section diff tab: each section a system row changed, before and after (design G2)."""

from __future__ import annotations

import difflib
import html

from PySide6.QtWidgets import QWidget

from desktop.session.inspector.section_diff import SectionChange, SectionDiff
from desktop.ui.glossary import explain, term
from desktop.ui.html import Colors, badge, esc
from desktop.ui.inert import InertBrowser
from desktop.ui.theme import is_dark

_STATUS_TEXT = {
    "added": "new section",
    "changed": "changed",
    "removed": "removed (tombstone)",
    "unchanged": "re-sent unchanged",
    "dropped": "dropped at compaction",
}


def _status_badge(status: str, color: str) -> str:
    """The change's badge; a removal explains what a tombstone is on hover (design G7)."""
    text = badge(_STATUS_TEXT[status], color)
    if status == "removed":
        return f'<span title="{html.escape(explain("tombstone").text, quote=True)}">{text}</span>'
    return text


def _columns(change: SectionChange, c: Colors) -> tuple[str, str]:
    """Before and after as HTML with the differing lines tinted."""
    before_lines = (change.before or "").splitlines()
    after_lines = (change.after or "").splitlines()
    left: list[str] = []
    right: list[str] = []
    matcher = difflib.SequenceMatcher(a=before_lines, b=after_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        for line in before_lines[i1:i2]:
            style = "" if tag == "equal" else f' style="background: {c.removed_bg}; color: {c.removed_fg}"'
            left.append(f"<div{style}>{esc(line) or '&nbsp;'}</div>")
        for line in after_lines[j1:j2]:
            style = "" if tag == "equal" else f' style="background: {c.added_bg}; color: {c.added_fg}"'
            right.append(f"<div{style}>{esc(line) or '&nbsp;'}</div>")
    if change.before is None:
        left = [f'<div style="color: {c.muted}"><i>(not present before)</i></div>']
    if change.after is None:
        right = [f'<div style="color: {c.removed_fg}"><i>(removed: null tombstone)</i></div>']
        left = [
            f'<div style="background: {c.removed_bg}; color: {c.removed_fg}"><s>{esc(line) or "&nbsp;"}</s></div>'
            for line in before_lines
        ] or left
    return "".join(left), "".join(right)


def render_section_diff(diff: SectionDiff, dark: bool) -> str:
    c = Colors(dark)
    out = [f'<h3 style="margin-bottom: 2px">{esc(diff.label or "system row")}</h3>']
    meta = [f"row <code>{esc(diff.row_id)}</code>"]
    if diff.anchored_before:
        meta.append(f"{term('anchored', 'anchored')} before <code>{esc(diff.anchored_before)}</code>")
    meta.append(f"{diff.sections_before} → {diff.sections_after} live {term('sections', 'section')}")
    out.append(f'<p style="color: {c.muted}; margin-top: 0">{" · ".join(meta)}</p>')
    if diff.problem:
        out.append(f'<p style="color: {c.warn}">{esc(diff.problem)}</p>')
        return "".join(out)
    if diff.content:
        out.append(f"<p><b>Content</b></p><pre>{esc(diff.content)}</pre>")
    status_color = {
        "added": c.added_fg,
        "changed": c.warn,
        "removed": c.removed_fg,
        "unchanged": c.muted,
        "dropped": c.removed_fg,
    }
    unchanged = [change.name for change in diff.changes if change.status == "unchanged"]
    for change in diff.changes:
        if change.status == "unchanged":
            continue
        left, right = _columns(change, c)
        out.append(
            f'<p style="margin-bottom: 2px"><b>{term(change.name, "section")}</b> '
            f"{_status_badge(change.status, status_color[change.status])}</p>"
        )
        out.append(
            f'<table width="100%" cellspacing="0" cellpadding="4" style="border: 1px solid {c.border};'
            f' font-family: monospace; white-space: pre-wrap">'
            f'<tr><th align="left" width="50%" style="color: {c.muted}">Before</th>'
            f'<th align="left" width="50%" style="color: {c.muted}">After</th></tr>'
            f'<tr><td valign="top" style="background: {c.code_bg}">{left}</td>'
            f'<td valign="top" style="background: {c.code_bg}">{right}</td></tr></table>'
        )
    if unchanged:
        out.append(
            f'<p style="color: {c.muted}"><b>Unchanged</b> (the same text again): {esc(", ".join(unchanged))}</p>'
        )
    tools = []
    if diff.tools_added:
        tools.append(f'<span style="color: {c.added_fg}">+ {esc(", ".join(diff.tools_added))}</span>')
    if diff.tools_redefined:
        tools.append(
            f'<span style="color: {c.warn}">~ {esc(", ".join(diff.tools_redefined))} (redefined)</span>'
        )
    if diff.tools_removed:
        tools.append(f'<span style="color: {c.removed_fg}">− {esc(", ".join(diff.tools_removed))}</span>')
    if tools:
        out.append("<p><b>Tools</b><br>" + "<br>".join(tools) + "</p>")
    if not diff.changes and not tools and not diff.content:
        out.append(f'<p style="color: {c.muted}">This row changes nothing.</p>')
    return "".join(out)


class SectionDiffView(InertBrowser):
    PLACEHOLDER = "Select a system or compaction row in the timeline to see what it changed."

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sectionDiffView")
        self.clear_diff()
        self.current: SectionDiff | None = None

    def clear_diff(self, message: str | None = None) -> None:
        self.current = None
        self.setHtml(f"<p><i>{esc(message or self.PLACEHOLDER)}</i></p>")

    def show_diff(self, diff: SectionDiff) -> None:
        self.current = diff
        self.setHtml(render_section_diff(diff, is_dark(self.palette())))
