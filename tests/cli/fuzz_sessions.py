"""Seeded mutations of a real session file, for the command-line fuzz test (design D6, T9).

Every mutation is a pure function of a ``random.Random`` and the base file's bytes, so a failing
case is reproduced by its seed and index. The kinds cover what users, crashes and attackers do to
a file: byte flips, truncations, duplicated, swapped and garbage lines, wrong types and missing
keys anywhere in a row, huge lines, NUL bytes, CRLF line ends, a torn tail, and files that are
not files at all (FIFOs, directories, symlinks to system files, devices).
"""

from __future__ import annotations

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
        parent = row
        for key in path[:-1]:
            parent = parent[key]
        edit(parent, path[-1])
        lines[index] = orjson.dumps(row) + b"\n"
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
