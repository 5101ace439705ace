"""Small helpers for the rich-text inspector panes (escaping and colours per palette)."""

from __future__ import annotations

import html


def esc(text: object) -> str:
    return html.escape(str(text), quote=False)


class Colors:
    def __init__(self, dark: bool) -> None:
        self.dark = dark
        self.added_bg = "#1f3d2b" if dark else "#e6ffed"
        self.removed_bg = "#4a2126" if dark else "#ffeef0"
        self.added_fg = "#7ee2a8" if dark else "#116329"
        self.removed_fg = "#ff9b9b" if dark else "#a40e26"
        self.muted = "#9aa0a6" if dark else "#6a737d"
        self.ok = "#4ade80" if dark else "#15803d"
        self.bad = "#f87171" if dark else "#b91c1c"
        self.warn = "#fbbf24" if dark else "#b45309"
        self.code_bg = "#25272a" if dark else "#f6f8fa"
        self.border = "#3c3f44" if dark else "#d0d7de"


def badge(text: str, color: str) -> str:
    return (
        f'<span style="color: {color}; font-weight: 600; border: 1px solid {color};'
        f' padding: 0 4px">&nbsp;{esc(text)}&nbsp;</span>'
    )


def diff_line(line: str, c: Colors) -> str:
    """One line of a unified diff as a coloured block: added, removed, or its headers muted."""
    if line.startswith(("+++", "---", "@@")):
        style = f"color: {c.muted}"
    elif line.startswith("+"):
        style = f"background: {c.added_bg}; color: {c.added_fg}"
    elif line.startswith("-"):
        style = f"background: {c.removed_bg}; color: {c.removed_fg}"
    else:
        style = ""
    return f'<div style="{style}">{esc(line) or "&nbsp;"}</div>'
