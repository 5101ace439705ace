"""Text for the terminal: control sequences from files, tools and models are removed (design X23).

A session file's section names, a tool's output and a model's reply are untrusted text, and a
terminal obeys what is in them: ``ESC ] 0 ;`` retitles the window, ``ESC [ 2 J`` clears the
screen, ``ESC ] 52 ;`` writes the clipboard, a carriage return or a bidi override makes a line
show something other than what it holds. Every command's text output goes through
``strip_controls`` at one place, the error boundary (``desktop.cli._boundary.run_handler``
wraps standard output and standard error), unless ``--raw`` asks for the text as it is. Bytes a
command writes to ``sys.stdout.buffer`` (``payload``'s exact request body, ``chat --jsonl``)
are JSON with every control character already escaped, and stay byte-exact.

A sequence split across writes (a model's reply streams in pieces) is held back from its
introducer until a later write completes it or the command ends, then removed whole; whatever
is left of a sequence loses its ESC or C1 introducer and is inert text, so nothing that reaches
the terminal can act on it.
"""

from __future__ import annotations

import re
from typing import Any, TextIO

_CONTROLS = re.compile(
    r"""
      \x1b\[[0-?]*[\x20-/]*[@-~]                      # CSI: ESC [ params intermediates final
    | \x9b[0-?]*[\x20-/]*[@-~]                        # the same, as the C1 CSI
    | (?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])         # OSC, DCS, SOS, PM, APC ...
      [^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)            # ... their string, up to BEL or ST
    | \x1b[\x20-/]*[\x30-~]                           # other escape sequences (ESC c, ESC ( B)
    | [\x00-\x08\x0b-\x1f\x7f-\x9f]                   # any other C0 (not tab or newline), DEL, C1
    | [\u202a-\u202e\u2066-\u2069]                    # bidi embeddings, overrides and isolates
    """,
    re.VERBOSE,
)


#: The end of a text that could still become a sequence (an introducer and what may follow it).
_PARTIAL = re.compile(
    r"""
      (?:\x1b\[|\x9b)[0-?]*[\x20-/]*\Z
    | (?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*\x1b?\Z
    | \x1b[\x20-/]*\Z
    """,
    re.VERBOSE,
)
#: How much of an unfinished sequence is held back at most (an OSC 52 of a screenful fits).
MAX_PENDING = 1 << 16


def strip_controls(text: str) -> str:
    """``text`` without terminal control sequences and control characters; tab and newline stay."""
    return _CONTROLS.sub("", text)


class SanitizedStream:
    """A text stream that writes ``strip_controls(text)`` to the one it wraps, holding back an
    unfinished sequence at the end of a write (``release`` lets it go); everything else
    (``buffer``, ``flush``, ``fileno``, ``isatty``, ``encoding``) is the wrapped stream's."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._pending = ""

    def write(self, text: str) -> int:
        combined = self._pending + text
        unfinished = _PARTIAL.search(combined)
        if unfinished is not None and len(combined) - unfinished.start() <= MAX_PENDING:
            self._pending = combined[unfinished.start() :]
            combined = combined[: unfinished.start()]
        else:
            self._pending = ""
        if combined:
            self._stream.write(strip_controls(combined))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def release(self) -> None:
        """Write what was held back (stripped): the command is done, nothing will complete it."""
        if self._pending:
            self._stream.write(strip_controls(self._pending))
            self._pending = ""
        self._stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
