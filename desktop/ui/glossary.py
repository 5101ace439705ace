"""Every inspector term, explained in one paragraph (design G7).

One table, used three ways: the tooltip of each inspector label and selector (``tooltip``),
the ``title`` of terms inside the rich-text panes (``term``), and the glossary of the
"What am I looking at?" page. An unknown key is a ``KeyError`` at the call site, so a label
can never point at an explanation that does not exist (the tests call every use).
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True)
class Term:
    title: str
    text: str


_TITLES = {
    "mac": "MAC",
    "fixed": "Fixed declarations",
    "on-demand": "On-demand declarations",
    "attributed": "Attributed updates",
    "capability": "Delivery path",
}
#: Each term's paragraph; its title is the key capitalized unless ``_TITLES`` names another.
_TEXTS: Final[dict[str, str]] = {
    "hidden system row": (
        "A journal row the model reads but the chat does not show: Desktop's instructions, the "
        "environment, workspace guidance, skills and tool changes. One is appended only when "
        "something changed, carrying just the changed sections. View → Show Hidden System Rows "
        "(Ctrl+H) shows them in the timeline."
    ),
    "anchored": (
        "A system row written after a user row but meant to be read before it carries "
        "“before: <user row id>”. The user's text is saved first so it is never lost; the model "
        "sees the update just ahead of that user message."
    ),
    "section": (
        "One named part of the system state (runtime, environment, guidance, skill:<id>, "
        "tool_activation). A system row carries only the sections that changed; the model's "
        "state is every section's latest value, replayed in order."
    ),
    "tombstone": (
        "A section set to null: it says “this section no longer applies” (a skill removed, "
        "guidance deleted). The history before it is never rewritten."
    ),
    "epoch": (
        "A counter of declaration epochs. A change of catalog, tool schema, permission mode, "
        "account or route starts a new epoch, and that revokes every deferred tool activated "
        "before it. Epochs only grow."
    ),
    "identity": (
        "A SHA-256 fingerprint of account, provider, model, API, endpoint, permission mode and "
        "the declared tools. An activation recorded under another identity grants nothing. It "
        "detects drift; the MAC says who wrote it."
    ),
    "mac": (
        "A keyed checksum made with this installation's secret. A tool_activation section whose "
        "MAC does not verify was copied from elsewhere or edited, and grants nothing."
    ),
    "activation": (
        "Which deferred tools (MCP and extension tools) may run now. ToolSearch activates them; "
        "the list lives in the tool_activation section. Declarations (what the model is shown) "
        "never grant activation."
    ),
    "deferred tool": (
        "A tool from an MCP server or an extension. It is not usable until ToolSearch activates "
        "it in this session, under the current route, account, mode and catalog."
    ),
    "declaration policy": (
        "How tool schemas reach the model. Fixed: the whole catalog is declared from the first "
        "request, so the request-level tool list never changes and the cache prefix stays put "
        "(only on the verified deepseek-flash binding). On demand: a deferred tool's schema is "
        "published when ToolSearch activates it."
    ),
    "fixed": (
        "The complete tool catalog is declared in name order from the first request; ToolSearch "
        "changes only which tools may run, never the declared list."
    ),
    "on-demand": (
        "Deferred tools are declared only when ToolSearch activates them, as a tool change "
        "appended to the history. Used when fixed declarations are not verified for the route, "
        "too many (over 128 functions) or too large."
    ),
    "fallback": (
        "How system updates reach a route that has no native support for mid-conversation "
        "system messages: folded or attributed."
    ),
    "folded": (
        "Every system update is merged into the leading system prompt (pi-ai's default). "
        "Simple, but any change rewrites the start of the request and breaks the prompt cache."
    ),
    "attributed": (
        "A system update is sent as a labelled user message where it happened. The start of "
        "the request stays the same, so the cached prefix survives."
    ),
    "native system sections": (
        "The route accepts system messages in the middle of the conversation, so updates are "
        "sent as they are, where they happened, and the cached prefix stays intact."
    ),
    "capability": (
        "How this route receives system updates: native system sections (green), attributed "
        "user updates (amber) or folded into the leading prompt (red)."
    ),
    "cache break": (
        "Where the provider's cached prefix of the next request ends, in the provider's own "
        "terms: Anthropic caches tools, then system, then messages up to its breakpoints; OpenAI "
        "and DeepSeek cache whole 128- or 64-token units of the longest prefix they saw before. "
        "Everything after it is processed (and billed) again. The Payload tab predicts it, says "
        "which section, tool or message changed, and checks the prediction against the usage "
        "the provider reports."
    ),
    "input tokens": (
        "Every token of the prompt a request sent: the cached ones the provider read from its "
        "prompt cache plus the uncached ones it processed from scratch. Everywhere in Pi Desktop "
        "\u201cinput\u201d means this whole figure, with cached and uncached beside it."
    ),
    "cached tokens": (
        "Input tokens the provider read from its prompt cache (“cache read”). They are billed "
        "at a fraction of the input price."
    ),
    "uncached tokens": (
        "Input tokens processed from scratch: fresh input plus cache writes. They cost the full "
        "input price or more."
    ),
    "cache write": (
        "Input tokens stored in the provider's prompt cache for later requests; some providers "
        "bill them above the normal input price."
    ),
    "hit ratio": (
        "Cache reads divided by all input tokens of a request (fresh, cache read and cache "
        "write). Higher is cheaper and faster."
    ),
    "compaction": (
        "The older part of the conversation is replaced by a summary the model writes; a recent "
        "tail is kept verbatim. The row also saves the system state at the cut (a checkpoint)."
    ),
    "retained tail": (
        "The newest messages a compaction keeps verbatim, about 20,000 tokens. Below that there "
        "is nothing to compact yet."
    ),
    "route": "Provider, model and API for the next request. Changing it starts a new declaration epoch.",
    "permission mode": (
        "What tools may do without asking: ask before writes and commands, allow edits, allow "
        "everything, or read only."
    ),
    "payload": (
        "The exact bytes of the next request as the provider will receive them, with the "
        "credential replaced by a placeholder."
    ),
    "timeline": (
        "Every journal row in order. The coloured badge says what a row is; assistant rows "
        "end with tokens, cache hit ratio and cost (in the tooltip when the timeline is narrow)."
    ),
}
GLOSSARY: Final[dict[str, Term]] = {
    key: Term(_TITLES.get(key, key[0].upper() + key[1:]), text) for key, text in _TEXTS.items()
}


def explain(key: str) -> Term:
    """The entry for ``key``; a ``KeyError`` names a term the glossary lacks."""
    return GLOSSARY[key]


def tooltip(*keys: str) -> str:
    """Rich text for a widget's tooltip: each term's title in bold, then its paragraph."""
    parts = []
    for key in keys:
        entry = explain(key)
        parts.append(f"<p><b>{html.escape(entry.title)}</b> — {html.escape(entry.text)}</p>")
    return "<qt>" + "".join(parts) + "</qt>"


def term(label: str, key: str) -> str:
    """``label`` as HTML carrying the explanation of ``key`` as its tooltip (rich-text panes)."""
    entry = explain(key)
    return f'<span title="{html.escape(entry.text, quote=True)}">{html.escape(label)}</span>'
