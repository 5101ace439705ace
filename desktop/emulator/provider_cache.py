"""The emulator's own provider-side prompt cache, written from the providers' documentation
(design P11).

The product predicts cached tokens with ``desktop.pi.cache_rules``; if the emulator answered
with that same module, a prediction checked against the emulator would be checked against
itself. So this module is written apart, from the providers' pages (cited per rule in
``docs/design.md``, P11), and imports nothing of the product's cache modules: a product rule
that drifts from the documented behaviour shows as a mismatch against the emulator.

What each provider documents, as modelled here
    Anthropic Messages / Bedrock Converse — explicit breakpoints. The prompt is cached in the
    order tools, system, messages; a ``cache_control`` block (Bedrock: the block before a
    ``cachePoint``) ends a cacheable prefix. A request reads the longest live prefix ending
    at a breakpoint or at one of the 19 block boundaries before it (the 20-block lookback),
    writes the prefix up to its last breakpoint when that is at least the model's minimum
    (1,024 tokens; 2,048 for Haiku 3/3.5; 4,096 for Opus 4.5+ and Haiku 4.5), and reports
    the tokens after the last breakpoint as plain input. Lifetime 5 minutes, 1 hour for a
    ``ttl: "1h"`` marker, refreshed each time the prefix is read.

    OpenAI (chat and Responses, also Azure, Codex) and Mistral — automatic prefix caching for
    prompts of 1,024 tokens or more, hits in 128-token increments. In-memory retention: 5 to
    10 minutes of inactivity (the emulator keeps :data:`OPENAI_IN_MEMORY_S`, the documented
    lower bound); ``prompt_cache_retention: "24h"`` asks for extended retention (24 hours).
    ``prompt_cache_key`` partitions the cache.

    DeepSeek — context caching on disk in 64-token storage units; cleared "within a few hours
    to a few days" (the emulator keeps one hour).

    Gemini (Google AI, Vertex) — implicit caching from 1,024 tokens (4,096 for Pro models), in
    the order system instruction, tools, contents; retention not published (5 minutes kept).

Token count
    The emulator's stand-in tokenizer: four characters of a block's canonical text (sorted
    JSON without cache markers, prefixed by its place) per token. It is a convention the
    emulator states, not a provider's tokenizer; against real providers the product
    calibrates its counts from the reported usage.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import orjson

CHARS_PER_TOKEN = 4
LOOKBACK_BLOCKS = 20
FIVE_MINUTES_S = 5 * 60
ONE_HOUR_S = 60 * 60
OPENAI_IN_MEMORY_S = 5 * 60
OPENAI_EXTENDED_S = 24 * 60 * 60
DEEPSEEK_S = 60 * 60
GOOGLE_S = 5 * 60

Kind = Literal["breakpoints", "prefix", "none"]


def count_tokens(text: str) -> int:
    """The emulator's tokenizer: four characters per token, rounded up."""
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def canonical(value: Any) -> str:
    """A block as the model reads it: sorted-key JSON, cache markers left out."""
    return orjson.dumps(_strip(value), option=orjson.OPT_SORT_KEYS).decode()


@dataclass(frozen=True, slots=True)
class Block:
    """One piece of the prompt in the provider's cache order; ``ttl`` marks a breakpoint."""

    text: str
    ttl: str | None = None


@dataclass(frozen=True, slots=True)
class Usage:
    """What the provider reports for one request: ``fresh + read + written == total``."""

    total: int
    read: int
    written: int = 0
    written_1h: int = 0

    @property
    def fresh(self) -> int:
        return self.total - self.read - self.written


@dataclass(frozen=True, slots=True)
class Policy:
    """One provider's documented cache mechanics."""

    name: str
    kind: Kind
    #: Prefix caches: tokens per cache unit; the minimum cacheable prompt.
    step: int = 0
    minimum: int = 0
    #: Seconds an unused entry lives, short and (when the request asks) long.
    short_s: int = 0
    long_s: int = 0

    def min_tokens(self, model: str) -> int:
        name = model.lower()
        if self.kind == "breakpoints":
            if any(t in name for t in ("opus-4-5", "opus-4-6", "opus-4.5", "haiku-4-5", "haiku-4.5")):
                return 4096
            return 2048 if "haiku" in name else 1024
        if self.name == "google" and "pro" in name:
            return 4096
        return self.minimum


