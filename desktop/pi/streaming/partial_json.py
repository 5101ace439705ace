"""Tool-call arguments that are still streaming, parsed the way pi-ai parses them.

pi-ai re-parses the accumulated argument text after every delta (``parseStreamingJson``):
strict JSON first, then the same text with string literals repaired, then the
``partial-json`` package (every partial type allowed). A half-received call therefore
always shows the arguments seen so far and the final call shows what a lenient reader
makes of a cut-off one. This port keeps those three steps and partial-json's edge cases
(a dangling key is dropped, ``tr`` reads as ``true``, a trailing backslash is ignored).

String literals are scanned with a regular expression so that re-parsing a long argument
(a whole file being written) after each delta stays cheap.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

_VALID_ESCAPES = frozenset('"\\/bfnrtu')
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
#: The body of a string literal up to (not including) its closing quote or the end of input.
_STRING_BODY = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*', re.DOTALL)
_CONTROL_ESCAPES = {"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


#: What JavaScript's ``String.prototype.trim`` removes (partial-json trims its input first).
JS_WHITESPACE = " \t\n\v\f\r\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


class PartialJsonError(ValueError):
    """The text cannot be read even leniently (partial-json's MalformedJSON/PartialJSON)."""


#: Anything repair could change: a control character, or a backslash not starting a valid
#: escape (checked per backslash, so it can only over-report, never miss one).
_CONTROL_CHAR = re.compile(r"[\x00-\x1f]")
_ODD_ESCAPE = re.compile(r'\\(?:[^"\\/bfnrtu]|\Z)')


def repair_json(text: str) -> str:
    """Escape raw control characters and double stray backslashes inside string literals."""
    if not _CONTROL_CHAR.search(text) and ("\\" not in text or not _ODD_ESCAPE.search(text)):
        return text
    out: list[str] = []
    in_string = False
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if not in_string:
            out.append(ch)
            if ch == '"':
                in_string = True
            i += 1
            continue
        if ch == '"':
            out.append(ch)
            in_string = False
            i += 1
            continue
        if ch == "\\":
            nxt = text[i + 1] if i + 1 < n else None
            if nxt is None:
                out.append("\\\\")
                i += 1
                continue
            if nxt == "u" and _HEX4.fullmatch(text, i + 2, i + 6):
                out.append(text[i : i + 6])
                i += 6
                continue
            if nxt in _VALID_ESCAPES:
                out.append("\\" + nxt)
                i += 2
                continue
            out.append("\\\\")
            i += 1
            continue
        if ord(ch) <= 0x1F:
            out.append(_CONTROL_ESCAPES.get(ch, f"\\u{ord(ch):04x}"))
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def parse_json_with_repair(text: str) -> Any:
    """Strict JSON, or the same text with its string literals repaired (pi-ai ``parseJsonWithRepair``)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        repaired = repair_json(text)
        if repaired != text:
            return orjson.loads(repaired)
        raise


def parse_streaming_json(text: str | None) -> Any:
    """Best reading of possibly incomplete JSON; ``{}`` when nothing can be read."""
    if not text or not text.strip():
        return {}
    try:
        return parse_json_with_repair(text)
    except ValueError:
        pass
    for candidate in (text, None):
        try:
            source = text if candidate is not None else repair_json(text)
            result = parse_partial(source)
        except (PartialJsonError, ValueError, RecursionError):
            continue
        return {} if result is None else result
    return {}


def _js_json_parse(text: str) -> Any:
    """JSON.parse for a scalar: surrounding JSON whitespace allowed, no NaN/Infinity."""
    stripped = text.strip(" \t\n\r")
    if stripped in ("NaN", "Infinity", "-Infinity") or not stripped:
        raise ValueError(f"Unexpected token in JSON: {text!r}")
    return json.loads(stripped)


def parse_partial(text: str) -> Any:
    """Port of partial-json ``parse(text, Allow.ALL)``; raises PartialJsonError when unreadable."""
    trimmed = text.strip(JS_WHITESPACE)
    if not trimmed:
        raise PartialJsonError("empty input")
    return _PartialParser(trimmed).parse_any()


class _PartialParser:
    __slots__ = ("index", "length", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.length = len(text)
        self.index = 0

    def _partial(self, message: str) -> PartialJsonError:
        return PartialJsonError(f"{message} at position {self.index}")

    def skip_blank(self) -> None:
        text, n = self.text, self.length
        while self.index < n and text[self.index] in " \n\r\t":
            self.index += 1

    def parse_any(self) -> Any:
        self.skip_blank()
        text, i, n = self.text, self.index, self.length
        if i >= n:
            raise self._partial("Unexpected end of input")
        ch = text[i]
        if ch == '"':
            return self.parse_str()
        if ch == "{":
            return self.parse_obj()
        if ch == "[":
            return self.parse_arr()
        rest = text[i:]
        for literal, value in (
            ("null", None),
            ("true", True),
            ("false", False),
            ("Infinity", float("inf")),
            ("NaN", float("nan")),
        ):
            if text.startswith(literal, i) or (n - i < len(literal) and literal.startswith(rest)):
                self.index += len(literal)
                return value
        if text.startswith("-Infinity", i) or (1 < n - i < 9 and "-Infinity".startswith(rest)):
            self.index += 9
            return float("-inf")
        return self.parse_num()

    def parse_str(self) -> str:
        text = self.text
        start = self.index
        match = _STRING_BODY.match(text, start + 1)
        end = match.end() if match else start + 1
        if end < self.length and text[end] == '"':
            self.index = end + 1
            try:
                value: str = json.loads(text[start : end + 1])
            except ValueError as exc:
                raise PartialJsonError(str(exc)) from exc
            return value
        # Unterminated: the body may end with a lone backslash (an escape still arriving).
        escape = end < self.length and text[end] == "\\"
        self.index = self.length
        cut = self.length - 1 if escape else self.length
        try:
            value = json.loads(text[start:cut] + '"')
        except ValueError:
            value = json.loads(text[start : text.rfind("\\")] + '"')
        return value

    def parse_obj(self) -> dict[str, Any]:
        text = self.text
        self.index += 1
        self.skip_blank()
        obj: dict[str, Any] = {}
        try:
            while self.index >= self.length or text[self.index] != "}":
                self.skip_blank()
                if self.index >= self.length:
                    return obj
                key = self.parse_str()
                self.skip_blank()
                self.index += 1  # the colon
                try:
                    value = self.parse_any()
                except (PartialJsonError, ValueError):
                    return obj
                obj[key] = value
                self.skip_blank()
                if self.index < self.length and text[self.index] == ",":
                    self.index += 1
        except (PartialJsonError, ValueError, IndexError):
            return obj
        self.index += 1
        return obj

    def parse_arr(self) -> list[Any]:
        text = self.text
        self.index += 1
        arr: list[Any] = []
        try:
            while self.index >= self.length or text[self.index] != "]":
                arr.append(self.parse_any())
                self.skip_blank()
                if self.index < self.length and text[self.index] == ",":
                    self.index += 1
        except (PartialJsonError, ValueError, IndexError):
            return arr
        self.index += 1
        return arr

    def parse_num(self) -> Any:
        text = self.text
        if self.index == 0:
            if text == "-":
                raise PartialJsonError("Not sure what '-' is")
            try:
                return _js_json_parse(text)
            except ValueError as exc:
                try:
                    return _js_json_parse(_js_substring(text, 0, text.rfind("e")))
                except ValueError:
                    raise PartialJsonError(str(exc)) from exc
        start = self.index
        if text[self.index] == "-":
            self.index += 1
        while self.index < self.length and text[self.index] not in ",]}":
            self.index += 1
        try:
            return _js_json_parse(text[start : self.index])
        except ValueError as exc:
            if text[start : self.index] == "-":
                raise PartialJsonError("Not sure what '-' is") from exc
            try:
                return _js_json_parse(_js_substring(text, start, text.rfind("e")))
            except ValueError:
                raise PartialJsonError(str(exc)) from exc


def _js_substring(text: str, start: int, end: int) -> str:
    """JavaScript ``String.prototype.substring``: negative bounds clamp to 0, swapped bounds swap."""
    start, end = max(0, start), max(0, end)
    if start > end:
        start, end = end, start
    return text[start:end]


_STRING_STOP = re.compile(r'["\\]')
_CLOSERS = {"{": "}", "[": "]"}


class StreamingJson:
    """Tool-call arguments arriving in deltas, read like ``parse_streaming_json`` as they grow.

    pi-ai re-parses the whole text after every delta, which is quadratic: a file of 1 MB
    written by a tool call arrives in tens of thousands of deltas. Here the text is kept as
    chunks and scanned once, delta by delta, for its bracket and string state, so reading it
    means closing the open strings and brackets and letting orjson parse the result in C;
    whenever that completion is not valid JSON (a dangling key, a half literal, a trailing
    comma) the exact port decides, so every value read is what ``parse_streaming_json``
    returns for the text so far.

    Up to ``EXACT_UP_TO`` characters the value is read after every delta, exactly as pi-ai
    shows it. Beyond that it is read again once the text has grown by ``GROWTH`` since the last
    reading, and in between a delta returns the last value read: the work stays linear in the
    length of the arguments (a geometric series of readings) while the preview still grows.
    The final value is read from ``text`` by the stream parsers, exactly.
    """

    #: Arguments up to this length are read after every delta.
    EXACT_UP_TO = 16_384
    #: Longer ones are read again when they have grown by this factor.
    GROWTH = 1.25

    __slots__ = ("_chunks", "_escape_at", "_in_string", "_length", "_read_at", "_skip", "_stack", "_value")

    def __init__(self, text: str = "") -> None:
        self._chunks: list[str] = []
        self._length = 0
        self._stack: list[str] = []
        self._in_string = False
        #: Characters of an escape still to skip (-1: the character after a backslash decides).
        self._skip = 0
        #: Where the escape still arriving starts, or -1.
        self._escape_at = -1
        self._value: Any = None
        self._read_at = -1
        if text:
            self.append(text)

    @property
    def text(self) -> str:
        """Everything received so far."""
        chunks = self._chunks
        if len(chunks) > 1:
            chunks[:] = ["".join(chunks)]
        return chunks[0] if chunks else ""

    def append(self, delta: str) -> Any:
        if delta:
            self._scan(delta, self._length)
            self._chunks.append(delta)
            self._length += len(delta)
        if (
            self._read_at < 0
            or self._length <= self.EXACT_UP_TO
            or self._length >= self._read_at * self.GROWTH
        ):
            self._value = self.value()
            self._read_at = self._length
        return self._value

    def _scan(self, text: str, offset: int) -> None:
        """Advance the bracket and string state over one delta (each character seen once)."""
        stack = self._stack
        i, n = 0, len(text)
        if self._skip:
            if self._skip < 0:  # the character after a backslash: \u takes four more
                self._skip = 5 if text[0] == "u" else 1
            taken = min(self._skip, n)
            self._skip -= taken
            i = taken
            if not self._skip:
                self._escape_at = -1
        while i < n:
            if self._in_string:
                match = _STRING_STOP.search(text, i)
                if match is None:
                    return
                j = match.start()
                if text[j] == '"':
                    self._in_string = False
                    i = j + 1
                    continue
                if j + 1 >= n:
                    self._escape_at, self._skip = offset + j, -1
                    return
                width = 6 if text[j + 1] == "u" else 2
                if j + width > n:
                    self._escape_at, self._skip = offset + j, j + width - n
                    return
                i = j + width
                continue
            ch = text[i]
            if ch == '"':
                self._in_string = True
            elif ch in "{[":
                stack.append(ch)
            elif ch in "}]" and stack:
                stack.pop()
            i += 1

    def value(self) -> Any:
        text = self.text
        if not self._stack and not self._in_string:
            return parse_streaming_json(text)
        closers = "".join(_CLOSERS[opener] for opener in reversed(self._stack))
        if not self._in_string:
            candidate = text + closers
        elif self._escape_at >= 0:
            candidate = text[: self._escape_at] + '"' + closers  # drop the escape still arriving
        else:
            # partial-json trims the whole text first, even inside an open string.
            body = text.rstrip(JS_WHITESPACE)
            if body.endswith("\\"):
                return parse_streaming_json(text)
            candidate = body + '"' + closers
        try:
            return orjson.loads(candidate)
        except orjson.JSONDecodeError:
            return parse_streaming_json(text)
