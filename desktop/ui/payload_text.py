"""Moved to ``desktop.session.inspector.payload_text``; re-exported for code written before."""

from desktop.session.inspector.payload_text import (
    PrettyText,
    char_offset,
    common_prefix,
    common_suffix,
    pretty_json,
)

__all__ = ["PrettyText", "char_offset", "common_prefix", "common_suffix", "pretty_json"]
