"""Tool-call argument streams: one of 1 MB against ten of 100 KB (linear time, design D2).

A tool call that writes a file streams its arguments as many small JSON deltas, and every
delta updates the call's arguments. Re-reading the whole text after each delta (what pi-ai
does) makes a long call quadratic. For each wire family the loopback emulator records a
``write`` call whose arguments are about 1 MB and one of about 100 KB; the full stream parser
(SSE, the family's normalizer, the partial-JSON reader) then reads them from bytes in 4 KiB
chunks. The anchor is ten 100 KB calls, measured in the same run, interleaved round by round;
min and median. Target: the 1 MB call within 3x of the ten 100 KB calls (1.0 is linear).

    PYTHONPATH=. python benchmarks/tool_args_bench.py [--rounds 7]
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import compare, report

from desktop.emulator import Emulator
from desktop.pi.streaming import parser_for
from tests.wire.families import FAMILIES, READ_TOOL

CHUNK = 4096


def _arguments(size: int) -> str:
    line = "def handle(request):  # routes one request to its handler\n"
    return json.dumps({"path": "big.py", "content": line * (size // len(line))})


def record() -> list[tuple[str, dict[str, str], bytes, bytes, int]]:
    streams = []
    big, small = _arguments(1_000_000), _arguments(100_000)
    with Emulator() as emu, httpx.Client(timeout=60) as client:
        for family in FAMILIES:
            model = {"id": family.model_id, "api": family.api, "provider": family.provider}
            bodies = []
            for arguments in (big, small):
                request = family.request(
                    emu, "system", [("user", f"[[tool:write {arguments}]]")], [READ_TOOL]
                )
                bodies.append(
                    client.post(request.url, content=request.body, headers=dict(request.headers)).content
                )
            streams.append((f"{family.name}/{family.api}", model, bodies[0], bodies[1], len(big)))
    return streams


def parse(model: dict[str, str], data: bytes) -> float:
    """Thread CPU ms to read one stream; checks the call's arguments came out whole."""
    chunks = [data[i : i + CHUNK] for i in range(0, len(data), CHUNK)]
    started = time.thread_time()
    stream = parser_for(model)
    stream.start()
    for chunk in chunks:
        stream.feed(chunk)
    stream.finish()
    elapsed = time.thread_time() - started
    calls = [b for b in stream.result()["content"] if b.get("type") == "toolCall"]
    assert calls and len(calls[0]["arguments"]["content"]) > 90_000, stream.result().get("errorMessage")
    return elapsed * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    for name, model, big, small, _size in record():
        times = compare(
            {
                "one": functools.partial(parse, model, big),
                "ten": lambda model=model, small=small: sum(parse(model, small) for _ in range(10)),
            },
            args.rounds,
        )
        report(
            f"{name}: one 1 MB call",
            times["one"],
            times["ten"],
            anchor_name="ten 100 KB calls",
            unit="ms CPU",
            budget=3.0,
            budget_text="(1.0 = linear)",
        )


if __name__ == "__main__":
    main()
