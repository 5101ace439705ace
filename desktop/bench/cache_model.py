"""How the benchmark reads a request's prompt the way the prompt cache sees it.

The one place the benchmark takes the provider cache rules from (``desktop.pi.cache_rules``, the
module the emulator and the preview share, design P6): the canonical prompt of each wire family
in cache order and the token estimate. Everything else in ``desktop.bench`` goes through here.
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson

from desktop.pi.cache_rules import CHARS_PER_TOKEN, WIRE_OF_API, estimate_tokens, segments

__all__ = ["CHARS_PER_TOKEN", "PromptShape", "estimate_tokens", "prompt_shape"]


@dataclass(frozen=True)
class PromptShape:
    """A request's prompt as the emulator measures it, for the theoretical minimum.

    Anthropic caches at block boundaries (``blocks``: canonical block texts in cache order);
    the automatic-prefix providers at any point of one canonical string (``text``).
    """

    blocks: tuple[str, ...] = ()
    text: str | None = None

    @property
    def tokens(self) -> int:
        if self.text is not None:
            return max(1, estimate_tokens(self.text))
        return sum(estimate_tokens(b) for b in self.blocks)


def prompt_shape(api: str, body: bytes) -> PromptShape:
    wire = WIRE_OF_API.get(api)
    if wire not in ("anthropic", "chat", "responses"):
        raise ValueError(f"the benchmark has no prompt reader for API {api!r}")
    parts = tuple(segment.text for segment in segments(wire, orjson.loads(body)))
    if wire == "anthropic":
        return PromptShape(blocks=parts)
    return PromptShape(text="".join(part + "\n" for part in parts))