POLICIES: dict[str, Policy] = {
    "anthropic": Policy("anthropic", "breakpoints", short_s=FIVE_MINUTES_S, long_s=ONE_HOUR_S),
    "bedrock": Policy("bedrock", "breakpoints", short_s=FIVE_MINUTES_S, long_s=ONE_HOUR_S),
    "openai": Policy("openai", "prefix", 128, 1024, OPENAI_IN_MEMORY_S, OPENAI_EXTENDED_S),
    "mistral": Policy("mistral", "prefix", 128, 1024, FIVE_MINUTES_S, FIVE_MINUTES_S),
    "deepseek": Policy("deepseek", "prefix", 64, 64, DEEPSEEK_S, DEEPSEEK_S),
    "google": Policy("google", "prefix", 128, 1024, GOOGLE_S, GOOGLE_S),
    "none": Policy("none", "none"),
}


def policy_for(wire: str, family: str) -> Policy:
    """The policy of a body of ``wire`` format sent to provider ``family``."""
    if wire in ("anthropic", "bedrock", "google"):
        return POLICIES[wire]
    if wire in ("chat", "responses"):
        return POLICIES[family] if family in ("deepseek", "mistral") else POLICIES["openai"]
    return POLICIES["none"]


# -- reading a body in cache order ---------------------------------------------------------------


def _marker(value: Any, key: str = "cache_control") -> str | None:
    marker = value.get(key) if isinstance(value, Mapping) else None
    if not isinstance(marker, Mapping):
        return None
    return "1h" if marker.get("ttl") == "1h" else "5m"


def _anthropic(body: Mapping[str, Any]) -> list[Block]:
    out = [Block("tool:" + canonical(t), _marker(t)) for t in body.get("tools") or ()]
    system = body.get("system")
    if isinstance(system, str):
        system = [{"type": "text", "text": system}]
    out += [Block("system:" + canonical(b), _marker(b)) for b in system or ()]
    for message in body.get("messages") or ():
        role = str(message.get("role", ""))
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        out += [Block(f"{role}:" + canonical(b), _marker(b)) for b in content or ()]
    return out


def _bedrock(body: Mapping[str, Any]) -> list[Block]:
    out: list[Block] = []

    def add(prefix: str, items: Any) -> None:
        for item in items or ():
            point = _marker(item, "cachePoint")
            if point is not None:
                if out and out[-1].ttl is None:
                    out[-1] = Block(out[-1].text, point)
                continue
            out.append(Block(prefix + canonical(item)))

    add("tool:", (body.get("toolConfig") or {}).get("tools"))
    add("system:", body.get("system"))
    for message in body.get("messages") or ():
        add(f"{message.get('role', '')}:", message.get("content"))
    return out


def _tools(body: Mapping[str, Any]) -> list[Block]:
    return [Block(canonical({"tool": tool})) for tool in body.get("tools") or ()]


def _chat(body: Mapping[str, Any]) -> list[Block]:
    return _tools(body) + [Block(canonical(m)) for m in body.get("messages") or ()]


def _responses(body: Mapping[str, Any]) -> list[Block]:
    out = _tools(body)
    if body.get("instructions"):
        out.append(Block(canonical({"instructions": body["instructions"]})))
    items = body.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    return out + [Block(canonical(item)) for item in items or ()]


def _google(body: Mapping[str, Any]) -> list[Block]:
    out: list[Block] = []
    if body.get("systemInstruction"):
        out.append(Block(canonical({"systemInstruction": body["systemInstruction"]})))
    out += _tools(body)
    return out + [Block(canonical(c)) for c in body.get("contents") or ()]


_READERS = {
    "anthropic": _anthropic,
    "bedrock": _bedrock,
    "chat": _chat,
    "responses": _responses,
    "google": _google,
}


def blocks_of(wire: str, body: Mapping[str, Any]) -> list[Block]:
    """The body's prompt in the provider's cache order."""
    return _READERS[wire](body)


