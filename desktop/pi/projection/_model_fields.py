"""The model fields each API's projection reads, checked once before any is read (design W2).

A model comes from the catalog, a refreshed catalog file or the user's own definitions; a
missing or mistyped field would otherwise surface deep inside a projection as a bare
``KeyError: 'baseUrl'`` or ``TypeError``. Checking up front turns it into one line naming
the model and the field.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from desktop.pi.projection import ProjectionError


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _string(value: Any) -> bool:
    return isinstance(value, str)


def _count(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value > 0


def _flag(value: Any) -> bool:
    return isinstance(value, bool)


def _inputs(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


#: Each field: how to check it and what it must be (said in the error).
_KINDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "id": (_text, "a non-empty string"),
    "api": (_text, "a non-empty string"),
    "provider": (_text, "a non-empty string"),
    # Empty is allowed: a few catalog models (Azure's) take their endpoint from elsewhere.
    "baseUrl": (_string, "a URL string (where requests are sent)"),
    "maxTokens": (_count, "a positive number"),
    "reasoning": (_flag, "true or false"),
    "input": (_inputs, 'a list of input kinds such as ["text", "image"]'),
}

_EVERY = ("id", "api", "provider")
#: The fields each API's projection reads unguarded (others it reads with a default).
NEEDED: dict[str, tuple[str, ...]] = {
    "anthropic-messages": (*_EVERY, "baseUrl", "maxTokens", "reasoning"),
    "openai-completions": (*_EVERY, "baseUrl", "maxTokens", "input"),
    "openai-responses": (*_EVERY, "baseUrl", "input"),
    "azure-openai-responses": (*_EVERY, "input"),
    "openai-codex-responses": (*_EVERY, "input"),
    "mistral-conversations": (*_EVERY, "baseUrl", "input"),
    "google-generative-ai": (*_EVERY, "input"),
    "google-vertex": (*_EVERY, "input"),
    "bedrock-converse-stream": (*_EVERY, "baseUrl", "maxTokens", "reasoning"),
    "pi-messages": (*_EVERY, "baseUrl"),
}


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_model_fields(model: Any) -> None:
    """Raise ``ProjectionError`` naming the first field ``model`` lacks or holds malformed,
    among those its API's projection reads; an unknown API is left to ``projector_for``."""
    if not isinstance(model, Mapping):
        raise ProjectionError(f"the model must be a JSON object, not {_shown(model)}")
    name = model.get("id")
    who = f"model {name!r}" if _text(name) else "the model"
    api = model.get("api")
    for field in NEEDED.get(api, _EVERY) if isinstance(api, str) else _EVERY:
        check, what = _KINDS[field]
        if field not in model or model[field] is None:
            raise ProjectionError(f"{who} has no '{field}' field; it must be {what}")
        if not check(model[field]):
            raise ProjectionError(f"{who}: field '{field}' must be {what}, not {_shown(model[field])}")
