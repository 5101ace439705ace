"""Why a request read less from the cache than a warm cache would give (design P10).

A *miss* is a request on a route whose cache read falls short of what the previous request on
that route left in the cache (its read plus its write for breakpoint rules; its whole prompt,
rounded down to the cache unit, for prefix rules), by more than one cache unit. Each miss gets
one cause from the closed set Claude Code reports, checked in this order:

* ``model_changed`` — the request before it went to another model;
* ``tools_changed`` / ``system_prompt_changed`` / ``messages_rewritten`` — a compaction, tool
  change or system update since the previous reply on the route, with its place (section,
  tool, message index);
* ``ttl_expired_5m`` / ``ttl_expired_1h`` — the idle time passed the retention (P9);
* ``likely_server_side`` — the prefix and the time say warm, the provider read less;
* ``unknown`` — nothing recorded tells (no time).

:func:`transcript_summary` reads only the transcript (the replies' reported usage and the
system updates, compactions and model switches between them), for ``status``, the Usage panel
and ``chat --jsonl``. Pure: no clock, no files.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from desktop.pi.cache_retention import Retention, retention_for
from desktop.pi.cache_rules import CacheRule, rule_for
from desktop.pi.cost import usage_count

Cause = Literal[
    "system_prompt_changed",
    "tools_changed",
    "model_changed",
    "messages_rewritten",
    "ttl_expired_5m",
    "ttl_expired_1h",
    "likely_server_side",
    "unknown",
]


@dataclass(frozen=True)
class Miss:
    """One request that read less than a warm cache would give, and why."""

    cause: Cause
    #: Where the cause is (``section``, ``label``, ``tool``, ``message``).
    place: Mapping[str, Any] = field(default_factory=dict)
    #: Tokens the previous request left in the cache that this one processed again.
    recached: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"cause": self.cause, "place": dict(self.place), "recachedTokens": self.recached}


def held(prompt_total: int, read: int, written: int, kind: str, step: int, minimum: int) -> int:
    """What a request left in its provider's cache, in tokens."""
    if kind == "breakpoints":
        return read + written
    if kind == "prefix":
        whole = prompt_total - prompt_total % step if step else prompt_total
        return whole if whole >= minimum else 0
    return 0


def _expired(gap_s: float | None, retention: Retention) -> Cause | None:
    if gap_s is None or retention.ttl_s <= 0 or gap_s < retention.ttl_s:
        return None
    return "ttl_expired_1h" if retention.ttl_s >= 3600 else "ttl_expired_5m"


# --- the transcript's figures ------------------------------------------------------------------


@dataclass
class Summary:
    """A session's cache figures from its replies' reported usage."""

    input_tokens: int = 0
    cache_reads: int = 0
    misses: list[tuple[int, Miss]] = field(default_factory=list)

    @property
    def hit_ratio(self) -> float:
        return self.cache_reads / self.input_tokens if self.input_tokens else 0.0

    @property
    def recached(self) -> int:
        return sum(miss.recached for _, miss in self.misses)

    def to_json(self) -> dict[str, Any]:
        return {
            "hitRatio": round(self.hit_ratio, 4),
            "misses": len(self.misses),
            "recachedTokens": self.recached,
            "causes": dict(Counter(miss.cause for _, miss in self.misses)),
            "missList": [{"message": index, **miss.to_json()} for index, miss in self.misses],
        }


@functools.cache
def _rule_named(api: str, provider: str) -> CacheRule:
    """The cache rule of a route, once per route: a long transcript asks it for every reply."""
    return rule_for(api, provider)


def transcript_summary(messages: Sequence[Any]) -> Summary:
    """Hit ratio, misses (with causes) and re-cached tokens from a transcript's replies.

    Between two replies on the same route, a system message that changes tools or sections,
    or a rewritten history (fewer messages than before, a compaction), names the cause; a
    reply recorded on another model in between is ``model_changed``; otherwise the idle time
    against the retention, then ``likely_server_side`` (the usage is the provider's)."""
    summary = Summary()
    last: dict[tuple[Any, Any, Any], tuple[int, Mapping[str, Any], int]] = {}
    previous_model: tuple[Any, Any] | None = None
    since: list[tuple[int, Mapping[str, Any]]] = []
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping):
            continue
        role = message.get("role")
        if role != "assistant":
            if role == "system" or message.get("type") == "compaction" or role == "compactionSummary":
                since.append((index, message))
            continue
        usage = message.get("usage")
        usage = usage if isinstance(usage, Mapping) else {}
        read, write, fresh = (
            usage_count(usage, "cacheRead"),
            usage_count(usage, "cacheWrite"),
            usage_count(usage, "input"),
        )
        summary.input_tokens += read + write + fresh
        summary.cache_reads += read
        key = (message.get("provider"), message.get("model"), message.get("api"))
        cache_rule = _rule_named(str(message.get("api", "")), str(message.get("provider", "")))
        rule = cache_rule.name
        before = last.get(key)
        if before is not None:
            _before_index, before_usage, before_stamp = before
            b_read, b_write = usage_count(before_usage, "cacheRead"), usage_count(before_usage, "cacheWrite")
            b_total = b_read + b_write + usage_count(before_usage, "input")
            was_held = held(b_total, b_read, b_write, cache_rule.kind, cache_rule.step_tokens, 0)
            if was_held and read + max(cache_rule.tolerance, 1) < was_held:
                cause, place = _transcript_cause(
                    since, previous_model, (key[0], key[1]), before_stamp, message, rule
                )
                reported = _reported_reason(message)
                if reported is not None:  # the agent's own cause, beside ours (Claude Code)
                    place = {**place, "reported": reported}
                summary.misses.append((index, Miss(cause, place, was_held - read)))
        stamp = message.get("timestamp")
        last[key] = (index, usage, stamp if isinstance(stamp, int) and not isinstance(stamp, bool) else -1)
        previous_model = (key[0], key[1])
        since = []
    return summary


