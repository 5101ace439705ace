"""The recorded provider's token count per estimated token, read from a file's bill (design P15).

The replay counts tokens at four characters each. A file that records the usage its provider
billed says how many tokens that provider really counted: each request that continues the one
before (a longer prompt, a larger bill) adds both a billed growth and an estimated growth. Their
ratio is the density of this session's text in the provider's tokenizer (1.2 to 1.6 on real
Claude Code sessions, whose code and JSON tokenize denser than prose), and scaling the replay's
token figures by it turns the estimate into the provider's units for routes with that tokenizer.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence

from desktop.pi.cache_rules import CacheUsage
from desktop.pi.types import Model

#: A step's billed growth over its estimated growth outside this range is not the same
#: conversation continuing (a sub-agent's request after the main one, a compaction, a reply
#: billed without usage), so the step is left out of the fit.
STEP_RATIO = (0.25, 4.0)
#: A density outside this range means the bill does not describe the replayed requests; the
#: estimate is kept.
DENSITY = (0.5, 3.0)
#: Fewer continuing steps than this say too little to calibrate from.
MIN_STEPS = 2


def billed_density(billed: Sequence[int], estimated: Sequence[int]) -> float | None:
    """Provider tokens per estimated token: the billed growth over the estimated growth, summed
    over consecutive requests that both grew (``billed[i]`` is request ``i``'s billed input,
    fresh, read and written; ``estimated[i]`` its replayed size). None when the bill says too
    little (fewer than ``MIN_STEPS`` such steps) or something implausible."""
    billed_growth = estimated_growth = steps = 0
    for (b0, b1), (e0, e1) in zip(itertools.pairwise(billed), itertools.pairwise(estimated), strict=False):
        if b0 <= 0 or b1 <= 0:  # a reply the file records without usage
            continue
        grew, grew_estimated = b1 - b0, e1 - e0
        if grew > 0 and grew_estimated > 0 and STEP_RATIO[0] <= grew / grew_estimated <= STEP_RATIO[1]:
            billed_growth += grew
            estimated_growth += grew_estimated
            steps += 1
    if steps < MIN_STEPS:
        return None
    density = billed_growth / estimated_growth
    return density if DENSITY[0] <= density <= DENSITY[1] else None


def tokenizer_of(model: Model) -> str:
    """Which tokenizer counts ``model``'s tokens, as far as a density carries over: every Claude
    model (on Anthropic, Bedrock or Vertex) shares one; any other model only its own."""
    model_id = str(model.get("id", "")).lower()
    return "claude" if "claude" in model_id else f"{model.get('provider')}/{model_id}"


def scaled(usage: CacheUsage, density: float) -> CacheUsage:
    """``usage`` in the provider's units: each part times ``density``, the parts still adding up."""
    read = round(usage.read * density)
    written = round(usage.written * density)
    fresh = round(usage.fresh * density)
    return dataclasses.replace(
        usage,
        total=read + written + fresh,
        read=read,
        written=written,
        written_1h=min(written, round(usage.written_1h * density)),
    )
