"""What an incremental projection tells a projector about the transcript it stands for.

The incremental next request (design P7) projects a short stand-in transcript (the system
messages, a few stand-in messages and the tail) instead of the whole history. Two things a
projector computes from the whole history are passed in here instead: pi-ai's context
estimate (it sets ``max_tokens``), for the Responses APIs the running message position that
names assistant items (``msg_pi_<n>``), and for Anthropic whether any tool is declared now. Full projections never see this type.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


class TranscriptFacts(list[Any]):
    """A stand-in transcript carrying facts about the full transcript it replaces."""

    def __init__(
        self,
        messages: Iterable[Any],
        *,
        context_tokens: int | None = None,
        position_base: int = 0,
        watch: Iterable[Any] = (),
        has_tools: bool | None = None,
    ) -> None:
        super().__init__(messages)
        #: pi-ai's ``estimateContextTokens`` of the full transcript.
        self.context_tokens = context_tokens
        #: The Responses message position of the first stand-in message.
        self.position_base = position_base
        #: id(message) -> the Responses position it was converted at (-1 until seen).
        self.watched: dict[int, int] = {id(message): -1 for message in watch}
        #: Whether the full transcript declares any tool now (Anthropic's tool-streaming beta
        #: reads it when later tools travel in place and the stand-ins carry none of them).
        self.has_tools = has_tools
