"""Compaction (design C1, C2, C3, C4): summarize the older part of the context, keep a recent tail.

Pure planning lives here; the runtime runs the summary request through the session's own
route and journals the result. The checkpoint stored in the compaction row is the full
effective system state *at the cut*, so the retained tail's own system rows still apply
on top of it as the deltas they are, and a continued session leads with the checkpoint,
then the summary, then the tail.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import orjson

from desktop.pi.text import content_text
from desktop.pi.transcript import current_system_message
from desktop.pi.types import Context, Message, SystemMessage
from desktop.session.compaction_settings import CompactionSettings as CompactionSettings
from desktop.session.context_log import system_messages_at
from desktop.session.estimate import message_tokens
from desktop.session.history import CHECKPOINT_VERSION, ContextView, summary_message

SUMMARIZATION_SYSTEM_PROMPT = (
    "You are a context summarization assistant. Your task is to read a conversation between a user and "
    "an AI coding assistant, then produce a structured summary following the exact format specified.\n\n"
    "Do NOT continue the conversation. Do NOT respond to any questions in the conversation. "
    "ONLY output the structured summary."
)

SUMMARY_FORMAT = """Use this EXACT format:

## Goal
[What is the user trying to accomplish?]

## Constraints & Preferences
- [Constraints, preferences, or requirements the user mentioned, or "(none)"]

## Progress
### Done
- [x] [Completed tasks/changes]

### In Progress
- [ ] [Current work]

### Blocked
- [Issues preventing progress, if any]

## Key Decisions
- **[Decision]**: [Brief rationale]

## Next Steps
1. [Ordered list of what should happen next]

## Critical Context
- [Data, examples, or references needed to continue, or "(none)"]

