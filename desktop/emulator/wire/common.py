"""Helpers shared by the SSE encoders."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from desktop.emulator.provider_cache import Usage

#: Characters per streamed text delta; small enough that every answer arrives in pieces.
TEXT_PIECE = 24
#: Characters per streamed tool-argument delta.
ARGS_PIECE = 16


@dataclass(frozen=True)
class StreamContext:
    """Everything an encoder needs besides the reply."""

    model: str
    seq: int
    created: int
    cache: Usage
    output_tokens: int


def pieces(text: str, size: int = TEXT_PIECE) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def sse(data: Any, event: str | None = None, *, crlf: bool = False) -> bytes:
    body = data if isinstance(data, str) else orjson.dumps(data).decode()
    head = f"event: {event}\n" if event else ""
    text = f"{head}data: {body}\n\n"
    return (text.replace("\n", "\r\n") if crlf else text).encode()


def dumps(value: Any) -> str:
    return orjson.dumps(value).decode()
