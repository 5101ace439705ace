"""The linear what-if pass gives the figures of every request read whole (design X8).

``PromptCache`` folds a request by what it adds to the previous one and holds a prefix cache's
shared steps as one record. What a request is known to share is a shortcut, never a figure: on
random request sequences (prompts that grow, are cut back, change their head, repeat, with
breakpoints and idle gaps past the short retention) every request's usage is the same whether
it is held as the what-if reader holds it (a head, a shared committed run, a tail), sent as a
whole prompt (the cache view's call), or folded sharing nothing with the request before it,
for a breakpoint rule and two prefix rules.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desktop.bench.whatif_session import write
from desktop.pi.cache_rules import RULES, Prompt, Segment
from desktop.pi.projection import CREDENTIAL_PLACEHOLDER, ProjectionError, RequestOptions
from desktop.pi.prompt_cache import PromptCache, PromptView, finish, segment_digest, view_of
from desktop.pi.transcript import declared_tools
from desktop.pi.types import Message
from desktop.session.foreign import route_model
from desktop.session.whatif import (
    DELIVERIES,
    RequestSequence,
    changes_tools_later,
    prompts_for,
    replay_times,
    request_sequence,
    views_for,
)

BODY = st.text(alphabet="ab", min_size=1, max_size=4).map(lambda s: s * 300)
HEADS = st.tuples(st.sampled_from(["tool:", "system:"]), BODY).map("".join)
MESSAGES = st.tuples(st.sampled_from(["user:", "assistant:"]), BODY).map("".join)


@st.composite
def sequences(draw: st.DrawFn) -> list[tuple[list[str], list[int], int | None]]:
    """(segment texts, breakpoint positions, time) per request: a head of tool and system
    blocks, then messages."""
    out: list[tuple[list[str], list[int], int | None]] = []
    head: list[str] = draw(st.lists(HEADS, max_size=3))
    messages: list[str] = []
    now = 1_000_000
    timed = draw(st.booleans())
    for _ in range(draw(st.integers(1, 12))):
        move = draw(st.sampled_from(["grow", "grow", "cut", "head", "same"]))
        if move == "cut" and messages:
            messages = messages[: draw(st.integers(0, len(messages)))]
        elif move == "head":
            head = [*head[: draw(st.integers(0, len(head)))], *draw(st.lists(HEADS, max_size=2))]
        if move != "same" or not head + messages:
            messages = messages + draw(st.lists(MESSAGES, min_size=1, max_size=5))
        texts = head + messages
        marks = sorted(set(draw(st.lists(st.integers(0, len(texts) - 1), max_size=3))) | {len(texts) - 1})
        now += draw(st.sampled_from([1_000, 60_000, 6 * 60_000, 61 * 60_000]))
        out.append((texts, marks, now if timed else None))
    return out


def _views(rule: str, requests: list[tuple[list[str], list[int], int | None]]) -> list[PromptView]:
    """Each request as the reader makes it: a head, a run of a shared committed list (kept
    while the requests only grow past it), a tail."""
    views: list[PromptView] = []
    committed: list[str] = []
    sums: list[bytes] = []
    previous: PromptView | None = None
    for texts, marks, _now in requests:
        cut = sum(1 for _ in itertools.takewhile(lambda t: t.startswith(("tool:", "system:")), texts))
        head = texts[:cut]
        body = texts[cut:]
        if committed != body[: len(committed)]:
            committed, sums = [], []
        run = max(len(committed), len(body) - 2)
        if run > len(committed):
            sums.extend(segment_digest(text) for text in body[len(committed) : run])
            committed.extend(body[len(committed) : run])
        count = min(len(committed), len(body))
        view = PromptView(
            RULES[rule],
            "claude-sonnet-4-5",
            "ns",
            False,
            head,
            committed,
            count,
            body[count:],
            sums,
            [(p, "5m") for p in marks] if rule == "anthropic" else [],
            0,
        )
        view = finish(previous, view)
        views.append(view)
        previous = view
    return views


@settings(max_examples=150, deadline=None)
@given(requests=sequences(), rule=st.sampled_from(["anthropic", "openai", "deepseek"]))
def test_what_a_request_shares_changes_no_figure(
    requests: list[tuple[list[str], list[int], int | None]], rule: str
) -> None:
    held, whole, alone = PromptCache(), PromptCache(), PromptCache()
    for (texts, marks, now), view in zip(requests, _views(rule, requests), strict=True):
        segments = tuple(
            Segment(text, "messages", "", (), "5m" if i in marks and rule == "anthropic" else None)
            for i, text in enumerate(texts)
        )
        prompt = Prompt(RULES[rule], "claude-sonnet-4-5", "ns", segments)
        assert list(view.texts_from(0)) == texts
        usage = held.account(view, now)
        assert whole.send(prompt, now) == usage
        assert alone.account(finish(None, view_of(prompt)), now) == usage


SESSIONS = sorted(
    p
    for p in (Path(__file__).resolve().parents[1] / "fixtures").rglob("*.jsonl")
    if p.parent.name in ("pi_sessions", "pi_quirks", "claude_code", "codex", "legacy", "subagents")
)
ROUTES = [
    "anthropic/claude-opus-5-5",
    "openai/gpt-5.5",
    "deepseek/deepseek-flash",
    "amazon-bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0",
]


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.name)
def test_every_fixture_folds_the_same_through_the_reader(path: Path) -> None:
    """Every session fixture, four routes (breakpoint and prefix rules), every strategy: each
    request read whole and sent to a ``PromptCache`` at the recorded times gives the usage
    the reader's views folded through one give."""
    sequence = request_sequence(path)
    if not sequence.requests:
        pytest.skip("no model request")
    _same_usages(sequence)


