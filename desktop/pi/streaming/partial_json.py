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
    """Tool-call arguments arriving in deltas, re-read after each one like ``parse_streaming_json``.

    pi-ai re-parses the whole text per delta, which is quadratic in Python for a long
    argument (a file being written). This keeps the bracket/string state of what has
    arrived, so the common case (inside a string value, or after a complete value) is
    closed with the right quotes and brackets and read by orjson in C. Whenever that
    completion is not valid JSON (a dangling key, a half literal, a trailing comma) the
    exact port decides, so the value is always what ``parse_streaming_json`` returns.
    """

    __slots__ = ("_in_string", "_pos", "_stack", "text")

    def __init__(self, text: str = "") -> None:
        self.text = ""
        self._pos = 0
        self._stack: list[str] = []
        self._in_string = False
        if text:
            self.append(text)

    def append(self, delta: str) -> Any:
        self.text += delta
        self._scan()
        return self.value()

    def _scan(self) -> None:
        text, i, n = self.text, self._pos, len(self.text)
        stack = self._stack
        while i < n:
            if self._in_string:
                match = _STRING_STOP.search(text, i)
                if match is None:
                    i = n
                    break
                j = match.start()
                if text[j] == '"':
                    self._in_string = False
                    i = j + 1
                    continue
                width = 6 if j + 1 < n and text[j + 1] == "u" else 2
                if j + width > n:
                    i = j  # an escape still arriving: re-read it with the next delta
                    break
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
        self._pos = i

    def value(self) -> Any:
        text = self.text
        if not self._stack and not self._in_string:
            return parse_streaming_json(text)
        closers = "".join(_CLOSERS[opener] for opener in reversed(self._stack))
        if not self._in_string:
            candidate = text + closers
        elif self._pos < len(text):
            candidate = text[: self._pos] + '"' + closers  # drop the escape still arriving
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
