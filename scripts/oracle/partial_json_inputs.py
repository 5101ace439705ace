"""Inputs for the partial-json differential test (dev only).

Writes ``tests/fixtures/wire/partial_json_diff.json`` with inputs only; then
``partial_json_diff.mjs`` adds what the npm ``partial-json`` 0.1.7 (the parser pi-ai uses)
and pi-ai's ``parseStreamingJson`` make of each. Deterministic: prefixes of random tool
argument documents (nested objects and arrays, escapes, surrogates, numbers with signs and
exponents, literals), each cut at random points, plus damaged variants (stray characters,
whitespace, lone backslashes, control characters).

    PYTHONPATH=. python scripts/oracle/partial_json_inputs.py
"""

from __future__ import annotations

import json
import random
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "fixtures" / "wire" / "partial_json_diff.json"

STRINGS = [
    "",
    "a",
    "line 1\nline 2",
    'quote "q"',
    "tab\t",
    "back\\slash",
    "é ☃",
    "😀",
    "\u2028",
    "/path/to/file.py",
]
NUMBERS = ["0", "-0", "12", "-12.5", "1e3", "-1.5E-7", "3.14159", "1e+2", "0.0"]
LITERALS = ["true", "false", "null"]


def _string(rng: random.Random) -> str:
    text = json.dumps(rng.choice(STRINGS), ensure_ascii=rng.random() < 0.3)
    if rng.random() < 0.2:
        text = text[:-1] + "\\u00e9" + '"'
    return text


def _value(rng: random.Random, depth: int) -> str:
    kind = rng.random()
    if depth < 3 and kind < 0.25:
        items = [
            f"{_string(rng)}{rng.choice([':', ': ', ' : '])}{_value(rng, depth + 1)}"
            for _ in range(rng.randint(0, 3))
        ]
        return "{" + rng.choice([",", ", ", ",\n "]).join(items) + "}"
    if depth < 3 and kind < 0.4:
        return (
            "[" + rng.choice([",", ", "]).join(_value(rng, depth + 1) for _ in range(rng.randint(0, 3))) + "]"
        )
    if kind < 0.7:
        return _string(rng)
    if kind < 0.9:
        return rng.choice(NUMBERS)
    return rng.choice(LITERALS)


def inputs(count: int = 1600, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < count:
        doc = (
            _value(rng, 0)
            if rng.random() < 0.2
            else "{" + _value(rng, 0)[1:]
            if rng.random() < 0.5
            else _value(rng, 0)
        )
        if rng.random() < 0.15:
            at = rng.randint(0, len(doc))
            doc = doc[:at] + rng.choice(["\\", "\x01", " ", "}", "]", ",", '"', "x", "\\q", "\n"]) + doc[at:]
        for cut in sorted({rng.randint(0, len(doc)) for _ in range(4)} | {len(doc)}):
            text = doc[:cut]
            if rng.random() < 0.1:
                text = rng.choice([" ", "\n", "\u00a0"]) + text + rng.choice(["", " ", "\t"])
            if text not in seen:
                seen.add(text)
                out.append(text)
    return out[:count]


if __name__ == "__main__":
    OUT.write_text(
        json.dumps([{"input": text} for text in inputs()], ensure_ascii=False) + "\n", encoding="utf-8"
    )
    print(f"wrote {OUT.relative_to(ROOT)}")
