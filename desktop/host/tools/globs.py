"""Globs as ripgrep's ``--glob`` reads them, for ``find``'s pattern and ``grep``'s ``glob``.

Unlike ignore files (git semantics, see ``ignore.py``), a search glob expands ``{a,b}``
alternatives, as ``rg --glob`` does for pi's grep tool. A glob without ``/`` matches the file
name at any depth; with ``/``, the path relative to the search directory. The model chooses
the glob, and a file it read may have chosen it for the model, so each alternative is matched
by ``wildmatch.Wildmatch`` (no backtracking regex: design X20) and the alternatives are
capped (``MAX_ALTERNATIVES``).
"""

from __future__ import annotations

from desktop.host.tools.types import ToolFailure
from desktop.host.tools.wildmatch import Wildmatch

#: How many alternatives a glob's ``{a,b}`` groups may expand to.
MAX_ALTERNATIVES = 256


def expand_braces(pattern: str) -> list[str]:
    """Every alternative of ``pattern``'s ``{a,b}`` groups (nested ones too); an unclosed
    ``{`` is a literal character. ``ToolFailure`` beyond ``MAX_ALTERNATIVES``."""
    start = _group_start(pattern)
    if start < 0:
        return [pattern]
    end, options = _group(pattern, start)
    results: list[str] = []
    for option in options:
        for head in expand_braces(pattern[:start] + option):
            for tail in expand_braces(pattern[end + 1 :]):
                results.append(head + tail)
                if len(results) > MAX_ALTERNATIVES:
                    raise ToolFailure(
                        f"The glob {pattern!r} has more than {MAX_ALTERNATIVES} {{a,b}} alternatives"
                    )
    return results


def _group_start(pattern: str) -> int:
    """Where the first ``{`` that has a matching ``}`` opens, or -1."""
    index = pattern.find("{")
    while index >= 0:
        depth = 0
        for position in range(index, len(pattern)):
            depth += {"{": 1, "}": -1}.get(pattern[position], 0)
            if depth == 0:
                return index
        index = pattern.find("{", index + 1)
    return -1


def _group(pattern: str, start: int) -> tuple[int, list[str]]:
    """The index of the ``}`` closing the group at ``start`` and its top-level options."""
    depth = 0
    options: list[str] = []
    current = start + 1
    for position in range(start, len(pattern)):
        char = pattern[position]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                options.append(pattern[current:position])
                return position, options
        elif char == "," and depth == 1:
            options.append(pattern[current:position])
            current = position + 1
    raise AssertionError("unreachable: _group_start found the closing brace")  # pragma: no cover


class SearchGlob:
    """A search glob, matched against a relative POSIX path (``matches``)."""

    def __init__(self, glob: str) -> None:
        anchored = "/" in glob
        self.glob = glob
        self._alternatives = [
            Wildmatch(alternative.lstrip("/"), anchored=anchored) for alternative in expand_braces(glob)
        ]

    def matches(self, rel: str) -> bool:
        return any(alternative.matches(rel) for alternative in self._alternatives)
