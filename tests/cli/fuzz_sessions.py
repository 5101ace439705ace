"""Seeded mutations of a real session file, for the command-line fuzz test (design D6, T9).

Every mutation is a pure function of a ``random.Random`` and the base file's bytes, so a failing
case is reproduced by its seed and index. The kinds cover what users, crashes and attackers do to
a file: byte flips, truncations, duplicated, swapped and garbage lines, wrong types and missing
keys anywhere in a row, huge lines, NUL bytes, CRLF line ends, a torn tail, and files that are
not files at all (FIFOs, directories, symlinks to system files, devices).
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

#: Values of every JSON type (and a few edge values) that a field may be replaced with.
ODD_VALUES: tuple[Any, ...] = (
    None,
    True,
    0,
    -1,
    2**63,
    1e308,
    "",
    "x",
    "\u0000",
    [],
    [None],
    {},
    {"type": "text"},
    {"role": "system"},
    "9" * 40,
)


@dataclass(frozen=True)
class Case:
    kind: str
    #: The mutated bytes, or None for the special files (made by ``special``).
    data: bytes | None = None
    special: str | None = None


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


def flip_bytes(rng: random.Random, data: bytes) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 6)):
        index = rng.randrange(len(out))
        out[index] ^= rng.randint(1, 255)
    return bytes(out)


def truncate(rng: random.Random, data: bytes) -> bytes:
    return data[: rng.randrange(len(data))]


def duplicate_line(rng: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    index = rng.randrange(len(lines))
    lines.insert(rng.randrange(index, len(lines) + 1), lines[index])
    return b"".join(lines)


def swap_lines(rng: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[a], lines[b] = lines[b], lines[a]
    return b"".join(lines)


def drop_line(rng: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    del lines[rng.randrange(1, len(lines))]
    return b"".join(lines)


def garbage_line(rng: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    garbage = rng.choice(
        [
            bytes(rng.randrange(256) for _ in range(rng.randint(1, 200))).replace(b"\n", b" "),
            b"[1, 2, 3]",
            b"null",
            b'"a string"',
            b"{}",
            b'{"type": "user"}',
            b'{"type": "user", "v": 1, "id": "x"}',
            b'{"type": "assistant", "v": 99, "id": "newer-row", "message": {}}',
            b'{"type": "system", "v": 1, "id": "s-odd", "modelSystem": {"v": 1, "message": {"role": "system"}}}',
            b'{"type": "system", "v": 1, "id": "s-odd2", "before": "' + b"?" * 5 + b'", "modelSystem": 7}',
            b'{"type": "compaction", "v": 1, "id": "c-odd", "summary": 3, "firstKeptId": []}',
            b'{"type": "toolResult", "v": 1, "id": "t-odd", "message": {"role": "toolResult"}}',
        ]
    )
    lines.insert(rng.randrange(1, len(lines) + 1), garbage + b"\n")
    return b"".join(lines)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            found.extend(_paths(item, (*prefix, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.extend(_paths(item, (*prefix, index)))
    return found


def _dump(row: Any) -> bytes:
    """A row as one JSON line; one nested deeper than orjson writes goes through ``json``."""
    try:
        return orjson.dumps(row) + b"\n"
    except TypeError:
        return json.dumps(row, separators=(",", ":")).encode() + b"\n"


def _edit_row(rng: random.Random, data: bytes, edit: Callable[[Any, Any], None]) -> bytes:
    lines = _lines(data)
    for _ in range(20):
        index = rng.randrange(len(lines))
        try:
            row = orjson.loads(lines[index])
        except orjson.JSONDecodeError:
            continue
        paths = _paths(row)
        if not paths:
            continue
        path = rng.choice(paths)
        edit(_get(row, path[:-1]), path[-1])
        lines[index] = _dump(row)
        return b"".join(lines)
    return data


def wrong_type(rng: random.Random, data: bytes) -> bytes:
    def replace(parent: Any, key: Any) -> None:
        parent[key] = rng.choice(ODD_VALUES)

    return _edit_row(rng, data, replace)


def drop_key(rng: random.Random, data: bytes) -> bytes:
    def remove(parent: Any, key: Any) -> None:
        del parent[key]

    return _edit_row(rng, data, remove)


def huge_line(rng: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    size = rng.choice([300_000, 1_500_000])
    if rng.random() < 0.5:
        big = b'{"type": "note", "v": 1, "id": "huge", "level": "info", "text": "' + b"y" * size + b'"}\n'
    else:
        big = b"z" * size + b"\n"
    lines.insert(rng.randrange(1, len(lines) + 1), big)
    return b"".join(lines)


def nul_bytes(rng: random.Random, data: bytes) -> bytes:
    index = rng.randrange(len(data))
    return data[:index] + b"\x00" * rng.randint(1, 16) + data[index:]


def crlf(rng: random.Random, data: bytes) -> bytes:
    return data.replace(b"\n", b"\r\n")


def torn_tail(rng: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    last = lines[-1].rstrip(b"\n")
    return b"".join(lines[:-1]) + last[: rng.randrange(1, len(last) + 1)]


def header_edit(rng: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    header = orjson.loads(lines[0])
    key = rng.choice(["v", "id", "cwd", "type", "appVersion"])
    if rng.random() < 0.5:
        header.pop(key, None)
    else:
        header[key] = rng.choice(ODD_VALUES)
    lines[0] = orjson.dumps(header) + b"\n"
    return b"".join(lines)


MUTATIONS: dict[str, Callable[[random.Random, bytes], bytes]] = {
    "flip": flip_bytes,
    "truncate": truncate,
    "duplicate": duplicate_line,
    "swap": swap_lines,
    "drop": drop_line,
    "garbage": garbage_line,
    "wrong-type": wrong_type,
    "drop-key": drop_key,
    "huge": huge_line,
    "nul": nul_bytes,
    "crlf": crlf,
    "torn": torn_tail,
    "header": header_edit,
}
#: Relative frequencies: the cheap, varied mutations dominate; huge lines are rare (they are slow).
WEIGHTS = {"huge": 1, "crlf": 1, "header": 3, "torn": 2, "flip": 12, "wrong-type": 12, "drop-key": 8}
SPECIAL_FILES = (
    "fifo",
    "directory",
    "symlink-to-passwd",
    "dangling-symlink",
    "symlink-to-device",
    "symlink-to-copy",
)


def cases(base: bytes, count: int, seed: int) -> list[Case]:
    """``count`` mutated files (one or two mutations each) plus one of every special file."""
    rng = random.Random(seed)
    names = list(MUTATIONS)
    weights = [WEIGHTS.get(name, 5) for name in names]
    out = [Case(kind=f"special:{kind}", special=kind) for kind in SPECIAL_FILES]
    while len(out) < count:
        data = base
        kinds = []
        for _ in range(1 if rng.random() < 0.7 else 2):
            kind = rng.choices(names, weights)[0]
            if not data:
                break
            data = MUTATIONS[kind](rng, data)
            kinds.append(kind)
        out.append(Case(kind="+".join(kinds), data=data))
    return out


def materialize(case: Case, path: Path, base: bytes) -> None:
    """Put the case at ``path`` (a fresh name in an empty folder)."""
    if case.data is not None:
        path.write_bytes(case.data)
    elif case.special == "fifo":
        os.mkfifo(path)
    elif case.special == "directory":
        path.mkdir()
    elif case.special == "symlink-to-passwd":
        path.symlink_to("/etc/passwd")
    elif case.special == "dangling-symlink":
        path.symlink_to(path.with_name("nowhere.jsonl"))
    elif case.special == "symlink-to-device":
        path.symlink_to("/dev/zero")
    elif case.special == "symlink-to-copy":
        target = path.with_name("real-" + path.name)
        target.write_bytes(base)
        path.symlink_to(target.name)
    else:
        raise AssertionError(case)


# --- structure-aware mutations (every reader: Desktop, pi, Claude Code) ---------------------------
#
# A row is parsed, one place in it (any key or list item at any depth: a "path") gets a value of
# another shape, and the row is written back. Values are raw JSON text, so the file can hold what
# no JSON library in this process would write: integers past 64 bits, numbers past a double, lone
# surrogates, nesting deeper than any encoder allows.

_DEEP = 300
RAW_VALUES: tuple[bytes, ...] = (
    b"null",
    b"true",
    b"false",
    b"0",
    b"-1",
    b"1.5",
    b"-0.0",
    b"9223372036854775807",
    b"-9223372036854775808",
    b"9223372036854775808",
    b"18446744073709551615",
    b"18446744073709551616",  # 2**64
    b"-18446744073709551617",
    b"123456789012345678901234567890",
    b"-123456789012345678901234567890",
    b"1e308",
    b"-1e308",
    b"1e-320",
    b"1e400",  # past a double: not JSON to the readers
    b'""',
    b'" "',
    b'"abc"',
    b'"NaN"',
    b'"Infinity"',
    b'"-Infinity"',
    b'"1e999"',
    b'"-0"',
    b'"0x10"',
    b'"\\ud800"',  # a lone surrogate
    b'"a\\udfffb"',
    b'"\\u0000"',
    b'"\\u202e\\u001b[2J\\u0007"',
    b'"' + b"w" * 5000 + b'"',
    b"[]",
    b"{}",
    b"[null]",
    b'{"": null}',
    b"[[[]]]",
    b'{"type": null}',
    b'{"type": "text"}',
    b'{"type": "toolCall"}',
    b'[{"type": "text", "text": 7}]',
    b"[" * _DEEP + b"]" * _DEEP,
    b'{"a": ' * _DEEP + b"1" + b"}" * _DEEP,
    b"[" * 1100 + b"]" * 1100,  # deeper than the JSON reader's limit
)
_HOLE = "\u0000fuzz-hole\u0000"
_HOLE_BYTES = orjson.dumps(_HOLE)


def _put(row: Any, path: tuple[Any, ...], value: Any) -> None:
    _get(row, path[:-1])[path[-1]] = value


def _get(row: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        row = row[key]
    return row


def with_raw(row: Any, path: tuple[Any, ...], raw: bytes) -> bytes:
    """The row as a JSON line with the raw JSON text ``raw`` at ``path``."""
    _put(row, path, _HOLE)
    return _dump(row).replace(_HOLE_BYTES, raw, 1)


def _json_lines(data: bytes) -> list[tuple[int, Any]]:
    found = []
    for index, line in enumerate(_lines(data)):
        try:
            row = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(row, (dict, list)):
            found.append((index, row))
    return found


def _replace_line(data: bytes, index: int, line: bytes) -> bytes:
    lines = _lines(data)
    lines[index] = line
    return b"".join(lines)


def swap_value(rng: random.Random, data: bytes) -> bytes:
    """One place of one row gets a value of another type (or an edge value of its own)."""
    rows = [(i, row) for i, row in _json_lines(data) if _paths(row)]
    if not rows:
        return data
    index, row = rng.choice(rows)
    return _replace_line(data, index, with_raw(row, rng.choice(_paths(row)), rng.choice(RAW_VALUES)))


def _subtree(rng: random.Random, row: Any) -> tuple[tuple[Any, ...], Any]:
    containers = [p for p in _paths(row) if isinstance(_get(row, p), (dict, list))]
    path = rng.choice(containers) if containers and rng.random() < 0.7 else ()
    return path, _get(row, path) if path else row


def null_everywhere(rng: random.Random, data: bytes) -> bytes:
    """Every value under one part of a row (or the whole row) becomes null."""
    rows = _json_lines(data)
    if not rows:
        return data
    index, row = rng.choice(rows)
    _path, tree = _subtree(rng, row)
    every = rng.random() < 0.5
    for path in _paths(tree):
        if every or rng.random() < 0.3:
            try:
                _put(tree, path, None)
            except (KeyError, IndexError, TypeError):
                continue  # an ancestor was nulled already
    return _replace_line(data, index, _dump(row))


def empty_containers(rng: random.Random, data: bytes) -> bytes:
    """Objects and lists under one part of a row become empty (or the other kind of empty)."""
    rows = _json_lines(data)
    if not rows:
        return data
    index, row = rng.choice(rows)
    _path, tree = _subtree(rng, row)
    for path in sorted(_paths(tree), key=len, reverse=True):
        value = _get(tree, path)
        if isinstance(value, (dict, list)) and rng.random() < 0.5:
            empty: Any = rng.choice([{}, []])
            _put(tree, path, empty)
    return _replace_line(data, index, _dump(row))


def reshape(rng: random.Random, data: bytes) -> bytes:
    """An object becomes a list of its values, a list an object, a value wrapped in one."""
    rows = [(i, row) for i, row in _json_lines(data) if _paths(row)]
    if not rows:
        return data
    index, row = rng.choice(rows)
    path = rng.choice(_paths(row))
    value = _get(row, path)
    if isinstance(value, dict):
        new: Any = list(value.values())
    elif isinstance(value, list):
        new = {str(i): item for i, item in enumerate(value)}
    else:
        new = rng.choice([[value], {"value": value}, {"type": value}])
    _put(row, path, new)
    return _replace_line(data, index, _dump(row))


def bury(rng: random.Random, data: bytes) -> bytes:
    """One value wrapped in hundreds of lists or objects (deeper than encoders write)."""
    rows = [(i, row) for i, row in _json_lines(data) if _paths(row)]
    if not rows:
        return data
    index, row = rng.choice(rows)
    path = rng.choice(_paths(row))
    inner = _dump(_get(row, path)).rstrip(b"\n")
    depth = rng.choice([100, 260, 600])
    if rng.random() < 0.5:
        raw = b"[" * depth + inner + b"]" * depth
    else:
        raw = b'{"k": ' * depth + inner + b"}" * depth
    return _replace_line(data, index, with_raw(row, path, raw))


STRUCTURE_MUTATIONS: dict[str, Callable[[random.Random, bytes], bytes]] = {
    "swap-value": swap_value,
    "null-everywhere": null_everywhere,
    "empty": empty_containers,
    "reshape": reshape,
    "bury": bury,
    "drop-key": drop_key,
    "duplicate": duplicate_line,
    "swap": swap_lines,
}
STRUCTURE_WEIGHTS = {
    "swap-value": 10,
    "null-everywhere": 3,
    "empty": 3,
    "reshape": 4,
    "bury": 2,
    "drop-key": 3,
}


@dataclass(frozen=True)
class Mutant:
    """One mutated file of one format: which base it came from and what was done to it."""

    format: str
    base: int
    kind: str
    data: bytes


def places(bases: list[bytes]) -> list[tuple[int, int, tuple[Any, ...]]]:
    """(base, line, path) of every place in every row of the bases, in file order."""
    out = []
    for number, base in enumerate(bases):
        for index, row in _json_lines(base):
            out.extend((number, index, path) for path in _paths(row))
    return out


def structured_cases(fmt: str, bases: list[bytes], count: int, seed: int) -> list[Mutant]:
    """``count`` mutants of ``bases``: first a type swap at each place of every row in turn
    (shuffled, so a short run still samples every kind of row), then one to three random
    structure-aware mutations each. Deterministic for (bases, count, seed)."""
    rng = random.Random(f"{seed}:{fmt}")
    every = places(bases)
    rng.shuffle(every)
    sweep = min(len(every), count * 3 // 5)
    out: list[Mutant] = []
    for number, index, path in every[:sweep]:
        base = bases[number]
        row = orjson.loads(_lines(base)[index])
        raw = rng.choice(RAW_VALUES)
        label = "/".join(str(part) for part in path)
        data = _replace_line(base, index, with_raw(row, path, raw))
        out.append(Mutant(fmt, number, f"swap-at:{index + 1}:{label}", data))
    names = list(STRUCTURE_MUTATIONS)
    weights = [STRUCTURE_WEIGHTS.get(name, 1) for name in names]
    while len(out) < count:
        number = rng.randrange(len(bases))
        data = bases[number]
        kinds = []
        for _ in range(rng.choice((1, 1, 2, 3))):
            kind = rng.choices(names, weights)[0]
            data = STRUCTURE_MUTATIONS[kind](rng, data)
            kinds.append(kind)
        out.append(Mutant(fmt, number, "+".join(kinds), data))
    return out
