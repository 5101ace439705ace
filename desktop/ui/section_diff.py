"""Moved to ``desktop.session.inspector.section_diff``; re-exported for code written before."""

from desktop.session.inspector.section_diff import SectionChange, SectionDiff, section_diff, state_before

__all__ = ["SectionChange", "SectionDiff", "section_diff", "state_before"]