def test_a_generated_journal_folds_the_same_through_the_reader(tmp_path: Path) -> None:
    """The same on a journal with system updates, tool additions and idle gaps."""
    _same_usages(request_sequence(write(tmp_path / "g.jsonl", 80)))


def _same_usages(sequence: RequestSequence) -> None:
    options = RequestOptions(session_id=sequence.session_id, api_key=CREDENTIAL_PLACEHOLDER)
    times = replay_times(sequence)
    stamps = times if times is not None else [None] * len(sequence.requests)
    last = sequence.requests[-1]
    tools = declared_tools(last) if changes_tools_later(last) else None
    for route in ROUTES:
        model = route_model(route)
        for delivery in DELIVERIES:
            for fixed in (None, tools) if tools is not None else (None,):
                try:
                    prompts = prompts_for(model, sequence.requests, delivery, fixed, options)
                    sim = PromptCache()
                    full = [sim.send(prompt, now) for prompt, now in zip(prompts, stamps, strict=True)]
                except ProjectionError:
                    continue  # the route cannot take this file's requests (said in one line)
                cache = PromptCache()
                views = views_for(model, sequence.requests, delivery, fixed, options)
                linear = [cache.account(view, now) for view, now in zip(views, stamps, strict=True)]
                assert linear == full, (route, delivery, fixed is not None)


def test_a_fixed_declarations_pass_reads_each_message_about_once(tmp_path: Path) -> None:
    """Design X8: with fixed declarations too, each request is made from the previous one, so
    a pass reads what each request adds (reading every request whole made that pass quadratic:
    300 times the file's parse on 10,000 rows)."""
    sequence = request_sequence(write(tmp_path / "g.jsonl", 200))
    reads = 0

    class Counted(Sequence[Message]):
        def __init__(self, messages: Sequence[Message]) -> None:
            self.messages = messages

        def __len__(self) -> int:
            return len(self.messages)

        def __getitem__(self, index: Any) -> Any:
            nonlocal reads
            found = self.messages[index]
            reads += len(found) if isinstance(index, slice) else 1
            return found

    last = sequence.requests[-1]
    options = RequestOptions(session_id=sequence.session_id, api_key=CREDENTIAL_PLACEHOLDER)
    requests = [Counted(messages) for messages in sequence.requests]
    views = views_for(route_model(ROUTES[0]), requests, "chronological", declared_tools(last), options)
    assert sum(1 for _ in views) == len(requests)
    assert reads < 2 * len(last) + 4 * len(requests), (reads, len(last), len(requests))


def test_a_prefix_cache_pass_holds_what_is_unexpired_not_every_path_it_left(tmp_path: Path) -> None:
    """Design X14: a pass on a prefix-cache route whose prompt head changes every few turns (a tool added
    to the folded prompt) leaves a path at every change; its steps stay stored only while
    they are unexpired. Four times the turns, about four times what the cache holds (the
    current path grows with the prompt); every step of every path left held the square (16
    times here, 27 times the file on 10,000 rows)."""
    import gc
    import tracemalloc

    model = route_model("deepseek/deepseek-flash")

    def held(turns: int) -> int:
        sequence = request_sequence(write(tmp_path / f"g{turns}.jsonl", turns))
        times = replay_times(sequence)
        assert times is not None
        options = RequestOptions(session_id=sequence.session_id, api_key=CREDENTIAL_PLACEHOLDER)
        views = views_for(model, sequence.requests, "attributed", None, options)
        tracemalloc.start()
        try:
            cache = PromptCache()
            usages = [cache.account(view, now) for view, now in zip(views, times, strict=True)]
            del views
            gc.collect()
            assert len(usages) == len(sequence.requests)
            # What the cache's own module holds, not the projections' memos.
            here = tracemalloc.Filter(True, "*prompt_cache.py")
            return sum(
                s.size for s in tracemalloc.take_snapshot().filter_traces([here]).statistics("filename")
            )
        finally:
            tracemalloc.stop()

    small, large = held(120), held(480)
    assert large < 8 * small, (small, large)