def _transcript_cause(
    since: Sequence[tuple[int, Mapping[str, Any]]],
    previous_model: tuple[Any, Any] | None,
    model: tuple[Any, Any],
    before_stamp: int,
    message: Mapping[str, Any],
    rule: str,
) -> tuple[Cause, dict[str, Any]]:
    if previous_model is not None and previous_model != model:
        return "model_changed", {"from": f"{previous_model[0]}/{previous_model[1]}"}
    for index, update in since:
        if update.get("role") == "compactionSummary" or update.get("type") == "compaction":
            return "messages_rewritten", {"section": "messages", "message": index}
    for index, update in since:
        tools = [*(update.get("toolsAdded") or ()), *(update.get("toolsRemoved") or ())]
        if tools:
            first = tools[0]
            name = first.get("name") if isinstance(first, Mapping) else first
            return "tools_changed", {"section": "tools", "tool": str(name), "message": index}
        sections = update.get("sections")
        if (isinstance(sections, Mapping) and sections) or update.get("content"):
            names = sorted(sections) if isinstance(sections, Mapping) else []
            return "system_prompt_changed", {"section": "system", "label": ", ".join(names), "message": index}
    stamp = message.get("timestamp")
    if isinstance(stamp, int) and not isinstance(stamp, bool) and before_stamp >= 0 and stamp >= before_stamp:
        expired = _expired((stamp - before_stamp) / 1000, retention_for(rule))
        if expired is not None:
            return expired, {"idleSeconds": round((stamp - before_stamp) / 1000, 1)}
        return "likely_server_side", {}
    return "unknown", {}


def _reported_reason(message: Mapping[str, Any]) -> str | None:
    """The cache-miss cause the recording agent wrote (Claude Code's
    ``message.diagnostics.cache_miss_reason``, kept by its reader as ``cacheMissReason``)."""
    for item in message.get("diagnostics") or ():
        if isinstance(item, Mapping) and isinstance(item.get("cacheMissReason"), str):
            return str(item["cacheMissReason"])
    return None


@dataclass
class MissCounter:
    """Misses counted from reported usage alone, one reply at a time (the Usage tab's lines:
    model, time and the input, cache read and cache write figures). A model whose replies
    report cache writes is read as a breakpoint cache (what was read plus written is held);
    otherwise as a prefix cache (the whole prompt is held, less one 128-token unit). Causes:
    ``model_changed``, ``ttl_expired_5m`` past five idle minutes, else ``likely_server_side``."""

    misses: int = 0
    recached: int = 0
    causes: dict[str, int] = field(default_factory=dict)
    _last: dict[str, tuple[int, int, int, int]] = field(default_factory=dict)
    _writes: set[str] = field(default_factory=set)
    _previous_model: str | None = None

    def add(self, model: str, ts: int, fresh: int, read: int, write: int) -> None:
        if write:
            self._writes.add(model)
        before = self._last.get(model)
        if before is not None:
            b_fresh, b_read, b_write, b_ts = before
            held = b_read + b_write if model in self._writes else max(0, b_fresh + b_read + b_write - 128)
            if held and read < held:
                cause: Cause = "likely_server_side"
                if self._previous_model is not None and self._previous_model != model:
                    cause = "model_changed"
                elif ts and b_ts and ts - b_ts >= retention_for("anthropic").ttl_s * 1000:
                    cause = "ttl_expired_5m"
                self.misses += 1
                self.recached += held - read
                self.causes[cause] = self.causes.get(cause, 0) + 1
        self._last[model] = (fresh, read, write, ts)
        self._previous_model = model

    def text(self) -> str:
        """ "2 misses (ttl_expired_5m 1, model_changed 1), 12,400 tokens re-cached"."""
        if not self.misses:
            return "no cache misses"
        causes = ", ".join(f"{name} {count}" for name, count in sorted(self.causes.items()))
        return f"{self.misses} cache miss{'es' if self.misses != 1 else ''} ({causes}), {self.recached:,} tokens re-cached"
