"""Stream parsing throughput: neutral events per second versus just reading the bytes.

Records one long streamed answer (and one long tool call) per API family from the loopback
emulator, then, in one run and on the same bytes fed in 4 KiB chunks, times:

* baseline — splitting the chunks into lines (the least any reader must do),
* sse      — the incremental SSE decoder (lines → events),
* parser   — the full per-API normalizer (events → neutral pi-ai events and message).

    PYTHONPATH=. python benchmarks/stream_bench.py [--words 4000] [--repeat 5]

Ratios are against the baseline time; "events/s" counts neutral events out of the parser.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from desktop.emulator import Emulator
from desktop.pi.streaming import SseDecoder, parser_for
from tests.wire.families import FAMILIES, READ_TOOL

CHUNK = 4096


def record(words: int) -> list[tuple[str, dict[str, str], bytes]]:
    streams = []
    big_args = '{"path": "notes.txt", "content": "' + "lorem ipsum dolor sit amet " * (words // 5) + '"}'
    with Emulator() as emu, httpx.Client() as client:
        for family in FAMILIES:
            model = {"id": family.model_id, "api": family.api, "provider": family.provider}
            for label, text in (
                ("text", f"go [[words:{words}]]"),
                ("tool", f"write [[tool:write {big_args}]]"),
            ):
                request = family.request(emu, "system", [("user", text)], [READ_TOOL])
                body = client.post(request.url, content=request.body, headers=dict(request.headers)).content
                streams.append((f"{family.name}/{family.api} {label}", model, body))
    return streams


def best_of(repeat: int, run: Callable[[], int]) -> tuple[float, int]:
    best, count = float("inf"), 0
    for _ in range(repeat):
        started = time.perf_counter()
        count = run()
        best = min(best, time.perf_counter() - started)
    return best, count


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--words", type=int, default=4000, help="length of the recorded answers")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per measurement (best is kept)")
    args = parser.parse_args()

    rows = []
    for name, model, data in record(args.words):
        chunks = [data[i : i + CHUNK] for i in range(0, len(data), CHUNK)]

        def baseline(chunks: list[bytes] = chunks) -> int:
            lines, rest = 0, b""
            for chunk in chunks:
                parts = (rest + chunk).split(b"\n")
                rest = parts.pop()
                lines += len(parts)
            return lines

        def sse(chunks: list[bytes] = chunks) -> int:
            decoder = SseDecoder()
            return sum(len(decoder.feed(c)) for c in chunks) + len(decoder.close())

        def full(chunks: list[bytes] = chunks, model: dict[str, str] = model) -> int:
            stream = parser_for(model)
            count = len(stream.start())
            for chunk in chunks:
                count += len(stream.feed(chunk))
            count += len(stream.finish())
            assert stream.result()["stopReason"] in ("stop", "toolUse"), stream.result().get("errorMessage")
            return count

        t_base, _ = best_of(args.repeat, baseline)
        t_sse, sse_events = best_of(args.repeat, sse)
        t_full, events = best_of(args.repeat, full)
        rows.append((name, len(data), sse_events, events, t_base, t_sse, t_full))

    header = (
        f"{'stream':<44} {'KiB':>6} {'sse ev':>7} {'events':>7} {'base MB/s':>10} {'sse MB/s':>9} "
        f"{'parse MB/s':>10} {'events/s':>10} {'sse/base':>9} {'parse/base':>10}"
    )
    print(header)
    print("-" * len(header))
    for name, size, sse_events, events, t_base, t_sse, t_full in rows:
        mb = size / 1e6
        print(
            f"{name:<44} {size / 1024:>6.0f} {sse_events:>7} {events:>7} {mb / t_base:>10.1f} {mb / t_sse:>9.1f} "
            f"{mb / t_full:>10.1f} {events / t_full:>10.0f} {t_sse / t_base:>8.1f}x {t_full / t_base:>9.1f}x"
        )


if __name__ == "__main__":
    main()
