"""Stream parsing throughput: neutral events per second versus just reading the bytes.

Records one long streamed answer (and one long tool call) per API family from the loopback
emulator, then, in one run and on the same bytes fed in 4 KiB chunks, times:

* baseline — splitting the chunks into lines (the least any reader must do),
* sse      — the incremental SSE decoder (lines → events),
* parser   — the full per-API normalizer (events → neutral pi-ai events and message).

    PYTHONPATH=. python benchmarks/stream_bench.py [--words 4000] [--rounds 5]

Interleaved round by round through ``_bench.compare`` (each side once first, uncounted), this
thread's CPU, min and median; ratios are against the baseline.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import compare, report, thread_cpu_ms

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


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--words", type=int, default=4000, help="length of the recorded answers")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds")
    args = parser.parse_args()

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

        times = compare(
            {
                "baseline": lambda run=baseline: thread_cpu_ms(run),
                "sse": lambda run=sse: thread_cpu_ms(run),
                "parser": lambda run=full: thread_cpu_ms(run),
            },
            args.rounds,
        )
        events = full()
        megabytes = len(data) / 1e6
        for side in ("sse", "parser"):
            report(
                f"{name} ({len(data) / 1024:.0f} KiB, {events} events): {side}",
                times[side],
                times["baseline"],
                anchor_name="splitting into lines",
                unit="ms CPU",
            )
        print(f"  parser {megabytes / statistics.median(times['parser']) * 1000:.1f} MB/s at the median")


if __name__ == "__main__":
    main()
