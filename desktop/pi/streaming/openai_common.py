"""What the OpenAI SDK does with each SSE event before pi-ai sees it (shared by chat and responses).

The SDK stops at ``data: [DONE]``, turns undecodable data into one fixed error, and raises
an API error for an ``event: error`` or a payload carrying an ``error`` member. The error
text follows the SDK's ``APIError.makeMessage`` (the error's ``message``, else its JSON).
"""

from __future__ import annotations

from typing import Any

import orjson

from desktop.pi.streaming.base import StreamFailure
from desktop.pi.streaming.sse import SseEvent

DONE = object()
MALFORMED_EVENT = "Error reading response: malformed server-sent event JSON."


def api_error_message(error: Any) -> str:
    if isinstance(error, dict) and error.get("message"):
        message = error["message"]
        return message if isinstance(message, str) else orjson.dumps(message).decode()
    if error:
        return orjson.dumps(error).decode()
    return "(no status code or body)"


def decode_openai_event(sse: SseEvent) -> Any:
    """The JSON payload of one event, DONE for the sentinel; raises StreamFailure like the SDK."""
    if sse.data == "[DONE]":
        return DONE
    try:
        data = orjson.loads(sse.data)
    except orjson.JSONDecodeError as exc:
        raise StreamFailure(MALFORMED_EVENT) from exc
    if sse.event == "error":
        inner = data.get("error") if isinstance(data, dict) else None
        raise StreamFailure(api_error_message(inner if inner is not None else data))
    if isinstance(data, dict) and data.get("error"):
        raise StreamFailure(api_error_message(data["error"]))
    return data
