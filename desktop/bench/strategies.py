"""Route classes (what the benchmark runs on) and strategies (how a transcript is projected)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from desktop.pi.catalog.transport import without_transport_flags
from desktop.pi.projection import ProviderRequest, RequestOptions, project
from desktop.pi.transcript import collapse_system_messages
from desktop.pi.types import Message, Model

Strategy = Literal["chronological", "folded", "snapshot"]


@dataclass(frozen=True)
class RouteClass:
    key: str
    label: str
    published: str  # "provider/model-id"
    emulated: bool  # the emulator stands in for the official endpoint (published flags kept)
    declarations: Literal["auto", "on-demand"] = "auto"


ROUTE_CLASSES: tuple[RouteClass, ...] = (
    RouteClass(
        "opus-native", "Anthropic, native tool changes (claude-opus-5-5)", "anthropic/claude-opus-5-5", True
    ),
    RouteClass(
        "sonnet-unflagged", "Anthropic, unflagged (claude-sonnet-5)", "anthropic/claude-sonnet-5", True
    ),
    RouteClass(
        "luna-responses", "Responses, additional tools (openai/gpt-5.6-luna)", "openai/gpt-5.6-luna", True
    ),
    RouteClass("flash-fixed", "deepseek-flash, fixed declarations", "deepseek/deepseek-flash", True),
    RouteClass(
        "flash-on-demand",
        "deepseek-flash, on-demand declarations",
        "deepseek/deepseek-flash",
        True,
        "on-demand",
    ),
    RouteClass(
        "relay-unverified",
        "Unverified relay of claude-opus-5-5 (conservative fallback)",
        "anthropic/claude-opus-5-5",
        False,
    ),
)


def strategy_request(
    strategy: Strategy, model: Model, messages: Sequence[Message], options: RequestOptions
) -> ProviderRequest:
    """The request ``strategy`` sends for the transcript ``messages`` (the runtime's own for chronological)."""
    if strategy == "chronological":
        return project(model, list(messages), options)
    if strategy == "folded":
        return project(without_transport_flags(model), list(messages), options)  # type: ignore[arg-type]
    return project(model, collapse_system_messages(list(messages)), options)
