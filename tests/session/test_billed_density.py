"""The bill's tokens per estimated token, worked by hand (design P15)."""

from __future__ import annotations

from typing import Any, cast

from desktop.pi.cache_rules import CacheUsage
from desktop.pi.types import Model
from desktop.session.billed_density import billed_density, scaled, tokenizer_of


def test_the_density_is_the_billed_growth_over_the_estimated_growth() -> None:
    # Two steps of one conversation: +600 billed for +400 estimated, twice: 1,200 / 800.
    assert billed_density([1_000, 1_600, 2_200], [800, 1_200, 1_600]) == 1.5


def test_steps_that_are_not_the_conversation_continuing_are_left_out() -> None:
    billed = [1_000, 1_600, 2_200, 900, 0, 3_000, 3_300]
    estimated = [800, 1_200, 1_600, 500, 520, 2_000, 2_200]
    # Kept: 1,000 -> 1,600 (+600 / +400) and 1,600 -> 2,200 (+600 / +400), and
    # 3,000 -> 3,300 (+300 / +200). Left out: the drop to a sub-agent's 900, the reply billed
    # without usage (0) on either side, and no step is counted twice.
    assert billed_density(billed, estimated) == (600 + 600 + 300) / (400 + 400 + 200)


def test_a_step_far_from_the_others_is_not_the_same_conversation() -> None:
    # +5,000 billed for +100 estimated (a compaction's new prompt, a sub-agent) is left out.
    assert billed_density([1_000, 1_600, 6_600, 7_200], [800, 1_200, 1_300, 1_700]) == 1.5


def test_too_few_steps_or_an_implausible_density_keep_the_estimate() -> None:
    assert billed_density([1_000, 1_600], [800, 1_200]) is None  # one step
    assert billed_density([1_000], [800]) is None
    # Three steps at 3.5 tokens per estimated token: not the replayed text.
    assert billed_density([1_000, 4_500, 8_000, 11_500], [800, 1_800, 2_800, 3_800]) is None


def test_scaled_usage_keeps_its_parts_adding_up() -> None:
    usage = CacheUsage(total=1_001, read=500, written=301, written_1h=301)
    out = scaled(usage, 1.5)
    assert (out.read, out.written, out.written_1h, out.fresh) == (750, 452, 452, 300)
    assert out.total == out.read + out.written + out.fresh


def test_every_claude_model_shares_a_tokenizer_and_other_models_keep_their_own() -> None:
    def model(provider: str, model_id: str) -> Model:
        return cast(Model, cast(Any, {"provider": provider, "id": model_id}))

    assert tokenizer_of(model("anthropic", "claude-opus-4-6")) == tokenizer_of(
        model("amazon-bedrock", "us.anthropic.claude-sonnet-4-5-20250929-v1:0")
    )
    assert tokenizer_of(model("openai", "gpt-5.5")) != tokenizer_of(model("anthropic", "claude-opus-4-6"))
    assert tokenizer_of(model("openai", "gpt-5.5")) != tokenizer_of(model("openai", "gpt-4.1"))
