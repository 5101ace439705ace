"""The emulator's scripted model: a deterministic reply derived from the conversation.

Conventions (checked in this order):

1. **Tool results.** When the request ends with tool results, the reply is one text
   block: ``Tool NAME returned: TEXT`` per result (text cut to 200 characters).
2. **Summaries.** A compaction/summarization request gets a structured summary in
   pi-coding-agent's checkpoint format (``## Goal`` ... ``## Critical Context``). It is
   recognized by any of: the system prompt contains "summarization assistant"; the last
   user text contains "<conversation>", "context checkpoint summary", "<previous-summary>"
   or the marker ``[[summarize]]``.
3. **Tool calls.** Every ``[[tool:NAME]]`` or ``[[tool:NAME {json arguments}]]`` marker in
   the last user text becomes one call (several markers: parallel calls, in order).
   The name need not be declared, so tests can exercise unknown-tool handling.
4. **Tool search.** ``[[search:QUERY]]``, or the phrase "search tools for QUERY", calls the
   declared ToolSearch-like tool (a declared name equal to ``ToolSearch``/``tool_search``,
   any case; ``ToolSearch`` if none is declared) with ``{"query": QUERY}`` (or the
   schema's first required string property).
5. **Echo.** Otherwise: ``Echo: TEXT`` where TEXT is the last user text without markers
   (cut to 400 characters), or ``Hello from the emulator.`` when there is none.

Modifiers anywhere in the last user text: ``[[think]]`` streams a thinking block first,
``[[words:N]]`` appends N generated words (long answers for benchmarks), ``[[length]]``
stops as if the output limit was hit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import orjson

from desktop.emulator.conversation import Conversation

_TOOL_MARKER = re.compile(r"\[\[tool:([A-Za-z0-9_.:\-]+)(?:\s+(\{.*?\}))?\]\]", re.DOTALL)
_SEARCH_MARKER = re.compile(r"\[\[search:([^\]]*)\]\]")
_SEARCH_PHRASE = re.compile(r"search (?:the )?tools? for ([^\n.?!]+)", re.IGNORECASE)
_WORDS_MARKER = re.compile(r"\[\[words:(\d+)\]\]")
_ANY_MARKER = re.compile(r"\[\[[^\]]*\]\]")
_SUMMARY_HINTS = ("<conversation>", "context checkpoint summary", "<previous-summary>", "[[summarize]]")
_WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet")


@dataclass(frozen=True)
class PlannedCall:
    name: str
    arguments: dict[str, Any]


@dataclass
class Reply:
    """What the scripted model says: optional thinking, text, tool calls, and how it stops."""

    thinking: str = ""
    text: str = ""
    calls: list[PlannedCall] = field(default_factory=list)
    #: "stop", "length" or "toolUse" (each wire format spells it its own way).
    stop: str = "stop"

    def output_text(self) -> str:
        """Everything the model generated, for output-token estimates."""
        args = "".join(orjson.dumps(call.arguments).decode() for call in self.calls)
        return self.thinking + self.text + "".join(call.name for call in self.calls) + args


def is_summary_request(conv: Conversation) -> bool:
    if "summarization assistant" in conv.system.lower():
        return True
    text = conv.last_user_text.lower()
    return any(hint in text for hint in _SUMMARY_HINTS)


def summarize(conv: Conversation) -> str:
    """A stable checkpoint summary that names what it saw, in pi-coding-agent's format."""
    source = conv.last_user_text
    match = re.search(r"<conversation>\s*(.*?)\s*</conversation>", source, re.DOTALL)
    body = match.group(1) if match else source
    lines = [line.strip() for line in body.splitlines() if line.strip()]
    goal = next(
        (line for line in lines if line.lower().startswith("[user]")), lines[0] if lines else "(none)"
    )
    goal = goal.split(":", 1)[1].strip() if goal.lower().startswith("[user]") and ":" in goal else goal
    return (
        "## Goal\n"
        f"{goal[:200]}\n\n"
        "## Constraints & Preferences\n- (none)\n\n"
        "## Progress\n### Done\n"
        f"- [x] Reviewed {len(lines)} conversation lines\n\n"
        "### In Progress\n- [ ] (none)\n\n### Blocked\n- (none)\n\n"
        "## Key Decisions\n- **Emulator summary**: deterministic summary of the conversation\n\n"
        "## Next Steps\n1. Continue from the summary\n\n"
        "## Critical Context\n- (none)"
    )


def _search_tool(conv: Conversation) -> tuple[str, str]:
    name = next((n for n in conv.tools if n.lower() in ("toolsearch", "tool_search")), "ToolSearch")
    schema = conv.tools.get(name) or {}
    properties = schema.get("properties") or {}
    required = [p for p in schema.get("required") or () if (properties.get(p) or {}).get("type") == "string"]
    return name, required[0] if required else "query"


def _arguments(raw: str | None) -> dict[str, Any]:
    if not raw:
        return {}
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return {"input": raw}
    return value if isinstance(value, dict) else {"value": value}


def plan_reply(conv: Conversation) -> Reply:
    text = conv.last_user_text
    reply = Reply()
    if "[[think]]" in text:
        reply.thinking = "Thinking about: " + (_ANY_MARKER.sub("", text).strip()[:120] or "the request")
    if conv.tool_results:
        reply.text = "\n".join(f"Tool {r.name} returned: {r.text[:200]}" for r in conv.tool_results)
    elif is_summary_request(conv):
        reply.text = summarize(conv)
        return reply  # a checkpoint summary stays short: markers quoted from the conversation are not obeyed
    else:
        for match in _TOOL_MARKER.finditer(text):
            reply.calls.append(PlannedCall(match.group(1), _arguments(match.group(2))))
        search = _SEARCH_MARKER.search(text) or _SEARCH_PHRASE.search(text)
        if search:
            name, prop = _search_tool(conv)
            reply.calls.append(PlannedCall(name, {prop: search.group(1).strip()}))
        if not reply.calls:
            plain = _ANY_MARKER.sub("", text).strip()
            reply.text = f"Echo: {plain[:400]}" if plain else "Hello from the emulator."
    words = _WORDS_MARKER.search(text)
    if words and not reply.calls:
        count = int(words.group(1))
        reply.text += " " + " ".join(_WORDS[i % len(_WORDS)] for i in range(count))
    if reply.calls:
        reply.stop = "toolUse"
    elif "[[length]]" in text:
        reply.stop = "length"
    return reply
