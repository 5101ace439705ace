"""Merging one Pi model with its models.dev record (design M1).

models.dev wins for what it is the authority on — context window, output limit, prices and input
modalities — but only for the *exact* (provider, model id); a look-alike record is never used.
Everything else, above all the compat object whose fields shape request bodies and whose five
transport flags describe the endpoint, stays exactly as Pi publishes it.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

Provenance = dict[str, str]

PI = "pi"
MODELS_DEV = "models.dev"

_RATES = (
    ("input", "input"),
    ("output", "output"),
    ("cacheRead", "cache_read"),
    ("cacheWrite", "cache_write"),
)


def _positive(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value > 0


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _input_modalities(record: Mapping[str, Any]) -> list[str] | None:
    names = (record.get("modalities") or {}).get("input")
    if not isinstance(names, list):
        return None
    inputs = [kind for kind in ("text", "image") if kind in names]
    return inputs if "text" in inputs else None


def _tiers(
    md_cost: Mapping[str, Any], base: Mapping[str, Any], pi_tiers: list[Mapping[str, Any]] | None
) -> list[dict[str, Any]] | None:
    """models.dev context tiers in pi-ai's shape; ``None`` when models.dev has none we can use.

    A rate a models.dev tier leaves out comes from Pi's tier at the same threshold when there is
    one, otherwise from the merged base rate, because pi-ai applies a tier's four rates together.
    """
    tiers = md_cost.get("tiers")
    if not isinstance(tiers, list) or not tiers:
        return None
    by_threshold = {t.get("inputTokensAbove"): t for t in pi_tiers or []}
    out: list[dict[str, Any]] = []
    for tier in tiers:
        kind = tier.get("tier") or {}
        if kind.get("type") != "context" or not _positive(kind.get("size")):
            return None
        threshold = kind["size"]
        fallback = by_threshold.get(threshold, base)
        entry: dict[str, Any] = {"inputTokensAbove": threshold}
        for pi_name, md_name in _RATES:
            value = tier.get(md_name)
            entry[pi_name] = value if _number(value) else fallback[pi_name]
        out.append(entry)
    return sorted(out, key=lambda t: t["inputTokensAbove"])


def merge_model(
    pi_model: Mapping[str, Any], record: Mapping[str, Any] | None
) -> tuple[dict[str, Any], Provenance]:
    """The Pi model with models.dev's limits, prices and modalities; plus where each came from."""
    model = copy.deepcopy(dict(pi_model))
    provenance: Provenance = {
        "contextWindow": PI,
        "maxTokens": PI,
        "cost": PI,
        "input": PI,
        "compat": PI,
    }
    if record is None:
        return model, provenance
    limit = record.get("limit") or {}
    if _positive(limit.get("context")):
        model["contextWindow"] = limit["context"]
        provenance["contextWindow"] = MODELS_DEV
    if _positive(limit.get("output")):
        model["maxTokens"] = limit["output"]
        provenance["maxTokens"] = MODELS_DEV
    md_cost = record.get("cost")
    if isinstance(md_cost, Mapping):
        cost = dict(model["cost"])
        taken = []
        for pi_name, md_name in _RATES:
            if _number(md_cost.get(md_name)):
                cost[pi_name] = md_cost[md_name]
                taken.append(pi_name)
        tiers = _tiers(md_cost, cost, cost.get("tiers"))
        if tiers is not None:
            cost["tiers"] = tiers
            taken.append("tiers")
        if taken:
            model["cost"] = cost
            rates = [name for name in taken if name != "tiers"]
            if len(rates) == len(_RATES) and ("tiers" in taken or "tiers" not in cost):
                provenance["cost"] = MODELS_DEV
            else:
                provenance["cost"] = f"{MODELS_DEV} ({', '.join(taken)}), else {PI}"
    inputs = _input_modalities(record)
    if inputs is not None:
        model["input"] = inputs
        provenance["input"] = MODELS_DEV
    return model, provenance


def model_from_record(
    provider: str, record: Mapping[str, Any], *, api: str, base_url: str
) -> tuple[dict[str, Any], Provenance]:
    """A pi-ai Model dict for a record Pi does not publish, routed like the provider's Pi models.

    It has no compat object at all: nothing about the endpoint's transport is known.
    """
    limit = record.get("limit") or {}
    md_cost = record.get("cost") or {}
    cost = {pi: md_cost[md] if _number(md_cost.get(md)) else 0 for pi, md in _RATES}
    tiers = _tiers(md_cost, cost, None)
    if tiers is not None:
        cost["tiers"] = tiers
    model: dict[str, Any] = {
        "id": str(record.get("id", "")),
        "name": str(record.get("name") or record.get("id", "")),
        "api": api,
        "provider": provider,
        "baseUrl": base_url,
        "reasoning": record.get("reasoning") is True,
        "input": _input_modalities(record) or ["text"],
        "cost": cost,
        "contextWindow": limit["context"] if _positive(limit.get("context")) else 0,
        "maxTokens": limit["output"] if _positive(limit.get("output")) else 0,
        "type": "chat",
    }
    provenance = {k: MODELS_DEV for k in ("contextWindow", "maxTokens", "cost", "input")}
    provenance["api"] = provenance["baseUrl"] = f"{PI} (the provider's usual binding)"
    return model, provenance