def asks_long_retention(body: Mapping[str, Any]) -> bool:
    """Whether a prefix-cache request asks for extended retention."""
    return body.get("prompt_cache_retention") == "24h"


# -- the cache ------------------------------------------------------------------------------------


def _chain(previous: bytes, text: str) -> bytes:
    return hashlib.blake2b(previous + text.encode(), digest_size=16).digest()


class ProviderCache:
    """Every provider's cache entries, keyed by (policy, partition, prefix digest).

    ``send`` is one request reaching the provider at ``now_ms`` (Unix ms; ``None`` never
    expires anything): it reads what is live, then stores and refreshes. Thread-safe."""

    def __init__(self) -> None:
        #: entry -> (last use in ms or None, lifetime in seconds)
        self._entries: dict[tuple[str, str, bytes], tuple[int | None, int]] = {}
        self._lock = threading.Lock()

    def _live(self, key: tuple[str, str, bytes], now: int | None) -> bool:
        entry = self._entries.get(key)
        if entry is None:
            return False
        used, life = entry
        return now is None or used is None or now - used < life * 1000

    def send(
        self,
        policy: Policy,
        partition: str,
        model: str,
        blocks: list[Block],
        now_ms: int | None,
        *,
        long: bool = False,
    ) -> Usage:
        with self._lock:
            if policy.kind == "breakpoints":
                return self._breakpoints(policy, partition, model, blocks, now_ms)
            if policy.kind == "prefix":
                return self._prefix(policy, partition, model, blocks, now_ms, long)
            return Usage(total=sum(count_tokens(b.text) for b in blocks), read=0)

    def _breakpoints(
        self, policy: Policy, partition: str, model: str, blocks: list[Block], now: int | None
    ) -> Usage:
        digests: list[bytes] = []
        sums: list[int] = []
        digest, tokens = b"", 0
        for block in blocks:
            digest = _chain(digest, block.text)
            tokens += count_tokens(block.text)
            digests.append(digest)
            sums.append(tokens)
        marks = [i for i, block in enumerate(blocks) if block.ttl]
        read_at = -1
        for p in marks:
            for q in range(p, max(-1, p - LOOKBACK_BLOCKS), -1):
                if self._live((policy.name, partition, digests[q]), now):
                    read_at = max(read_at, q)
                    break
        read = sums[read_at] if read_at >= 0 else 0
        minimum = policy.min_tokens(model)
        written = written_1h = 0
        if marks and marks[-1] > read_at and sums[marks[-1]] >= minimum:
            written = sums[marks[-1]] - read
            written_1h = written if blocks[marks[-1]].ttl == "1h" else 0
        if read_at >= 0:  # reading refreshes the entry's lifetime
            key = (policy.name, partition, digests[read_at])
            self._entries[key] = (now, self._entries[key][1])
        for p in marks:
            if sums[p] < minimum:
                continue
            key = (policy.name, partition, digests[p])
            life = policy.long_s if blocks[p].ttl == "1h" else policy.short_s
            old = self._entries.get(key)
            if old is not None and self._live(key, now):
                life = max(life, old[1])
            self._entries[key] = (now, life)
        return Usage(total=tokens, read=read, written=written, written_1h=written_1h)

    def _prefix(
        self,
        policy: Policy,
        partition: str,
        model: str,
        blocks: list[Block],
        now: int | None,
        long: bool,
    ) -> Usage:
        text = "".join(block.text + "\n" for block in blocks)
        total = max(1, count_tokens(text))
        unit = policy.step * CHARS_PER_TOKEN
        minimum = policy.min_tokens(model)
        units: list[bytes] = []
        digest = b""
        for end in range(unit, len(text) + 1, unit):
            digest = _chain(digest, text[end - unit : end])
            units.append(digest)
        read = 0
        for c in range(len(units) - 1, -1, -1):
            if (c + 1) * policy.step < minimum:
                break
            if self._live((policy.name, partition, units[c]), now):
                read = (c + 1) * policy.step
                break
        life = policy.long_s if long else policy.short_s
        for c, unit_digest in enumerate(units):
            if (c + 1) * policy.step >= minimum:
                self._entries[(policy.name, partition, unit_digest)] = (now, life)
        return Usage(total=total, read=read)
