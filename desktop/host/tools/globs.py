"""Globs as ripgrep's ``--glob`` reads them, for the ``grep`` tool's ``glob`` argument.

Unlike ignore files (git semantics, see ``ignore.py``), a search glob expands ``{a,b}``
alternatives, as ``rg --glob`` does for pi's grep tool.
"""

from __future__ import annotations

import re


def glob_to_regex(pattern: str) -> str:
    """Translate a glob (``*``, ``?``, ``**``, ``[...]``, ``{a,b}``) to a regex over POSIX paths."""
    out: list[str] = []
    i = 0
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                i += 2
                if i < n and pattern[i] == "/":
                    i += 1
                    out.append("(?:.*/)?")
                else:
                    out.append(".*")
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = pattern.find("]", i + 1)
            if j < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : j].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = j
        elif c == "{":
            j = pattern.find("}", i + 1)
            if j < 0:
                out.append(re.escape(c))
            else:
                options = pattern[i + 1 : j].split(",")
                out.append("(?:" + "|".join(glob_to_regex(opt) for opt in options) + ")")
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)
