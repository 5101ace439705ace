"""How the benchmark reads a request's prompt the way the prompt cache sees it.

The one place the benchmark takes the provider cache rules from: the canonical prompt of each
wire family and the token estimate. Everything else in ``desktop.bench`` goes through here, so
moving to another home for those rules is a change of the imports below.
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson

from desktop.emulator.conversation import read_anthropic, read_chat, read_responses
from desktop.emulator.tokens import CHARS_PER_TOKEN, estimate_tokens

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
    data = orjson.loads(body)
    if api == "anthropic-messages":
        return PromptShape(blocks=tuple(b.text for b in read_anthropic(data).blocks))
    if api == "openai-completions":
        return PromptShape(text=read_chat(data).prompt)
    if api in ("openai-responses", "openai-codex-responses", "azure-openai-responses"):
        return PromptShape(text=read_responses(data).prompt)
    raise ValueError(f"the benchmark has no prompt reader for API {api!r}")