Keep each section concise. Preserve exact file paths, function names, and error messages."""

SUMMARIZE_PROMPT = (
    "The messages above are a conversation to summarize. Create a structured context checkpoint "
    "summary that another LLM will use to continue the work.\n\n" + SUMMARY_FORMAT
)
UPDATE_PROMPT = (
    "The messages above are NEW conversation messages to incorporate into the existing summary provided "
    "in <previous-summary> tags. PRESERVE all existing information, ADD new progress, decisions and "
    "context, and UPDATE Progress and Next Steps.\n\n" + SUMMARY_FORMAT
)


class NothingToCompact(ValueError):
    """The context is already as small as the retained tail; compaction would change nothing."""


@dataclass(frozen=True)
class CompactionPlan:
    #: Index (into the view's messages) of the first message kept verbatim.
    first_kept_index: int
    first_kept_id: str
    #: The messages the summary replaces.
    summarized: list[Message]
    checkpoint: SystemMessage
    tokens_before: int
    previous_summary: str | None


def _valid_cut(message: Mapping[str, Any]) -> bool:
    # Never start the tail at a tool result: it must stay with the call that asked for it.
    return message.get("role") in ("user", "assistant")


def tail_budget(settings: CompactionSettings, context_window: int | None = None) -> int:
    """The retained tail's budget in tokens (design C1).

    Manual compaction (no ``context_window``) keeps ``keep_recent_tokens`` verbatim, so a
    context below that budget has nothing to compact yet. Automatic compaction fires because
    the context passed the window's threshold; on a window smaller than the keep budget (an
    8k route) the tail is capped at a quarter of the window so there is still something to
    summarize.
    """
    if context_window is None:
        return settings.keep_recent_tokens
    return max(1, min(settings.keep_recent_tokens, context_window // 4))


ONLY_SYSTEM_UPDATES = "only system updates precede the retained tail; nothing to summarize"


def _choose_cut(
    messages: Sequence[Message], start: int, settings: CompactionSettings, context_window: int | None
) -> int:
    """The first kept message: walk back from the newest one until the tail budget is spent.

    Reads the tail only, one message at a time (a long session's rows are decoded on demand
    and none is kept, design G9); raises ``NothingToCompact`` as ``plan_compaction`` says.
    """
    last_cut = next((i for i in range(len(messages) - 1, start - 1, -1) if _valid_cut(messages[i])), None)
    if last_cut is None:
        raise NothingToCompact("there is no user or assistant message to compact yet")
    budget = tail_budget(settings, context_window)
    accumulated = 0
    cut = last_cut
    for index in range(len(messages) - 1, start - 1, -1):
        accumulated += message_tokens(messages[index])
        if accumulated >= budget:
            cut = next((c for c in range(index, last_cut + 1) if _valid_cut(messages[c])), last_cut)
            break
    else:
        if context_window is None:
            raise NothingToCompact(
                # No figure here: the session's context figure is the preview's (design G14).
                f"the context is within the retained tail of {budget:,} tokens (keep_recent_tokens)"
            )
        # Automatic compaction past the threshold: keep only the last turn verbatim.
        cut = last_cut
    if cut <= start:
        raise NothingToCompact("the whole context fits in the retained tail; nothing to summarize")
    return cut


def _checkpoint(messages: Sequence[Message], cut: int) -> SystemMessage:
    """The system state in effect at ``cut``, replayed from the system messages before it
    (the context log holds those decoded, so no other row is read)."""

    before = [message for index, message in system_messages_at(messages) if index < cut]
    checkpoint = current_system_message(before)
    if checkpoint is None:
        checkpoint = cast(SystemMessage, {"role": "system", "content": "", "timestamp": 0})
    return checkpoint


def plan_compaction(
    view: ContextView,
    settings: CompactionSettings,
    *,
    context_window: int | None = None,
    context: int | None = None,
) -> CompactionPlan:
    """Choose the cut (``_choose_cut``) and gather what the summary replaces.

    ``context`` is the session's context figure (``SessionRuntime.context_tokens``, design
    G14), recorded as the tokens before; without it, four characters per token of the view.

    ``context_window`` is given by automatic compaction only (see ``tail_budget``); manual
    compaction of a context below the keep budget raises ``NothingToCompact`` and changes
    nothing, as pi-coding-agent does for a session too small to compact (design C1).
    """
    messages = view.messages
    start = view.prefix
    cut = _choose_cut(messages, start, settings, context_window)
    summarized: list[Message] = [m for m in messages[start:cut] if m["role"] != "system"]
    if not summarized:
        raise NothingToCompact(ONLY_SYSTEM_UPDATES)
    source = view.sources[cut]
    return CompactionPlan(
        first_kept_index=cut,
        first_kept_id=str(source["id"]),
        summarized=summarized,
        checkpoint=_checkpoint(messages, cut),
        tokens_before=estimate_tokens(messages) if context is None else context,
        previous_summary=view.previous_summary,
    )


#: What a summary is assumed to weigh before it exists: the structured format's usual size.
SUMMARY_ESTIMATE_TOKENS = 1_200


@dataclass(frozen=True)
class CompactionPreview:
    """What compacting now would do, in the figures a person checks first (design C1).

    The tokens before are the session's one context figure (the context meter's, design G14);
    the tokens after are that figure less what the summary removes, both measured at four
    characters per token, so the two compare with each other. Until the model has written
    it, the summary is taken as ``SUMMARY_ESTIMATE_TOKENS`` or half of what it replaces,
    whichever is smaller.
    """

    #: False when there is nothing to compact yet; ``reason`` then says why.
    possible: bool
    reason: str = ""
    #: Messages the summary would replace.
    rows: int = 0
    #: The journal row where the retained tail starts (the cut point) and its one-line text.
    first_kept_id: str = ""
    first_kept_text: str = ""
    tokens_before: int = 0
    tokens_after: int = 0

    def describe(self) -> str:
        if not self.possible:
            return f"nothing to compact yet: {self.reason}"
        return (
            f"summarize {self.rows} row{'s' if self.rows != 1 else ''} before row {self.first_kept_id}: "
            f"~{self.tokens_before:,} → ~{self.tokens_after:,} tokens"
        )


def estimate_tokens(messages: Sequence[Mapping[str, Any]]) -> int:
    return sum(message_tokens(m) for m in messages)


def after_compaction(context: int | None, estimated_before: int, estimated_after: int) -> int:
    """The context figure once compacted: ``context`` (the figure before, design G14) less what
    the estimate says the compaction removes; the estimate itself without a figure."""
    if context is None:
        return estimated_after
    return max(1, context - (estimated_before - estimated_after))


def preview_compaction(
    view: ContextView, settings: CompactionSettings, *, context: int | None = None
) -> CompactionPreview:
    """Plan as ``plan_compaction`` does and report the figures, without asking the model.

    ``context`` is the session's context figure, as for ``plan_compaction``.

    One walk over the context counts what the summary would replace: the window asks for
    this after every turn, and a long session's messages are read one at a time and dropped,
    never gathered (design C1, G9).
    """
    messages = view.messages
    start = view.prefix
    try:
        cut = _choose_cut(messages, start, settings, None)
    except NothingToCompact as error:
        tokens = estimate_tokens(messages) if context is None else context
        return CompactionPreview(False, str(error), tokens_before=tokens, tokens_after=tokens)
    rows = replaced = before = tail = 0
    for index, message in enumerate(messages):
        tokens = message_tokens(message)
        before += tokens
        if index >= cut:
            tail += tokens
        elif index >= start and message["role"] != "system":
            rows += 1
            replaced += tokens
    figure = before if context is None else context
    if not rows:
        return CompactionPreview(False, ONLY_SYSTEM_UPDATES, tokens_before=figure, tokens_after=figure)
    # A summary is shorter than what it replaces: at most the usual size, at most half.
    summary = min(SUMMARY_ESTIMATE_TOKENS, max(1, replaced // 2))
    after = after_compaction(context, before, message_tokens(_checkpoint(messages, cut)) + summary + tail)
    first = messages[cut]
    text = " ".join(content_text(first.get("content") or "").split())  # type: ignore[arg-type]
    return CompactionPreview(
        True,
        rows=rows,
        first_kept_id=str(view.sources[cut]["id"]),
        first_kept_text=text[:80] + ("…" if len(text) > 80 else ""),
        tokens_before=figure,
        tokens_after=after,
    )


def compacted_tokens(plan: CompactionPlan, view: ContextView, summary: str) -> int:
    """The context figure after compacting with ``summary`` (checkpoint, summary, tail), as
    ``preview_compaction`` counts it from the plan's tokens before."""
    tail = view.messages[plan.first_kept_index :]
    estimated = (
        message_tokens(plan.checkpoint) + message_tokens(summary_message(summary, 0)) + estimate_tokens(tail)
    )
    return after_compaction(plan.tokens_before, estimate_tokens(view.messages), estimated)


