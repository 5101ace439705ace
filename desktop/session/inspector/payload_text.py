"""Making a request body readable without losing byte-exactness (design G4).

The preview keeps the exact body bytes (what is copied, saved and compared) and shows an
indented rendering beside them. The indenter only inserts whitespace between JSON tokens and
copies every token verbatim, so any byte offset in the exact body maps to a position in the
readable text: that is how the cache break (the end of the common prefix with the previous
request) is marked in both views.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\],:]|[^{}\[\],:"\s]+|\s+', re.DOTALL)


def common_prefix(previous: bytes, current: bytes) -> int:
    """Length of the longest common byte prefix (where a prefix cache stops matching)."""
    limit = min(len(previous), len(current))
    if previous[:limit] == current[:limit]:
        return limit
    low, high = 0, limit
    while low < high:  # binary search on slice equality: C-speed comparisons
        mid = (low + high + 1) // 2
        if previous[:mid] == current[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def common_suffix(previous: bytes, current: bytes, prefix: int) -> int:
    """Length of the common byte suffix that does not overlap the common ``prefix``."""
    limit = min(len(previous), len(current)) - prefix
    if limit <= 0:
        return 0
    low, high = 0, limit
    while low < high:
        mid = (low + high + 1) // 2
        if previous[len(previous) - mid :] == current[len(current) - mid :]:
            low = mid
        else:
            high = mid - 1
    return low


def char_offset(data: bytes, byte_offset: int) -> int:
    """The text position of a byte offset (UTF-8), clamped to a character boundary."""
    return len(data[:byte_offset].decode("utf-8", errors="ignore"))


@dataclass(frozen=True)
class PrettyText:
    text: str
    _raw_starts: list[int]
    _pretty_starts: list[int]

    def position(self, raw_offset: int) -> int:
        """Where character ``raw_offset`` of the exact text lands in the readable text."""
        if not self._raw_starts:
            return 0
        index = max(0, bisect.bisect_right(self._raw_starts, raw_offset) - 1)
        return self._pretty_starts[index] + (raw_offset - self._raw_starts[index])

    def line_of(self, raw_offset: int) -> int:
        """1-based line number of a raw offset in the readable text."""
        return self.text.count("\n", 0, self.position(raw_offset)) + 1


def pretty_json(raw: str) -> PrettyText:
    """Indent compact JSON; raw tokens are copied unchanged (whitespace tokens are dropped)."""
    out: list[str] = []
    raw_starts: list[int] = []
    pretty_starts: list[int] = []
    length = 0
    depth = 0
    tokens = [(m.start(), m.group()) for m in _TOKEN.finditer(raw)]
    previous = ""

    def emit(text: str) -> None:
        nonlocal length
        out.append(text)
        length += len(text)

    for index, (start, token) in enumerate(tokens):
        if token[0].isspace():
            continue
        if token in ("}", "]"):
            depth = max(0, depth - 1)
            if previous not in ("{", "["):
                emit("\n" + "  " * depth)
        raw_starts.append(start)
        pretty_starts.append(length)
        emit(token)
        if token in ("{", "["):
            ahead = index + 1
            while ahead < len(tokens) and tokens[ahead][1][0].isspace():
                ahead += 1
            following = tokens[ahead][1] if ahead < len(tokens) else ""
            depth += 1
            if following not in ("}", "]"):
                emit("\n" + "  " * depth)
        elif token == ",":
            emit("\n" + "  " * depth)
        elif token == ":":
            emit(" ")
        previous = token
    return PrettyText("".join(out), raw_starts, pretty_starts)
