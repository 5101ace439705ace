"""Which stream normalizer reads which pi-ai API."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from desktop.pi.streaming.anthropic_messages import AnthropicMessagesParser
from desktop.pi.streaming.base import StreamParser
from desktop.pi.streaming.bedrock_converse import BedrockConverseParser
from desktop.pi.streaming.google_generative_ai import GoogleGenerativeAIParser, GoogleVertexParser
from desktop.pi.streaming.mistral_conversations import MistralConversationsParser
from desktop.pi.streaming.openai_completions import OpenAICompletionsParser
from desktop.pi.streaming.openai_responses import (
    AzureOpenAIResponsesParser,
    OpenAICodexResponsesParser,
    OpenAIResponsesParser,
)

PARSERS: dict[str, type[StreamParser]] = {
    cls.api: cls
    for cls in (
        AnthropicMessagesParser,
        OpenAICompletionsParser,
        OpenAIResponsesParser,
        AzureOpenAIResponsesParser,
        OpenAICodexResponsesParser,
        MistralConversationsParser,
        GoogleGenerativeAIParser,
        GoogleVertexParser,
        BedrockConverseParser,
    )
}


def parser_for(model: Mapping[str, Any], *, timestamp: int | None = None) -> StreamParser:
    """A fresh normalizer for ``model["api"]``; a clear error for an API we cannot stream."""
    for field in ("id", "api", "provider"):  # what every message records (design W2)
        value = model.get(field)
        if not isinstance(value, str) or not value:
            problem = "has no" if value is None else f"has a malformed ({value!r:.40})"
            raise ValueError(f"The model {problem} '{field}' field; it must be a non-empty string")
    api = model.get("api")
    cls = PARSERS.get(str(api))
    if cls is None:
        known = ", ".join(sorted(PARSERS))
        raise ValueError(f"No stream parser for API {api!r}; supported APIs: {known}")
    return cls(model, timestamp=timestamp)
