"""The cache view: the next request's prompt-cache figures in the provider's terms (design P6, G4).

A byte prefix of the JSON body is not what providers cache: Anthropic caches tools, then
system, then messages, up to a ``cache_control`` breakpoint; OpenAI and Mistral cache a token
prefix in 128-token steps, DeepSeek in 64-token units, Google implicitly. So the preview asks
the one prompt cache (:mod:`desktop.pi.prompt_cache`, over the rules of
:mod:`desktop.pi.cache_rules`; the what-if replay folds with the same) what the provider will do
with the next request, given the requests the session already sent.

The API (pure, no Qt, no files; the Payload tab and the tests call it):

* :func:`predict` ``(model, body, previous)`` -> :class:`CachePrediction`: cached (read),
  written and uncached input tokens, the input cost at the model's prices, which part of the
  request in cache order the cached prefix ends with, the byte offset in the body where it
  ends (``marker_byte``, for the highlighted marker), and why it ends there (the first
  section, tool or message that differs from the previous requests, a breakpoint, the
  provider's cache unit or minimum length).
* :func:`check` ``(prediction, usage)`` -> :class:`CacheCheck`: the prediction against the
  usage the provider reported after the request (pi-ai ``Usage``: ``input``, ``cacheRead``,
  ``cacheWrite``). Breakpoint rules must match exactly, prefix rules within one cache unit
  (OpenAI 128, DeepSeek 64 tokens); ``mismatch`` says what differed.

Figures are in the rules module's token units (four characters per token), the emulator's
units. When the provider counted a different total (a real tokenizer), :func:`check` scales
the prediction to the reported total before comparing, and allows 1% of the total on top of
the rule's unit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from desktop.pi.cache_rules import CacheRule, CacheUsage, Prompt, json_spans, prompt_for_model, shared_prefix
from desktop.pi.prompt_cache import PromptCache

Body = bytes | Mapping[str, Any]


@dataclass(frozen=True)
class CachePrediction:
    """What the provider is predicted to read from its cache for one request."""

    rule: CacheRule
    #: Input tokens of the whole prompt, cached (read), written to the cache and uncached.
    total: int
    cached: int
    written: int
    uncached: int
    #: Input cost at the model's catalog prices (``input``, ``cacheRead``, ``cacheWrite``, ``total``).
    cost: Mapping[str, float]
    #: The part of the request (in cache order) the cached prefix ends with, or ``None``.
    ends_after: str | None
    #: Byte offset in the body where the cached prefix ends (0: nothing cached), for the marker.
    marker_byte: int
    #: A prefix rule read into the next part too (up to a cache unit): its label.
    partial: str | None
    #: Why the cached prefix ends where it does, in the provider's terms.
    why: str
    #: The first part that differs from the previous requests (``None``: everything matched).
    first_change: str | None = None
    usage: CacheUsage = field(default_factory=lambda: CacheUsage(0, 0))

    @property
    def tolerance(self) -> int:
        """How far reported usage may be from this prediction (0 = exact)."""
        return self.rule.tolerance

    def summary(self) -> str:
        """One line for people: the figures, then where and why."""
        share = self.cached / self.total if self.total else 0.0
        written = f", {self.written:,} written to the cache" if self.written else ""
        return (
            f"{self.cached:,} of {self.total:,} input tokens predicted from cache ({share:.0%}), "
            f"{self.uncached:,} uncached{written}; input cost ${self.cost.get('total', 0.0):.4f}. {self.why}"
        )


@dataclass(frozen=True)
class CacheCheck:
    """A prediction compared with the usage the provider reported."""

    ok: bool
    #: Empty when ``ok``; otherwise what differed, with both figures.
    mismatch: str
    predicted_cached: int
    tolerance: int


def _decode(body: Body) -> Mapping[str, Any]:
    if isinstance(body, (bytes, bytearray)):
        value = orjson.loads(body)
        if not isinstance(value, Mapping):
            raise ValueError("a request body is a JSON object")
        return value
    return body


def _first_change(prompt: Prompt, previous: Sequence[Prompt]) -> tuple[int, Prompt | None]:
    """The index of the first segment no previous request shares, and the request sharing most."""
    best, best_prompt = -1, None
    texts = [s.text for s in prompt.segments]
    for earlier in reversed(previous):
        if earlier.namespace != prompt.namespace:
            continue
        shared = shared_prefix([s.text for s in earlier.segments], texts)
        if shared > best:
            best, best_prompt = shared, earlier
    return max(best, 0), best_prompt


def _change_text(prompt: Prompt, index: int, earlier: Prompt | None) -> str | None:
    if earlier is None or index >= len(prompt.segments):
        return None
    segment = prompt.segments[index]
    verb = "changed" if index < len(earlier.segments) else "is new"
    return f"{segment.label} ({segment.section}) {verb} since the previous request"


def _why(prompt: Prompt, usage: CacheUsage, change: int, earlier: Prompt | None, has_previous: bool) -> str:
    rule = prompt.rule
    minimum = rule.minimum(prompt.model)
    if rule.kind == "none":
        return "No prompt cache is known for this API: every input token is uncached."
    changed = _change_text(prompt, change, earlier)
    if not has_previous or earlier is None:
        if rule.kind == "breakpoints" and usage.written:
            return "No earlier request on this route in this session: the prefix up to the last breakpoint is written to the cache."
        return "No earlier request on this route in this session: nothing is cached yet."
    if rule.kind == "breakpoints":
        if usage.read == 0:
            if not any(s.breakpoint for s in prompt.segments):
                return "The request carries no cache breakpoint (cache_control), so nothing is read from the cache."
            if change == 0:
                return f"Nothing is read: {changed}, the very first part in cache order (tools, system, messages)."
            return (
                "Nothing is read: no prefix ending at a breakpoint (or up to 20 blocks before one) "
                f"is cached{' or at least ' + format(minimum, ',') + ' tokens long' if minimum else ''}"
                f"{'; ' + changed if changed else ''}."
            )
        end = prompt.segments[usage.read_segments - 1]
        if changed is None:
            return f"The whole prompt up to the breakpoint after {end.label} is cached; nothing changed."
        if usage.read_segments == change:
            return f"The cached prefix ends after {end.label} because {changed}."
        return (
            f"{changed}; the cache is read only up to a prefix written at an earlier breakpoint, "
            f"which ends after {end.label}."
        )
    unit = rule.step_tokens
    if usage.read == 0:
        if prompt.total_tokens < minimum:
            return f"The prompt is {prompt.total_tokens:,} tokens, below the provider's minimum of {minimum:,} for caching."
        if changed is not None:
            shared = sum(len(s.text) + 1 for s in prompt.segments[:change]) // 4
            return (
                f"Nothing is read: {changed}, and the unchanged prefix before it ({shared:,} tokens) "
                f"is shorter than the minimum of {minimum:,} tokens."
            )
        return "Nothing is read from the cache."
    where = "the cached prefix ends in " + (
        prompt.segments[usage.read_segments].label
        if usage.read_segments < len(prompt.segments)
        else prompt.segments[-1].label
    )
    if changed is None:
        return f"The prompt is unchanged; {where}, at the last whole {unit}-token cache unit."
    return f"{changed}; {where}, rounded down to a whole {unit}-token cache unit before it."


def _marker(body: Mapping[str, Any], prompt: Prompt, whole: int) -> int:
    """The byte offset where the last wholly cached segment ends in ``orjson.dumps(body)``."""
    if whole <= 0:
        return 0
    spans = json_spans(body, [segment.path for segment in prompt.segments[:whole]])
    return max((span[1] for span in spans if span is not None), default=0)


def prompts(model: Mapping[str, Any], bodies: Sequence[Body]) -> list[Prompt]:
    """Each body read as the model's provider caches it."""
    return [prompt_for_model(model, _decode(body)) for body in bodies]


