"""The long synthetic conversation with idle gaps, predicted against the emulator (design P9).

The emulator keeps its own cache rules, written from the providers' pages (design P11), so
the product's predictions are checked against the documented behaviour, not against themselves.

The benchmark's conversation runs through the real runtime on Anthropic (short and long
retention) and OpenAI while the emulator's clock puts idle gaps of 4, 6 and 61 minutes before
three of its requests (30 seconds between the others). Before each request the cache view's
prompt cache, fed the earlier bodies at their times, predicts what the provider reads at this
one's time; the prediction must be what pi-ai's parser read from the emulator: exact for
Anthropic, within one cache unit for OpenAI. The gaps must show: after 6 minutes the short
retentions read nothing, the 1-hour one still reads, after 61 minutes none does.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.bench.runner import run_conversation
from desktop.bench.scenario import long_conversation
from desktop.bench.strategies import RouteClass
from desktop.emulator import Emulator
from desktop.pi.cache_rules import prompt_for_model
from desktop.pi.cache_view import check, predict
from desktop.pi.prompt_cache import PromptCache

pytestmark = pytest.mark.slow

MIN = 60_000
GAPS = {10: 4 * MIN, 20: 6 * MIN, 30: 61 * MIN}  # before the request with this number
ANTHROPIC = RouteClass("opus", "Anthropic", "anthropic/claude-opus-5-5", True, "on-demand")
OPENAI = RouteClass("openai", "OpenAI Responses", "openai/gpt-5.5", True, "on-demand")


@pytest.mark.parametrize(
    ("route", "long", "reads_after"),
    [
        (ANTHROPIC, False, {10: True, 20: False, 30: False}),
        (ANTHROPIC, True, {10: True, 20: True, 30: False}),
        (OPENAI, False, {10: True, 20: False, 30: False}),
    ],
    ids=["anthropic-5m", "anthropic-1h", "openai"],
)
def test_idle_gaps_predicted_against_the_emulator(
    route: RouteClass,
    long: bool,
    reads_after: dict[int, bool],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if long:
        monkeypatch.setenv("PI_CACHE_RETENTION", "long")
    times: list[int] = []

    def clock() -> int:  # one call per request the emulator accounts
        number = len(times) + 1
        times.append((times[-1] if times else 1_800_000_000_000) + GAPS.get(number, 30_000))
        return times[-1]

    steps = long_conversation()[:40]
    with Emulator() as emu:
        emu.clock = clock
        recording = run_conversation(emu, route, steps, tmp_path)
    assert len(recording.dispatches) == len(times) >= 31
    cache = PromptCache()
    mismatches = []
    reads: dict[int, bool] = {}
    for number, (dispatch, now) in enumerate(zip(recording.dispatches, times, strict=True), 1):
        body = dispatch.request.body_bytes
        prompt = prompt_for_model(recording.model, dispatch.request.body)
        prediction = predict(recording.model, body, cache=cache, now_ms=now)
        verdict = check(prediction, dispatch.usage)
        if not verdict.ok:
            mismatches.append(f"request {number}: {verdict.mismatch}")
        if number in reads_after:
            reads[number] = int(dispatch.usage.get("cacheRead") or 0) > 0
        cache.send(prompt, now)
    assert not mismatches, "\n".join(mismatches[:10])
    assert reads == reads_after
