"""``edit``: exact-text replacements, all matched against the original file.

Matching tries the exact text first, then a normalized form (trailing spaces, smart quotes,
Unicode dashes and spaces) so a model that retyped a quote still lands, as pi does. Line
endings and a BOM are preserved. Every check runs before the single write, so a rejected
edit leaves the file untouched.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import unicodedata
from pathlib import Path
from typing import Any, NamedTuple

from desktop.host.tools.types import JsonObject, ToolContext, ToolFailure, ToolOutcome, ToolSpec
from desktop.host.tools.workspace import display_path
from desktop.host.tools.write import write_text

NAME = "edit"
DESCRIPTION = (
    "Edit a single file using exact text replacement. Every edits[].oldText must match a unique, "
    "non-overlapping region of the original file. If two changes affect the same block or nearby lines, "
    "merge them into one edit instead of emitting overlapping edits. Do not include large unchanged "
    "regions just to connect distant changes."
)
PARAMETERS: JsonObject = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Path to the file to edit (relative or absolute)"},
        "edits": {
            "type": "array",
            "description": (
                "One or more targeted replacements. Each edit is matched against the original file, not "
                "incrementally. Do not include overlapping or nested edits. If two changes touch the same "
                "block or nearby lines, merge them into one edit instead."
            ),
            "items": {
                "type": "object",
                "properties": {
                    "oldText": {
                        "type": "string",
                        "description": (
                            "Exact text for one targeted replacement. It must be unique in the original file "
                            "and must not overlap with any other edits[].oldText in the same call."
                        ),
                    },
                    "newText": {"type": "string", "description": "Replacement text for this targeted edit."},
                },
                "required": ["oldText", "newText"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["path", "edits"],
    "additionalProperties": False,
}

# Patterns, compiled (and cached by ``re``) on the first fuzzy match rather than when the tool
# is declared: every session declares it, few edits need them (the status budget).
_QUOTES_SINGLE = "[\u2018\u2019\u201a\u201b]"
_QUOTES_DOUBLE = "[\u201c\u201d\u201e\u201f]"
_DASHES = "[\u2010\u2011\u2012\u2013\u2014\u2015\u2212]"
_SPACES = "[\u00a0\u2002-\u200a\u202f\u205f\u3000]"


def _fuzzy(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    text = re.sub(_QUOTES_SINGLE, "'", text)
    text = re.sub(_QUOTES_DOUBLE, '"', text)
    text = re.sub(_DASHES, "-", text)
    return re.sub(_SPACES, " ", text)


def _to_lf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


class _Match(NamedTuple):
    """Where edit number ``edit`` applies."""

    edit: int
    start: int
    length: int
    new_text: str


def apply_edits(content: str, edits: list[tuple[str, str]], shown: str) -> tuple[str, str]:
    """Return (base, new) LF content; raise ToolFailure naming the edit that cannot apply."""
    many = len(edits) > 1
    pairs = [(_to_lf(old), _to_lf(new)) for old, new in edits]
    for i, (old, _) in enumerate(pairs):
        if not old:
            raise ToolFailure(
                f"edits[{i}].oldText must not be empty in {shown}."
                if many
                else f"oldText must not be empty in {shown}."
            )
    fuzzy = any(old not in content for old, _ in pairs)
    base = _fuzzy(content) if fuzzy else content
    matches: list[_Match] = []
    for i, (old, new) in enumerate(pairs):
        needle = old if old in base else _fuzzy(old)
        at = base.find(needle)
        if at < 0:
            raise ToolFailure(
                f"Could not find edits[{i}] in {shown}. The oldText must match exactly including all whitespace and newlines."
                if many
                else f"Could not find the exact text in {shown}. The old text must match exactly including all whitespace and newlines."
            )
        count = base.count(needle)
        if count > 1:
            raise ToolFailure(
                f"Found {count} occurrences of edits[{i}] in {shown}. Each oldText must be unique. Please provide more context to make it unique."
                if many
                else f"Found {count} occurrences of the text in {shown}. The text must be unique. Please provide more context to make it unique."
            )
        matches.append(_Match(i, at, len(needle), new))
    matches.sort(key=lambda m: m.start)
    for prev, cur in itertools.pairwise(matches):
        if prev.start + prev.length > cur.start:
            raise ToolFailure(
                f"edits[{prev.edit}] and edits[{cur.edit}] overlap in {shown}. Merge them into one edit or target disjoint regions."
            )
    out = base
    for m in reversed(matches):
        out = out[: m.start] + m.new_text + out[m.start + m.length :]
    if out == base:
        raise ToolFailure(f"No changes made to {shown}. The replacement produced identical content.")
    return base, out


def prepare_arguments(args: JsonObject) -> JsonObject:
    """Accept what models actually send: ``edits`` as a JSON string, or legacy oldText/newText."""
    edits: Any = args.get("edits")
    if isinstance(edits, str):
        try:
            parsed = json.loads(edits)
        except ValueError:
            parsed = None
        if isinstance(parsed, list):
            args["edits"] = edits = parsed
    old, new = args.get("oldText"), args.get("newText")
    if isinstance(old, str) and isinstance(new, str):
        args["edits"] = [*(edits if isinstance(edits, list) else []), {"oldText": old, "newText": new}]
        args.pop("oldText")
        args.pop("newText")
    return args


def run(args: JsonObject, ctx: ToolContext) -> ToolOutcome:
    shown = display_path(Path(args["path"]), ctx.workspace)
    edits = [(str(item["oldText"]), str(item["newText"])) for item in args["edits"]]
    if not edits:
        raise ToolFailure("Edit tool input is invalid. edits must contain at least one replacement.")
    path = Path(os.path.realpath(args["path"]))
    if not path.is_file():
        raise ToolFailure(f"Could not edit file: {shown}. File not found.")
    raw = path.read_bytes().decode("utf-8")
    bom = "\ufeff" if raw.startswith("\ufeff") else ""
    body = raw[len(bom) :]
    crlf = "\r\n" in body and body.find("\r\n") <= body.find("\n")
    base, new = apply_edits(_to_lf(body), edits, shown)
    write_text(path, bom + (new.replace("\n", "\r\n") if crlf else new))
    # Lazy: the status budget.
    import difflib

    diff = "".join(
        difflib.unified_diff(base.splitlines(True), new.splitlines(True), fromfile=shown, tofile=shown, n=3)
    )
    first_changed = next(
        (i + 1 for i, (a, b) in enumerate(zip(base.split("\n"), new.split("\n"), strict=False)) if a != b),
        min(len(base.split("\n")), len(new.split("\n"))),
    )
    return ToolOutcome.text(
        f"Successfully replaced {len(edits)} block(s) in {shown}.",
        details={"diff": diff, "firstChangedLine": first_changed},
    )


TOOL_SPEC = ToolSpec(
    NAME, DESCRIPTION, PARAMETERS, effect="write", runner=run, path_args=("path",), prepare=prepare_arguments
)
