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
from desktop.bench.strategies import ROUTE_CLASSES, RouteClass
from desktop.emulator import Emulator
from desktop.pi.cache_rules import prompt_for_model
from desktop.pi.cache_view import check, predict
from desktop.pi.prompt_cache import PromptCache

pytestmark = pytest.mark.slow

#: The benchmark's route classes cover Anthropic, Responses and DeepSeek; these add every other
#: API the emulator speaks (Gemini, Vertex, Mistral, Bedrock with and without cache points,
#: Azure, Codex), so every provider rule is checked.
MORE_ROUTES = (
    RouteClass("gemini", "Gemini API", "google/gemini-3.5-flash", True, "on-demand"),
    RouteClass("vertex", "Vertex", "google-vertex/gemini-2.5-flash", True, "on-demand"),
    RouteClass("mistral", "Mistral", "mistral/mistral-medium-latest", True, "on-demand"),
    RouteClass("bedrock-nova", "Bedrock Nova", "amazon-bedrock/amazon.nova-lite-v1:0", True, "on-demand"),
    RouteClass(
        "bedrock-claude",
        "Bedrock Claude",
        "amazon-bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        True,
        "on-demand",
    ),
    RouteClass("azure", "Azure Responses", "azure/gpt-4.1", True, "on-demand"),
    RouteClass("codex", "Codex", "openai-codex/gpt-5.5", True, "on-demand"),
)


def test_every_prediction_of_the_long_conversation_is_within_tolerance(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "demo-project")  # Vertex builds its URL from these
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "us-central1")
    checked = matched = reads = 0
    mismatches: list[str] = []
    steps = long_conversation()
    with Emulator() as emu:
        for index, route in enumerate((*ROUTE_CLASSES, *MORE_ROUTES)):
            recording = run_conversation(emu, route, steps, tmp_path / str(index))
            sent: list[bytes] = []
            cache = PromptCache()  # the bodies sent so far, fed once (the same as passing them all)
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
                cache.send(prompt_for_model(recording.model, dispatch.request.body))
    print(f"{matched}/{checked} predictions match")
    assert not mismatches, "\n".join(mismatches[:10])
    assert checked >= 13 * 70 and reads > checked // 2, (checked, reads)
