"""``ToolSearch``: find deferred tools (MCP servers, extensions) and activate them.

Ranking is Okapi BM25 over each tool's name parts (weighted), description and parameter
names/descriptions: pure code, deterministic, no model call. ``select:a,b`` picks tools by
exact name. A successful result lists the names it activated in ``details.activated``;
that list is the evidence restoration reads after a crash, so it is the only place the
activation of a result is recorded.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import NamedTuple

from desktop.host.tools.types import JsonObject, ToolContext, ToolOutcome, ToolSpec

NAME = "ToolSearch"
DEFAULT_MAX_RESULTS = 5
DESCRIPTION = (
    "Search the deferred tools (from MCP servers and extensions) by keywords, or select them by exact name "
    'with "select:name1,name2". Matching tools are activated: after this call you can call them directly. '
    "Deferred tools cannot be called before they are activated."
)
PARAMETERS: JsonObject = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "description": 'Keywords describing the capability you need, or "select:<name>[,<name>...]"',
        },
        "max_results": {
            "type": "number",
            "description": f"Maximum number of tools to activate (default: {DEFAULT_MAX_RESULTS})",
        },
    },
    "required": ["query"],
}

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_WORD = re.compile(r"[a-z0-9]+")
NAME_WEIGHT = 3
K1 = 1.2
B = 0.75


def tokenize(text: str) -> list[str]:
    return _WORD.findall(_CAMEL.sub(" ", text).lower())


def _document(spec: ToolSpec) -> list[str]:
    tokens = tokenize(spec.name) * NAME_WEIGHT + tokenize(spec.description)
    props = spec.parameters.get("properties")
    if isinstance(props, dict):
        for key, value in props.items():
            tokens += tokenize(str(key))
            if isinstance(value, dict) and isinstance(value.get("description"), str):
                tokens += tokenize(value["description"])
    return tokens


class SearchHit(NamedTuple):
    """One tool's BM25 score."""

    name: str
    score: float


def rank(query: str, tools: Sequence[ToolSpec]) -> list[SearchHit]:
    """BM25 scores of every tool with a positive score, best first (ties by name)."""
    terms = list(dict.fromkeys(tokenize(query)))
    if not terms or not tools:
        return []
    docs = [(spec.name, Counter(_document(spec))) for spec in tools]
    lengths = [sum(counts.values()) for _, counts in docs]
    avg = sum(lengths) / len(lengths) or 1.0
    n = len(docs)
    df = {t: sum(1 for _, counts in docs if t in counts) for t in terms}
    hits: list[SearchHit] = []
    lowered = query.strip().lower()
    for (name, counts), length in zip(docs, lengths, strict=True):
        score = 0.0
        for term in terms:
            tf = counts.get(term, 0)
            if not tf:
                continue
            idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
            score += idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / avg))
        if name.lower() == lowered:
            score += 100.0
        if score > 0:
            hits.append(SearchHit(name, round(score, 6)))
    hits.sort(key=lambda h: (-h.score, h.name))
    return hits


class Selection(NamedTuple):
    """What one ToolSearch call activates against a set of deferred tools (and what it could not)."""

    query: str
    chosen: tuple[str, ...]
    missing: tuple[str, ...] = ()


def select(args: JsonObject, tools: Sequence[ToolSpec]) -> Selection:
    """The names a call with ``args`` activates among ``tools``: the one rule both the tool and
    restoration use, so a journaled result can be checked against what the call could return
    (design A8)."""
    query = str(args.get("query", "")).strip()
    try:
        limit = max(1, int(args.get("max_results") or DEFAULT_MAX_RESULTS))
    except (TypeError, ValueError):
        limit = DEFAULT_MAX_RESULTS
    by_name = {spec.name: spec for spec in tools}
    if query.lower().startswith("select:"):
        wanted = [part.strip() for part in query[len("select:") :].split(",") if part.strip()]
        return Selection(
            query,
            tuple(dict.fromkeys(n for n in wanted if n in by_name)),
            tuple(n for n in wanted if n not in by_name),
        )
    return Selection(query, tuple(hit.name for hit in rank(query, list(by_name.values()))[:limit]))


def run(args: JsonObject, ctx: ToolContext) -> ToolOutcome:
    tools = {spec.name: spec for spec in ctx.deferred_tools}
    selection = select(args, ctx.deferred_tools)
    query = selection.query
    if not tools:
        return ToolOutcome.text(
            "No deferred tools are available in this session.", details={"query": query, "activated": []}
        )
    chosen, missing = list(selection.chosen), list(selection.missing)
    if not chosen:
        note = f" Unknown names: {', '.join(missing)}." if missing else ""
        return ToolOutcome.text(
            f"No deferred tools matched {query!r}.{note} Try other keywords.",
            details={"query": query, "activated": []},
        )
    lines = [f"Activated {len(chosen)} tool(s); you can call them now:"]
    lines += [f"- {name}: {tools[name].description}" for name in chosen]
    if missing:
        lines.append(f"Unknown names (not activated): {', '.join(missing)}")
    return ToolOutcome.text("\n".join(lines), details={"query": query, "activated": chosen})


def activated_names(result: JsonObject) -> list[str]:
    """The names a ToolSearch ``ToolResultMessage`` activated; empty unless it succeeded."""
    if result.get("role") != "toolResult" or result.get("toolName") != NAME or result.get("isError"):
        return []
    details = result.get("details")
    names = details.get("activated") if isinstance(details, dict) else None
    if not isinstance(names, list):
        return []
    return [name for name in names if isinstance(name, str)]


TOOL_SPEC = ToolSpec(NAME, DESCRIPTION, PARAMETERS, effect="read", runner=run)
