"""``generationConfig.thinkingConfig`` as pi-ai's Google adapters derive it.

The thinking control is a discrete level for Gemini 3 / Gemma 4 and a token budget for older
models, with a model-specific "off" (some Gemini 3 models cannot switch thinking off, so "off"
means their lowest level).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from desktop.pi.projection import ProjectionError, RequestOptions
from desktop.pi.projection._thinking import clamp_thinking_level
from desktop.pi.types import Model

GoogleFamily = Literal["google-generative-ai", "google-vertex"]

GOOGLE_LEVELS = ("minimal", "low", "medium", "high")

_THINKING_LEVEL_MODEL = re.compile(r"gemini-3(?:\.\d+)?-(?:pro|flash)")
_GEMMA_4 = re.compile(r"gemma-?4")

#: Token budgets per level (``getGoogleBudget``); the Vertex adapter has no flash-lite row.
_BUDGETS_PRO = {"minimal": 128, "low": 2048, "medium": 8192, "high": 32768}
_BUDGETS_FLASH_LITE = {"minimal": 512, "low": 2048, "medium": 8192, "high": 24576}
_BUDGETS_FLASH = {"minimal": 128, "low": 2048, "medium": 8192, "high": 24576}


def uses_thinking_level(model: Model) -> bool:
    """Gemini 3 Pro/Flash, the ``-latest`` Flash aliases and Gemma 4 take a level, not a budget."""
    model_id = model["id"].lower()
    return bool(
        _THINKING_LEVEL_MODEL.search(model_id)
        or model_id in ("gemini-flash-latest", "gemini-flash-lite-latest")
        or _GEMMA_4.search(model_id)
    )


def resolve_google_level(model: Model, level: str) -> str:
    """A pi level through the model's ``thinkingLevelMap`` to one of Google's four levels."""
    mapped = (model.get("thinkingLevelMap") or {}).get(level)
    resolved = mapped.lower() if isinstance(mapped, str) else level
    if resolved not in GOOGLE_LEVELS:
        raise ProjectionError(
            f"Unsupported Google thinking level mapping for {model['provider']}/{model['id']}: "
            f"{level} -> {mapped if isinstance(mapped, str) else 'undefined'}; fix the model's "
            "thinkingLevelMap or pick another reasoning level"
        )
    return resolved


def _disabled_thinking_config(model: Model) -> dict[str, Any]:
    if not uses_thinking_level(model):
        return {"thinkingBudget": 0}
    fallback = clamp_thinking_level(model, "off")
    if fallback == "off":
        return {"thinkingBudget": 0}
    return {"thinkingLevel": resolve_google_level(model, fallback).upper()}


def _budget(model: Model, level: str, custom: Mapping[str, int] | None, family: GoogleFamily) -> int:
    if custom is not None and custom.get(level) is not None:
        return int(custom[level])
    model_id = model["id"]
    if "2.5-pro" in model_id:
        return _BUDGETS_PRO[level]
    if family == "google-generative-ai" and "2.5-flash-lite" in model_id:
        return _BUDGETS_FLASH_LITE[level]
    if "2.5-flash" in model_id:
        return _BUDGETS_FLASH[level]
    return -1


def thinking_config(model: Model, options: RequestOptions, family: GoogleFamily) -> dict[str, Any] | None:
    """``generationConfig.thinkingConfig``, or None for models without reasoning."""
    if not model.get("reasoning"):
        return None
    level = clamp_thinking_level(model, options.reasoning) if options.reasoning else "off"
    if level == "off":
        return _disabled_thinking_config(model)
    google_level = resolve_google_level(model, level)
    if uses_thinking_level(model):
        return {"includeThoughts": True, "thinkingLevel": google_level.upper()}
    return {
        "includeThoughts": True,
        "thinkingBudget": _budget(model, google_level, options.thinking_budgets, family),
    }
