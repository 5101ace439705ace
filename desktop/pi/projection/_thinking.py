"""Thinking levels and sampling parameters as pi-ai's ``streamSimple`` resolves them.

A requested level is clamped to what the model supports (``models.ts``), preferring stronger
thinking over weaker; "off" means no reasoning fields at all. Sampling parameters merge model
defaults, per-level overrides and the caller's values (``simple-options.ts``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from desktop.pi.types import Model

THINKING_LEVELS: tuple[str, ...] = ("off", "minimal", "low", "medium", "high", "xhigh", "max")
_EXTENDED = ("xhigh", "max")


def supported_thinking_levels(model: Model) -> list[str]:
    """``getSupportedThinkingLevels``: a null mapping disables a level; xhigh/max must be mapped."""
    if not model.get("reasoning"):
        return ["off"]
    level_map: Mapping[str, Any] = model.get("thinkingLevelMap") or {}
    levels = []
    for level in THINKING_LEVELS:
        if level in level_map:
            if level_map[level] is None:
                continue
        elif level in _EXTENDED:
            continue
        levels.append(level)
    return levels


def clamp_thinking_level(model: Model, level: str) -> str:
    """``clampThinkingLevel``: the nearest supported level, preferring higher ones."""
    available = supported_thinking_levels(model)
    if level in available:
        return level
    if level not in THINKING_LEVELS:
        return available[0] if available else "off"
    index = THINKING_LEVELS.index(level)
    for candidate in THINKING_LEVELS[index:]:
        if candidate in available:
            return candidate
    for candidate in reversed(THINKING_LEVELS[:index]):
        if candidate in available:
            return candidate
    return available[0] if available else "off"


def resolve_reasoning(model: Model, reasoning: str | None) -> str | None:
    """``options.reasoning`` clamped to the model; None when thinking is off."""
    if not reasoning:
        return None
    clamped = clamp_thinking_level(model, reasoning)
    return None if clamped == "off" else clamped


def resolve_sampling_params(
    model: Model, thinking_level: str, request_params: Mapping[str, Any] | None
) -> dict[str, Any] | None:
    """Model sampling defaults, then per-level overrides, then the request's own values."""
    level = clamp_thinking_level(model, thinking_level)
    base = model.get("samplingParams")
    by_level = (model.get("samplingParamsByThinkingLevel") or {}).get(level)
    if not (base or by_level or request_params):
        return None
    return {**(base or {}), **(by_level or {}), **(request_params or {})}