def predict(
    model: Mapping[str, Any],
    body: Body,
    previous: Sequence[Body] = (),
    *,
    cache: PromptCache | None = None,
    now_ms: int | None = None,
) -> CachePrediction:
    """Predict the provider's cache usage for ``body`` after the session sent ``previous``.

    ``model`` is the route's pi-ai model (``api``, ``provider``, ``id``, ``cost``). ``previous``
    are the bodies this session sent before, oldest first, on the same route (a provider cache
    starts cold). ``cache`` is an already-fed cache instead (it is only read, never fed);
    ``now_ms`` is when the request is sent, for a cache fed with times (design P9).
    """
    decoded = _decode(body)
    prompt = prompt_for_model(model, decoded)
    earlier = prompts(model, previous)
    state = cache if cache is not None else PromptCache()
    if cache is None:
        for item in earlier:
            state.send(item)
    usage = state.predict(prompt, now_ms)
    change, sharing = _first_change(prompt, earlier)
    whole = usage.read_segments
    partial = None
    if prompt.rule.kind == "prefix" and whole < len(prompt.segments):
        consumed = sum(len(s.text) + 1 for s in prompt.segments[:whole])
        if usage.read_chars > consumed:
            partial = prompt.segments[whole].label
    last = prompt.segments[whole - 1] if whole > 0 else None
    return CachePrediction(
        rule=prompt.rule,
        total=usage.total,
        cached=usage.read,
        written=usage.written,
        uncached=usage.fresh,
        cost=usage.cost(model),
        ends_after=last.label if last is not None else None,
        marker_byte=_marker(decoded, prompt, whole),
        partial=partial,
        why=_why(prompt, usage, change, sharing, bool(earlier) or cache is not None),
        first_change=_change_text(prompt, change, sharing),
        usage=usage,
    )


def check(prediction: CachePrediction, usage: Mapping[str, Any]) -> CacheCheck:
    """Compare ``prediction`` with the ``usage`` the provider reported for the same request."""
    read = int(usage.get("cacheRead") or 0)
    write = int(usage.get("cacheWrite") or 0)
    fresh = int(usage.get("input") or 0)
    total = fresh + read + write
    rule = prediction.rule
    scale = total / prediction.total if prediction.total and total and total != prediction.total else 1.0
    cached = round(prediction.cached * scale)
    written = round(prediction.written * scale)
    tolerance = rule.tolerance + (total // 100 if scale != 1.0 else 0)
    problems: list[str] = []
    if abs(cached - read) > tolerance:
        unit = "exactly" if tolerance == 0 else f"within {tolerance:,} tokens"
        problems.append(f"predicted {cached:,} cached tokens, the provider read {read:,} (must match {unit})")
    if rule.kind == "breakpoints" and abs(written - write) > tolerance:
        problems.append(f"predicted {written:,} tokens written to the cache, the provider wrote {write:,}")
    if scale == 1.0 and rule.kind == "breakpoints" and fresh != prediction.uncached:
        problems.append(f"predicted {prediction.uncached:,} uncached tokens, the provider reported {fresh:,}")
    return CacheCheck(not problems, "; ".join(problems), cached, tolerance)
