"""git's wildmatch for ignore files, in time bounded by the pattern's size times the path's.

A ``.gitignore`` is untrusted content: a repository chooses it. Translating its patterns to
backtracking regexes (as ``pathspec`` does) lets one line such as ``*a*a*a*a*a*a*a*a*a*a*a*b``
and one long file name keep a search busy for hours while holding the interpreter lock, so
neither Stop nor SIGTERM's handler runs (design X20). Here no pattern is ever handed to a regex
engine with a quantifier in it:

- a path is split into its components and the pattern into its ``/``-separated segments;
  ``**`` (or any longer run of stars) as a whole segment matches any run of components;
- one segment is split at its stars into chunks of fixed length (literal characters, ``?`` and
  bracket expressions each match exactly one character), and each chunk becomes a regex with no
  quantifier, which cannot backtrack;
- both levels are "stars between fixed-length pieces", which the leftmost-greedy scan decides
  exactly: the first piece anchors at the start, the last at the end, and each middle piece
  taken at its leftmost place never loses a match a later place would have found.

So a match costs at most (pieces x length) steps, in C for the characters. The semantics are
git's (``tests/tools/test_ignore_git.py`` checks them against ``git check-ignore`` and
``tests/tools/test_wildmatch.py`` against ``pathspec`` on generated patterns): ``*`` and ``?``
never match ``/``; ``[...]`` takes ``!`` or ``^`` for negation, ranges, backslash escapes and the
POSIX classes; a ``**`` that is not a whole segment is an ordinary star; a pattern git would
reject (an unclosed bracket, a trailing backslash) matches nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

#: POSIX classes inside brackets, in the C locale git uses.
_CLASSES = {
    "alnum": "0-9A-Za-z",
    "alpha": "A-Za-z",
    "blank": " \\t",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": re.escape("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"),
    "space": " \\t\\n\\r\\f\\v",
    "upper": "A-Z",
    "xdigit": "0-9A-Fa-f",
}


class _Invalid(Exception):
    """A pattern git refuses (unclosed bracket, unknown class, trailing backslash)."""


def _bracket(segment: str, start: int) -> tuple[str, int]:
    """The bracket expression opening at ``segment[start]`` as a one-character regex class,
    and the index after its ``]``."""
    i = start + 1
    negate = i < len(segment) and segment[i] in "!^"
    if negate:
        i += 1
    members: list[str] = []
    first = True
    while True:
        if i >= len(segment):
            raise _Invalid
        c = segment[i]
        if c == "]" and not first:
            i += 1
            break
        first = False
        if c == "[" and segment.startswith("[:", i):
            end = segment.find(":]", i + 2)
            if end < 0:
                raise _Invalid
            name = segment[i + 2 : end]
            if name not in _CLASSES:
                raise _Invalid
            members.append(_CLASSES[name])
            i = end + 2
            continue
        if c == "\\":
            i += 1
            if i >= len(segment):
                raise _Invalid
            c = segment[i]
        low = c
        i += 1
        if i + 1 < len(segment) and segment[i] == "-" and segment[i + 1] != "]":
            high = segment[i + 1]
            i += 2
            if high == "\\":
                if i >= len(segment):
                    raise _Invalid
                high = segment[i]
                i += 1
            # git reads the range's first character as a member before it sees the dash, so
            # a reversed range (``z-a``) still matches its first character.
            members.append(f"{re.escape(low)}-{re.escape(high)}" if low <= high else re.escape(low))
            continue
        members.append(re.escape(low))
    body = "".join(members)
    if not body:
        return ("[^/]" if negate else "(?!)"), i
    return (f"[^/{body}]" if negate else f"[{body}]"), i


def _chunks(segment: str) -> list[list[str]]:
    """``segment`` split at its (unescaped) stars into chunks of one-character regexes; n stars
    give n + 1 chunks, empty ones included."""
    chunks: list[list[str]] = []
    current: list[str] = []
    i = 0
    while i < len(segment):
        c = segment[i]
        if c == "*":
            chunks.append(current)
            current = []
            while i < len(segment) and segment[i] == "*":
                i += 1
            continue
        if c == "?":
            current.append("[^/]")
            i += 1
        elif c == "[":
            regex, i = _bracket(segment, i)
            current.append(regex)
        elif c == "\\":
            if i + 1 >= len(segment):
                raise _Invalid
            current.append(re.escape(segment[i + 1]))
            i += 2
        else:
            current.append(re.escape(c))
            i += 1
    chunks.append(current)
    return chunks


SegmentMatcher = Callable[[str], bool]


def _segment_matcher(segment: str) -> SegmentMatcher:
    """A predicate for one path component, leftmost-greedy over the star-separated chunks."""
    chunks = _chunks(segment)
    pieces = [re.compile("".join(chunk), re.DOTALL) for chunk in chunks]
    if len(pieces) == 1:
        only = pieces[0]
        return lambda name: only.fullmatch(name) is not None
    head, middle, tail = pieces[0], pieces[1:-1], pieces[-1]
    tail_width = len(chunks[-1])

    def match(name: str) -> bool:
        found = head.match(name)
        if found is None:
            return False
        pos = found.end()
        for piece in middle:
            found = piece.search(name, pos)
            if found is None:
                return False
            pos = found.end()
        # The tail has a fixed width: it must end the name without overlapping what came before.
        start = len(name) - tail_width
        return start >= pos and tail.fullmatch(name, start) is not None

    return match


class _AnySegment:
    """``**`` as a whole segment: any run of components (zero or more)."""


GLOBSTAR = _AnySegment()
Piece = SegmentMatcher | _AnySegment


def _path_match(pieces: Sequence[Piece], parts: Sequence[str]) -> bool:
    """Whether ``parts`` (a path's components) match ``pieces``: the classic wildcard scan
    with ``**`` as the star and one component per other piece (backtracking only to the
    last ``**``, which is exact when every other piece consumes exactly one element)."""
    p = n = 0
    star = -1
    star_n = 0
    while n < len(parts):
        if p < len(pieces) and pieces[p] is GLOBSTAR:
            star, star_n = p, n
            p += 1
            continue
        if p < len(pieces):
            piece = pieces[p]
            assert not isinstance(piece, _AnySegment)
            if piece(parts[n]):
                p += 1
                n += 1
                continue
        if star >= 0:
            star_n += 1
            n = star_n
            p = star + 1
            continue
        return False
    while p < len(pieces) and pieces[p] is GLOBSTAR:
        p += 1
    return p == len(pieces)


class Wildmatch:
    """One ignore pattern (the text after git's line rules: no ``!``, no trailing ``/``),
    matched against a path relative to the ignore file's directory."""

    def __init__(self, pattern: str, *, anchored: bool | None = None) -> None:
        """``anchored`` (default: whether ``pattern`` holds a ``/``, git's rule) says whether the
        pattern starts at the base or may match at any depth."""
        self.pattern = pattern
        self._pieces: list[Piece] | None = self._compile(
            pattern, "/" in pattern if anchored is None else anchored
        )

    @staticmethod
    def _compile(pattern: str, anchored: bool) -> list[Piece] | None:
        segments = pattern.removeprefix("/").split("/")  # ``//x`` is anchored at an empty name
        pieces: list[Piece] = [] if anchored else [GLOBSTAR]
        try:
            for index, segment in enumerate(segments):
                if len(segment) >= 2 and not segment.strip("*"):  # git: any run of 2+ stars
                    if index == len(segments) - 1:
                        pieces.append(_segment_matcher("*"))  # a trailing ``/**``: something inside
                    if not pieces or pieces[-1] is not GLOBSTAR:
                        pieces.append(GLOBSTAR)
                else:
                    pieces.append(_segment_matcher(segment))
        except _Invalid:
            return None
        return pieces

    def matches(self, rel: str) -> bool:
        """Whether ``rel`` (POSIX, no leading or trailing ``/``) is this pattern's path."""
        return self._pieces is not None and _path_match(self._pieces, rel.split("/"))
