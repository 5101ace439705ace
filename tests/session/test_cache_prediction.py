"""The cache view's prediction matches what the emulator reports, request by request (design P6, G4).

The benchmark's long synthetic conversation (about 80 requests with reads, ToolSearch
activations, skill and guidance edits and a compaction) runs through the real runtime on every
route class of the benchmark. Before each request is counted, the cache view predicts it from
the bodies the session sent before (the Payload tab's call); after it, the prediction is checked
against the usage pi-ai's parser read from the emulator's stream: exact for Anthropic
breakpoints, within one cache unit for prefix caches.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.bench.runner import run_conversation
from desktop.bench.scenario import long_conversation
from desktop.bench.strategies import ROUTE_CLASSES
from desktop.emulator import Emulator
from desktop.pi.cache_rules import CacheSimulator, prompt_for_model
from desktop.pi.cache_view import check, predict

pytestmark = pytest.mark.slow


def test_every_prediction_of_the_long_conversation_is_within_tolerance(tmp_path: Path) -> None:
    checked = matched = reads = 0
    mismatches: list[str] = []
    steps = long_conversation()
    with Emulator() as emu:
        for index, route in enumerate(ROUTE_CLASSES):
            recording = run_conversation(emu, route, steps, tmp_path / str(index))
            sent: list[bytes] = []
            cache = CacheSimulator()  # the bodies sent so far, fed once (the same as passing them all)
            for number, dispatch in enumerate(recording.dispatches, 1):
                body = dispatch.request.body_bytes
                prediction = predict(recording.model, body, sent[-1:], cache=cache)
                if number % 10 == 0:  # the window's call: the previous bodies themselves
                    assert predict(recording.model, body, sent).usage == prediction.usage
                verdict = check(prediction, dispatch.usage)
                checked += 1
                matched += verdict.ok
                reads += prediction.cached > 0
                if not verdict.ok:
                    mismatches.append(f"{route.key} request {number}: {verdict.mismatch}")
                if sent and prediction.cached:
                    assert 0 < prediction.marker_byte <= len(body)
                    assert prediction.ends_after is not None
                sent.append(body)
                cache.account(prompt_for_model(recording.model, dispatch.request.body))
    print(f"{matched}/{checked} predictions match")
    assert not mismatches, "\n".join(mismatches[:10])
    assert checked >= 6 * 70 and reads > checked // 2, (checked, reads)
