"""Pure streaming parsers: provider SSE bytes in, pi-ai neutral events and messages out.

Nothing here touches sockets or files; ``desktop.host.providers`` feeds the bytes.
"""

from desktop.pi.streaming.base import AssistantMessage, StreamEvent, StreamParser
from desktop.pi.streaming.partial_json import parse_streaming_json
from desktop.pi.streaming.registry import PARSERS, parser_for
from desktop.pi.streaming.sse import SseDecoder, SseEvent

__all__ = [
    "PARSERS",
    "AssistantMessage",
    "SseDecoder",
    "SseEvent",
    "StreamEvent",
    "StreamParser",
    "parse_streaming_json",
    "parser_for",
]
