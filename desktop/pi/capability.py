"""Capability status: how system updates and tool changes reach the model on a route (design P3).

It follows pi-ai 1.0.3's rules: later system messages stay in place only when
``supportsMidConvoSystemMessages`` is on *and* the API has a mid-conversation path (Google and
Bedrock always fold); tool flags are API-specific and only count when that flag is on. Without
native support, Desktop delivers instruction updates the session's chosen fallback way: folded
into the leading system prompt (Pi's default) or as an attributed (labelled) user update.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from desktop.pi.catalog.catalog import SourceInfo
from desktop.pi.catalog.patches import DEFAULT_PATCHES
from desktop.pi.catalog.transport import (
    ADDITIONAL_TOOLS,
    SYSTEM_MESSAGES,
    TOOL_ADDITIONS,
    TOOL_CHANGES,
    TOOL_SEARCH,
    TRANSPORT_FLAGS,
)
from desktop.pi.routes import ResolvedModel

FallbackDelivery = Literal["folded", "attributed"]
Delivery = Literal["native system sections", "attributed user updates", "folded"]
ToolPath = Literal[
    "native tool changes",
    "additional tools",
    "tool search",
    "system-message tools",
    "full list at request level",
]

RESPONSES_APIS = frozenset({"openai-responses", "openai-codex-responses", "azure-openai-responses"})
NATIVE_SYSTEM_APIS = frozenset(
    {"anthropic-messages", "openai-completions", "mistral-conversations", "pi-messages", *RESPONSES_APIS}
)
"""APIs with a mid-conversation system path in pi-ai; every other API folds."""


class CapabilityStatus(NamedTuple):
    delivery: Delivery
    tool_path: ToolPath
    explanation: str
    route_verified: bool
    route_reason: str

    def summary(self) -> str:
        return f"{self.delivery}; tools: {self.tool_path}"


def _tool_path(api: str, flags: dict[str, bool]) -> tuple[ToolPath, str]:
    if api == "anthropic-messages" and flags[TOOL_CHANGES]:
        return "native tool changes", (
            "tool additions and removals travel as tool_addition/tool_removal blocks inside the system update; "
            "the request-level list stays fixed (initial tools plus a reserved deferred placeholder). "
            "A session that starts with no active tools sends the full list at request level"
        )
    if api in RESPONSES_APIS and flags[ADDITIONAL_TOOLS]:
        return "additional tools", (
            "new tools load in place as additional_tools while retained history holds only additions; "
            "any removal or same-name redeclaration sends the full current list at request level"
        )
    if api in RESPONSES_APIS and flags[TOOL_SEARCH]:
        return "tool search", (
            "new tools load in place through a client-side tool search call and output while retained history "
            "holds only additions; any removal or redeclaration sends the full current list"
        )
    if api == "openai-completions" and flags[TOOL_ADDITIONS]:
        return "system-message tools", (
            "new tools load in place in a system message that carries tools; removals and redeclarations send "
            "the full current list at request level"
        )
    return _FULL_LIST


_FULL_LIST: tuple[ToolPath, str] = (
    "full list at request level",
    "any tool change sends the full current tool list at request level",
)


def capability_status(
    resolved: ResolvedModel, fallback_delivery: FallbackDelivery = "folded"
) -> CapabilityStatus:
    """Which path the route uses for instruction updates and tool changes, and why."""
    api = str(resolved.model["api"])
    flags = dict(resolved.flags)
    native = flags[SYSTEM_MESSAGES] and api in NATIVE_SYSTEM_APIS
    if native:
        tool_path, tool_text = _tool_path(api, flags)
        delivery: Delivery = "native system sections"
        why = (
            f"{resolved.published.describe()} accepts system messages mid-conversation, so updated sections "
            "stay at their place in the conversation"
        )
        if api == "pi-messages":
            why += " (pi-messages passes them to its backend unchanged; the backend decides the rest)"
    else:
        tool_path, tool_text = _FULL_LIST
        if flags[SYSTEM_MESSAGES]:
            cause = f"{api} has no mid-conversation system path in pi-ai, so system messages are folded"
        elif resolved.transport_verified:
            cause = f"Pi publishes no supportsMidConvoSystemMessages for {resolved.published.describe()}"
        else:
            cause = resolved.reason
        if fallback_delivery == "attributed":
            delivery = "attributed user updates"
            why = f"{cause}; updated sections are sent as a labelled user message at their place"
        else:
            delivery = "folded"
            why = f"{cause}; updated sections are folded into the leading system prompt (Pi's default)"
    return CapabilityStatus(
        delivery=delivery,
        tool_path=tool_path,
        explanation=f"{why}. Tools: {tool_text}.",
        route_verified=resolved.transport_verified,
        route_reason=resolved.reason,
    )


class FlagOrigin(NamedTuple):
    """One transport flag of a resolved route: its value and where that value came from."""

    flag: str
    value: bool
    #: What the Pi catalog publishes for the route's binding (before a fallback withdraws it).
    published: bool
    origin: str


def flag_origins(resolved: ResolvedModel, sources: SourceInfo) -> tuple[FlagOrigin, ...]:
    """Where each transport flag of ``resolved`` came from (design M1, P3): the Pi catalog in
    use (bundled or a refreshed copy, named by ``sources``), a patch, or a fallback."""
    pi = f"Pi catalog pi-ai {sources.pi_version} ({sources.pi_origin})"
    patched = {
        flag: patch.name
        for patch in DEFAULT_PATCHES
        if patch.name in resolved.patches
        for flag in patch.compat
    }
    out = []
    for flag in TRANSPORT_FLAGS:
        value, published = bool(resolved.flags.get(flag)), bool(resolved.published_flags.get(flag))
        if resolved.source != "pi":
            origin = f"off: the {resolved.source} record has no Pi transport flags"
        elif not resolved.transport_verified:
            origin = f"withdrawn ({resolved.fallback_cause}); {pi} publishes {str(published).lower()}"
        elif flag in patched:
            origin = f"patch {patched[flag]} over the {pi}"
        else:
            origin = pi
        out.append(FlagOrigin(flag, value, published, origin))
    return tuple(out)
