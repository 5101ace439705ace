"""Each provider's prompt-cache rules, as one pure module (design P6).

The window's Payload tab predicts the next request's cached tokens with them, and the "what
if" replay folds a whole session's requests through them onto other routes, both through the
one cache of ``desktop.pi.prompt_cache``. The loopback emulator has its own reading of the
providers' pages (design P11), so a prediction checked against its report is checked against
the documented behaviour. Plain data in, plain data out: no Qt, no files, no network, no clock.

How a request is read
    A request body is cut into :class:`Segment` s in the provider's *cache order* — the order
    in which the provider hashes the prompt, which is not the JSON key order of the body:

    * Anthropic Messages: tools -> system blocks -> message content blocks.
    * Bedrock Converse: ``toolConfig.tools`` -> ``system`` -> message content blocks; a
      ``{"cachePoint": ...}`` block marks the block before it as a breakpoint.
    * OpenAI chat completions (also DeepSeek, Mistral and every compatible relay): tools ->
      messages. OpenAI Responses (also Azure and Codex): tools -> ``instructions`` -> input
      items. Gemini (Google AI and Vertex): ``systemInstruction`` -> tools -> contents.

    Each segment is measured over a canonical text (sorted-key JSON without ``cache_control``
    markers): key order and cache markers are not something the model reads.

Token counting
    A deterministic stand-in for the providers' tokenizers: four characters per token
    (:func:`estimate_tokens`). Real tokenizers differ per provider; these counts are stable,
    monotonic in the text and cheap, so minimum lengths and 64/128-token steps can be checked
    exactly. Against a real provider, predictions are in these units (see ``cache_view``).

The rules (:data:`RULES`)
    ``anthropic`` / ``bedrock`` — explicit breakpoints (Anthropic "Prompt caching": cache
    order tools, system, messages; ``cache_control`` breakpoints; automatic prefix check over
    at most 20 blocks before each breakpoint; minimum cacheable prompt 1,024 tokens, 2,048 for
    Haiku 3/3.5, 4,096 for Opus 4.5+/Haiku 4.5; Bedrock "Prompt caching" with ``cachePoint``
    blocks, same model rules). Only prefixes ending at a breakpoint are written, and only
    when at least the minimum long. A breakpoint reads the longest cached prefix ending at it
    or at one of the 19 block boundaries before it. Usage: cache reads, cache writes (from
    the end of the read to the last breakpoint; ``ttl: "1h"`` writes reported apart) and the
    rest as fresh input. Exact: a prediction must equal the reported figures.

    ``openai`` / ``mistral`` — automatic prefix caching (OpenAI "Prompt caching": prompts of
    1,024 tokens or more, cache hits in 128-token increments, routed by a hash of the prefix
    and ``prompt_cache_key``). Every whole 128-token step at or past 1,024 tokens is stored;
    a request reads the longest stored prefix. The cache is partitioned by
    ``prompt_cache_key`` when one is sent. No write figure.

    ``deepseek`` — automatic prefix caching in 64-token units from the first unit (DeepSeek
    "Context caching": the cache is built in 64-token storage units; usage reports
    ``prompt_cache_hit_tokens``/``prompt_cache_miss_tokens``).

    ``google`` — implicit caching (Gemini API "Context caching", implicit): automatic prefix
    reuse with a minimum of 1,024 tokens (4,096 for Pro models), modelled like OpenAI's
    128-token steps. Explicit ``cachedContents`` are not modelled.

    ``none`` — an API whose cache behaviour is unknown (``pi-messages``): nothing is cached.

    Retention (``desktop.pi.cache_retention``, design P9): given the request's time
    (``now_ms``), an entry unused for longer than its rule's retention is gone, and each use
    (read or write) starts its window again. Without a time, entries never expire (the
    deterministic emulator and the preview's warm assumption).

The API, for its callers
    ``read_prompt(wire, family, body, model)`` / ``prompt_for_model(model, body)`` ->
    :class:`Prompt` (rule, namespace, segments). The cache that folds prompts by these rules
    is ``desktop.pi.prompt_cache.PromptCache``; it answers each request with a
    :class:`CacheUsage` (total, read, written, where the read prefix ends).
    :meth:`CacheUsage.pi_usage` and :meth:`CacheUsage.cost` give pi-ai's usage and cost.
    :func:`json_spans` turns segments' JSON paths into byte offsets of the body.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

import orjson

from desktop.pi.cache_retention import asks_long
from desktop.pi.cost import calculate_cost

CHARS_PER_TOKEN = 4
ANTHROPIC_LOOKBACK_BLOCKS = 20
#: Request fields that steer caching but are not prompt text.
_NOT_PROMPT = frozenset({"cache_control"})
_NOT_PROMPT_QUOTED = tuple(f'"{key}"'.encode() for key in _NOT_PROMPT)

Canon = Callable[..., str]
Wire = Literal["anthropic", "chat", "responses", "google", "bedrock", "none"]
Section = Literal["tools", "system", "messages"]
JsonPath = tuple[str | int, ...]

#: pi-ai API name -> the wire format its body uses.
WIRE_OF_API: dict[str, Wire] = {
    "anthropic-messages": "anthropic",
    "openai-completions": "chat",
    "mistral-conversations": "chat",
    "openai-responses": "responses",
    "azure-openai-responses": "responses",
    "openai-codex-responses": "responses",
    "google-generative-ai": "google",
    "google-vertex": "google",
    "bedrock-converse-stream": "bedrock",
    "pi-messages": "none",
}


# ---------------------------------------------------------------------------------------------
# Token counting and canonical text
# ---------------------------------------------------------------------------------------------


def estimate_tokens(text: str) -> int:
    """Four characters per token, rounded up (the emulator's and the preview's one count)."""
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in _NOT_PROMPT}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def canonical(value: Any, key: object = None) -> str:
    """One prompt part as the provider 'reads' it: sorted-key JSON without cache markers.

    ``key`` is the body's own object ``value`` was made from (a readers' wrapper such as
    ``{"tool": tool}``): a memoizing reader (:class:`CanonicalMemo`) remembers the text by it."""
    raw = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    # Most parts carry no marker: then stripping copies the value for nothing (a key to strip
    # always shows as its quoted name; a string equal to one only costs the copy).
    if not any(name in raw for name in _NOT_PROMPT_QUOTED):
        return raw.decode()
    return orjson.dumps(_strip(value), option=orjson.OPT_SORT_KEYS).decode()


class CanonicalMemo:
    """``canonical`` remembered by the identity of the body's objects.

    A replay reads thousands of requests whose message items are the same objects (the
    incremental projection shares the committed history), so each item is encoded once,
    not once per request. The memo keeps every object it saw alive, so an id is never reused
    while remembered; it must only see objects nobody mutates afterwards."""

    def __init__(self) -> None:
        self._memo: dict[tuple[int, int], tuple[object, str]] = {}
        self._items: dict[tuple[int, int, object], tuple[object, list[Segment]]] = {}

    def items(self, read: Callable[[int, Any, Canon], list[Segment]], items: Any) -> list[Segment]:
        """The segments of every item, each item read once per position."""
        memo = self._items
        out: list[Segment] = []
        for index, item in enumerate(items or ()):
            key = (id(item), index, read)
            hit = memo.get(key)
            if hit is None or hit[0] is not item:
                hit = (item, read(index, item, self))
                memo[key] = hit
            out.extend(hit[1])
        return out

    def __call__(self, value: Any, key: object = None) -> str:
        source = value if key is None else key
        if not isinstance(source, (dict, list)):
            return canonical(value)
        slot = (id(source), 0 if key is None else 1)
        hit = self._memo.get(slot)
        if hit is not None and hit[0] is source:
            return hit[1]
        text = canonical(value)
        self._memo[slot] = (source, text)
        return text


# ---------------------------------------------------------------------------------------------
# Rules
# ---------------------------------------------------------------------------------------------


def anthropic_min_tokens(model: str) -> int:
    """Minimum cacheable prompt length by model class (Anthropic's published table)."""
    name = model.lower()
    if any(tag in name for tag in ("opus-4-5", "opus-4-6", "opus-4.5", "haiku-4-5", "haiku-4.5")):
        return 4096
    if "haiku" in name:
        return 2048
    return 1024


@dataclass(frozen=True, slots=True)
class CacheRule:
    """One provider's cache mechanics."""

    name: str
    kind: Literal["breakpoints", "prefix", "none"]
    #: Prefix rules: the granularity of a cache hit in tokens; 0 for breakpoint rules.
    step_tokens: int
    #: The minimum cacheable length for models without their own minimum.
    min_tokens: int
    #: What the rule is, in the provider's terms (shown to the user).
    description: str

    def minimum(self, model: str) -> int:
        """The minimum cacheable prompt length for ``model``."""
        if self.kind == "breakpoints":
            return anthropic_min_tokens(model)
        if self.name == "google" and "pro" in model.lower():
            return 4096
        return self.min_tokens

    @property
    def tolerance(self) -> int:
        """How far a prediction may be from the reported figure: one cache unit (0 = exact)."""
        return self.step_tokens if self.kind == "prefix" else 0


RULES: dict[str, CacheRule] = {
    "anthropic": CacheRule(
        "anthropic",
        "breakpoints",
        0,
        1024,
        "explicit cache_control breakpoints; cache order tools, system, messages; 20-block lookback",
    ),
    "bedrock": CacheRule(
        "bedrock",
        "breakpoints",
        0,
        1024,
        "explicit cachePoint blocks; cache order tools, system, messages; 20-block lookback",
    ),
    "openai": CacheRule(
        "openai", "prefix", 128, 1024, "automatic prefix cache from 1,024 tokens in 128-token steps"
    ),
    "mistral": CacheRule(
        "mistral", "prefix", 128, 1024, "automatic prefix cache from 1,024 tokens in 128-token steps"
    ),
    "deepseek": CacheRule("deepseek", "prefix", 64, 64, "automatic prefix cache in 64-token units"),
    "google": CacheRule(
        "google",
        "prefix",
        128,
        1024,
        "implicit prefix cache from 1,024 tokens (4,096 for Pro), in 128-token steps",
    ),
    "none": CacheRule("none", "none", 0, 0, "no prompt cache is known for this API"),
}


def rule_for_wire(wire: str, family: str) -> CacheRule:
    """The rule for a body of ``wire`` format sent to provider ``family`` (the emulator's view)."""
    if wire in ("anthropic", "bedrock", "google"):
        return RULES[wire]
    if wire in ("chat", "responses"):
        return RULES[family] if family in ("deepseek", "mistral") else RULES["openai"]
    return RULES["none"]


def rule_for(api: str, provider: str) -> CacheRule:
    """The rule for a route: its pi-ai API and provider id."""
    return rule_for_wire(WIRE_OF_API.get(api, "none"), provider)


# ---------------------------------------------------------------------------------------------
# Reading a body in cache order
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Segment:
    """One cacheable piece of a prompt, in the provider's cache order.

    ``text`` is what is hashed and counted; ``path`` locates the piece in the body (for
    :func:`json_spans`); ``label`` names it for people ("tool 'read'", "message 4 (user)").
    """

    text: str
    section: Section
    label: str
    path: JsonPath
    #: Breakpoint rules: ``None``, ``"5m"`` or ``"1h"`` when the segment ends a cached prefix.
    breakpoint: str | None = None


def _cache_marker(value: Any, key: str = "cache_control") -> str | None:
    """The retention a cache marker (Anthropic's ``cache_control``, Bedrock's ``cachePoint``)
    on ``value`` asks for, or None without one."""
    marker = value.get(key) if isinstance(value, Mapping) else None
    if not isinstance(marker, Mapping):
        return None
    return "1h" if marker.get("ttl") == "1h" else "5m"


def _role(message: Any) -> str:
    return str(message.get("role", "")) if isinstance(message, Mapping) else ""


def _anthropic_segments(body: Mapping[str, Any], canon: Canon = canonical) -> list[Segment]:
    out: list[Segment] = []
    for i, tool in enumerate(body.get("tools") or ()):
        name = tool.get("name", "") if isinstance(tool, Mapping) else ""
        out.append(
            Segment("tool:" + canon(tool), "tools", f"tool '{name}'", ("tools", i), _cache_marker(tool))
        )
    system = body.get("system")
    if isinstance(system, str):
        block = {"type": "text", "text": system}
        out.append(Segment("system:" + canon(block), "system", "system prompt", ("system",)))
    else:
        for i, block in enumerate(system or ()):
            out.append(
                Segment(
                    "system:" + canon(block),
                    "system",
                    f"system block {i + 1}",
                    ("system", i),
                    _cache_marker(block),
                )
            )
    out.extend(_items(_anthropic_message, body.get("messages"), canon))
    return out


def _anthropic_message(m: int, message: Any, canon: Canon) -> list[Segment]:
    role = _role(message)
    content = message.get("content")
    if isinstance(content, str):
        text_block = {"type": "text", "text": content}
        label = f"message {m + 1} ({role})"
        return [
            Segment(f"{role}:" + canon(text_block, message), "messages", label, ("messages", m, "content"))
        ]
    return [
        Segment(
            f"{role}:" + canon(block),
            "messages",
            f"message {m + 1} ({role}), block {b + 1}",
            ("messages", m, "content", b),
            _cache_marker(block),
        )
        for b, block in enumerate(content or ())
    ]


def _items(read: Callable[[int, Any, Canon], list[Segment]], items: Any, canon: Canon) -> list[Segment]:
    """Each item's segments, remembered per item and position by a :class:`CanonicalMemo`."""
    if isinstance(canon, CanonicalMemo):
        return canon.items(read, items)
    out: list[Segment] = []
    for index, item in enumerate(items or ()):
        out.extend(read(index, item, canon))
    return out


def _tool_name(tool: Any) -> str:
    if not isinstance(tool, Mapping):
        return ""
    function = tool.get("function")
    source = function if isinstance(function, Mapping) else tool
    return str(source.get("name", ""))


def _chat_segments(body: Mapping[str, Any], canon: Canon = canonical) -> list[Segment]:
    out = [
        Segment(canon({"tool": tool}, tool), "tools", f"tool '{_tool_name(tool)}'", ("tools", i))
        for i, tool in enumerate(body.get("tools") or ())
    ]
    out.extend(_items(_chat_message, body.get("messages"), canon))
    return out


def _chat_message(i: int, message: Any, canon: Canon) -> list[Segment]:
    role = _role(message)
    section: Section = "system" if role in ("system", "developer") and i == 0 else "messages"
    return [Segment(canon(message), section, f"message {i + 1} ({role})", ("messages", i))]


def _responses_segments(body: Mapping[str, Any], canon: Canon = canonical) -> list[Segment]:
    out = [
        Segment(canon({"tool": tool}, tool), "tools", f"tool '{_tool_name(tool)}'", ("tools", i))
        for i, tool in enumerate(body.get("tools") or ())
    ]
    if body.get("instructions"):
        out.append(
            Segment(
                canonical({"instructions": body["instructions"]}), "system", "instructions", ("instructions",)
            )
        )
    items = body.get("input")
    if isinstance(items, str):
        message = {"role": "user", "content": items}
        out.append(Segment(canon(message), "messages", "input", ("input",)))
        return out
    out.extend(_items(_responses_item, items, canon))
    return out


def _responses_item(i: int, item: Any, canon: Canon) -> list[Segment]:
    role = _role(item) or str(item.get("type", "item") if isinstance(item, Mapping) else "item")
    section: Section = "system" if role in ("system", "developer") and i == 0 else "messages"
    return [Segment(canon(item), section, f"input item {i + 1} ({role})", ("input", i))]


def _google_segments(body: Mapping[str, Any], canon: Canon = canonical) -> list[Segment]:
    out: list[Segment] = []
    system = body.get("systemInstruction")
    if system:
        out.append(
            Segment(
                canonical({"systemInstruction": system}),
                "system",
                "system instruction",
                ("systemInstruction",),
            )
        )
    for i, tool in enumerate(body.get("tools") or ()):
        out.append(Segment(canon({"tool": tool}, tool), "tools", f"tool group {i + 1}", ("tools", i)))
    out.extend(_items(_google_content, body.get("contents"), canon))
    return out


def _google_content(i: int, content: Any, canon: Canon) -> list[Segment]:
    return [Segment(canon(content), "messages", f"content {i + 1} ({_role(content)})", ("contents", i))]


def _bedrock_add(
    out: list[Segment],
    section: Section,
    prefix: str,
    items: Any,
    path: JsonPath,
    label: Any,
    canon: Canon = canonical,
) -> None:
    """Append blocks; a ``cachePoint`` marks the block before it (in any section) as a breakpoint."""
    for i, item in enumerate(items or ()):
        ttl = _cache_marker(item, "cachePoint")
        if ttl is not None:
            if out and out[-1].breakpoint is None:
                last = out[-1]
                out[-1] = Segment(last.text, last.section, last.label, last.path, ttl)
            continue
        out.append(Segment(prefix + canon(item), section, label(i, item), (*path, i)))


def _bedrock_segments(body: Mapping[str, Any], canon: Canon = canonical) -> list[Segment]:
    out: list[Segment] = []
    tools = (body.get("toolConfig") or {}).get("tools") or []

    def tool_label(_i: int, tool: Any) -> str:
        spec = tool.get("toolSpec") if isinstance(tool, Mapping) else None
        return f"tool '{spec.get('name', '')}'" if isinstance(spec, Mapping) else "tool"

    _bedrock_add(out, "tools", "tool:", tools, ("toolConfig", "tools"), tool_label, canon)
    _bedrock_add(
        out,
        "system",
        "system:",
        body.get("system") or [],
        ("system",),
        lambda i, _b: f"system block {i + 1}",
        canon,
    )
    for m, message in enumerate(body.get("messages") or ()):
        role = _role(message)
        _bedrock_add(
            out,
            "messages",
            f"{role}:",
            message.get("content") or [],
            ("messages", m, "content"),
            lambda b, _b, m=m, role=role: f"message {m + 1} ({role}), block {b + 1}",
            canon,
        )
    return out


_READERS = {
    "anthropic": _anthropic_segments,
    "chat": _chat_segments,
    "responses": _responses_segments,
    "google": _google_segments,
    "bedrock": _bedrock_segments,
}


def segments(wire: str, body: Mapping[str, Any], canon: Canon = canonical) -> list[Segment]:
    """The body's prompt in the provider's cache order (empty for an unknown wire format)."""
    reader = _READERS.get(wire)
    return reader(body, canon) if reader is not None else []


@dataclass(frozen=True)
class Prompt:
    """One request as a cache sees it: its rule, its cache partition and its segments."""

    rule: CacheRule
    model: str
    #: The cache partition: model and (prefix rules) ``prompt_cache_key``; the emulator adds the family.
    namespace: str
    segments: tuple[Segment, ...]
    cache_key: str | None = None
    #: The body asks for long retention (``ttl: "1h"`` markers, ``prompt_cache_retention: "24h"``).
    long: bool = False

    @cached_property
    def text(self) -> str:
        """Prefix rules: the one canonical string the provider caches a prefix of."""
        return "".join(segment.text + "\n" for segment in self.segments)

    @cached_property
    def total_tokens(self) -> int:
        if self.rule.kind == "breakpoints":
            return sum(estimate_tokens(s.text) for s in self.segments)
        chars = sum(len(s.text) + 1 for s in self.segments)  # len(self.text), without joining it
        return max(1, (chars + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN)


def _body_model(wire: str, body: Mapping[str, Any], model: str) -> str:
    if wire in ("google", "bedrock"):
        return model  # these APIs name the model in the URL
    return str(body.get("model", "")) or model


def read_prompt(
    wire: str,
    family: str,
    body: Mapping[str, Any],
    model: str = "",
    *,
    canon: Canon = canonical,
) -> Prompt:
    """Read ``body`` (``wire`` format, sent to provider ``family``) as its cache sees it.

    ``model`` is the model id where the body does not carry one (Gemini, Bedrock: in the URL).
    """
    rule = rule_for_wire(wire, family)
    name = _body_model(wire, body, model)
    key = body.get("prompt_cache_key") if rule.kind == "prefix" else None
    cache_key = str(key) if isinstance(key, str) else None
    namespace = name if rule.kind == "breakpoints" else f"{name}:{cache_key or ''}"
    return Prompt(rule, name, namespace, tuple(segments(wire, body, canon)), cache_key, asks_long(body))


def prompt_for_model(model: Mapping[str, Any], body: Mapping[str, Any], canon: Canon = canonical) -> Prompt:
    """Read a request projected for a pi-ai ``Model`` (its ``api``, ``provider`` and ``id``)."""
    wire = WIRE_OF_API.get(str(model.get("api", "")), "none")
    return read_prompt(wire, str(model.get("provider", "")), body, str(model.get("id", "")), canon=canon)


# ---------------------------------------------------------------------------------------------
# Accounting
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CacheUsage:
    """Token accounting for one request: ``fresh + read + written == total``.

    ``read_segments`` segments lie wholly inside the cached prefix; prefix rules may also read
    ``read_chars`` characters of the canonical text, which can end inside the next segment.
    """

    total: int
    read: int
    written: int = 0
    written_1h: int = 0
    read_segments: int = 0
    read_chars: int = 0

    @property
    def fresh(self) -> int:
        return self.total - self.read - self.written

    def pi_usage(self, output: int = 0) -> dict[str, Any]:
        """pi-ai's ``Usage`` for this accounting (as every provider parser maps it)."""
        return {
            "input": self.fresh,
            "output": output,
            "cacheRead": self.read,
            "cacheWrite": self.written,
            "cacheWrite1h": self.written_1h,
            "totalTokens": self.total + output,
        }

    def cost(self, model: Mapping[str, Any], output: int = 0) -> dict[str, float]:
        """The cost at ``model``'s catalog prices (``desktop.pi.cost.calculate_cost``)."""
        return calculate_cost(model, self.pi_usage(output))


def shared_prefix(before: list[str], texts: list[str]) -> int:
    """How many leading parts ``texts`` repeats from ``before`` (the same string objects,
    or equal strings). A request that only adds to the previous one is found by one list
    comparison, which compares identical objects without reading them."""
    common = min(len(before), len(texts))
    if before[:common] == texts[:common]:
        return common
    n = 0
    for a, b in zip(before, texts, strict=False):
        if a is not b and a != b:
            break
        n += 1
    return n


# ---------------------------------------------------------------------------------------------
# Locating a segment in the body's bytes
# ---------------------------------------------------------------------------------------------


def _size(value: Any) -> int:
    return len(orjson.dumps(value))


def json_spans(body: Any, paths: Sequence[Sequence[str | int]]) -> list[tuple[int, int] | None]:
    """Byte offsets ``(start, end)`` of the value at each path in ``orjson.dumps(body)``, the
    bytes ``ProviderRequest.body_bytes`` sends (None where the path names nothing), in one pass per
    container: each container on the paths has its children encoded once, so the spans of
    every message of a 100,000-message body cost a few encodings of it, not one encoding of
    the preceding siblings per path (quadratic in the body's length)."""
    layouts: dict[tuple[str | int, ...], tuple[int, dict[str | int, tuple[int, Any]]]] = {}

    def layout(prefix: tuple[str | int, ...]) -> tuple[int, dict[str | int, tuple[int, Any]]] | None:
        """Where the value at ``prefix`` starts and, per child key, where the child starts."""
        found = layouts.get(prefix)
        if found is not None:
            return found
        if prefix:
            parent = layout(prefix[:-1])
            if parent is None or prefix[-1] not in parent[1]:
                return None
            start, value = parent[1][prefix[-1]]
        else:
            start, value = 0, body
        children: dict[str | int, tuple[int, Any]] = {}
        offset = start + 1  # "{" or "["
        if isinstance(value, Mapping):
            for key, item in value.items():
                head = _size(key) + 1  # "key":
                if key not in children:
                    children[key] = (offset + head, item)
                offset += head + _size(item) + 1  # ,
        elif isinstance(value, list):
            for index, item in enumerate(value):
                children[index] = (offset, item)
                offset += _size(item) + 1
        layouts[prefix] = (start, children)
        return layouts[prefix]

    spans: list[tuple[int, int] | None] = []
    for path in paths:
        steps = tuple(path)
        if not steps:
            spans.append((0, _size(body)))
            continue
        parent = layout(steps[:-1])
        child = parent[1].get(steps[-1]) if parent is not None else None
        if child is None:
            spans.append(None)
            continue
        start, value = child
        spans.append((start, start + _size(value)))
    return spans