def serialize_conversation(messages: Sequence[Mapping[str, Any]]) -> str:
    """Plain text the summarizer reads; tool calls and results keep their names and arguments."""
    lines: list[str] = []
    for message in messages:
        role = message["role"]
        if role == "user":
            lines.append(f"[User]: {content_text(message['content'])}")
        elif role == "assistant":
            for block in message["content"]:
                kind = block["type"]
                if kind == "text":
                    lines.append(f"[Assistant]: {block['text']}")
                elif kind == "thinking":
                    lines.append(f"[Assistant thinking]: {block['thinking']}")
                elif kind == "toolCall":
                    arguments = orjson.dumps(block["arguments"]).decode()
                    lines.append(f"[Assistant tool call]: {block['name']}({arguments})")
        elif role == "toolResult":
            status = "error" if message.get("isError") else "ok"
            lines.append(
                f"[Tool result {message['toolName']} ({status})]: {content_text(message['content'])}"
            )
    return "\n\n".join(lines)


def summary_request_context(plan: CompactionPlan, *, timestamp: int, focus: str = "") -> Context:
    """The request that asks the session's own model for the summary; ``focus`` (from
    ``/compact FOCUS`` or ``pi-desktop compact --focus``) says what the summary must keep (design G8)."""
    conversation = serialize_conversation(plan.summarized)
    text = f"<conversation>\n{conversation}\n</conversation>\n\n"
    if plan.previous_summary:
        text += f"<previous-summary>\n{plan.previous_summary}\n</previous-summary>\n\n" + UPDATE_PROMPT
    else:
        text += SUMMARIZE_PROMPT
    if focus.strip():
        text += f"\n\nAdditional focus: {focus.strip()}"
    return {
        "systemPrompt": SUMMARIZATION_SYSTEM_PROMPT,
        "messages": [{"role": "user", "content": [{"type": "text", "text": text}], "timestamp": timestamp}],
    }


def compaction_row_fields(
    plan: CompactionPlan, summary: str, *, activation: Mapping[str, Any] | None, route: Mapping[str, Any]
) -> dict[str, Any]:
    """The payload of the compaction row: summary, where the tail starts, and the checkpoint."""
    return {
        "summary": summary,
        "firstKeptId": plan.first_kept_id,
        "tokensBefore": plan.tokens_before,
        "checkpoint": {
            "v": CHECKPOINT_VERSION,
            "message": plan.checkpoint,
            "activation": dict(activation) if activation is not None else None,
            "route": dict(route),
        },
    }
