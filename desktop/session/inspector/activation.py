"""The Activation tab: why the session holds the deferred-tool grants it holds (design A5, A7, A8).

Computed on the worker thread (or in a headless command) from the live gate and the
model-ordered rows, then shipped to the window as plain data.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from desktop.session.activation import SECTION_NAME
from desktop.session.context_log import system_messages_at
from desktop.session.gate import ToolGate


def activation_info(gate: ToolGate | None, messages: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The Activation tab: live state, its identity inputs, and whether the transcript's newest
    ``tool_activation`` section would be honoured for the current identity (and why not).
    ``messages`` is the model's context (the runtime's view, read on demand: not a copy)."""

    if gate is None:
        return {"available": False, "why": "No session is open."}
    gate.refresh()
    snapshot = gate.snapshot
    route = gate.route
    identity = gate.identity()
    verdict = gate.verdict(messages)
    section = None
    for _index, message in reversed(system_messages_at(messages)):
        sections = message.get("sections")
        if isinstance(sections, Mapping) and SECTION_NAME in sections:
            section = sections[SECTION_NAME]
            break
    legacy = sorted(verdict.active) if verdict.source == "legacy" else []
    if verdict.source == "rejected":
        valid, why = False, verdict.reason
    elif section is None:
        valid, why = True, "nothing recorded yet: " + verdict.reason
    else:
        valid, why = True, f"the transcript's section matches the current identity ({verdict.reason})"
    policy = gate.policy
    return {
        "available": True,
        "valid": valid,
        "why": why,
        "source": verdict.source,
        "active": list(gate.state.active),
        # Granted by a history without a section under the older rule (design A5).
        "legacyEvidence": legacy,
        # Why the session opened with the grants it has (e.g. a copied file: nothing restored).
        "restoredAtOpen": gate.last_restore.reason if gate.last_restore is not None else None,
        "epoch": gate.epoch,
        "identity": identity,
        "inputs": {
            "account": route.account,
            "model": route.model_id,
            "api": route.api,
            "endpoint": route.base_url,
            "mode": gate.mode.value,
            "declarations": [d.get("name") for d in snapshot.declarations()],
            "deferred": sorted(snapshot.deferred_names),
        },
        "policy": {
            "mode": policy.mode,
            "note": policy.note(),
            "fallback": policy.reason if policy.fallback else None,
            "functions": policy.function_count,
            "estimatedTokens": policy.estimated_tokens,
        },
        "section": section,
    }
