"""Every miss has a cause, by hand (design P10).

Two replies on one route: the second reads less than the first left in the cache, and the
transcript reader names the cause from the replies' reported usage and what happened between
them (a compaction, a tool or system change, another model, the idle time, the server).
"""

from __future__ import annotations

from typing import Any, get_args

import orjson
import pytest

from desktop.pi.cache_misses import Cause, transcript_summary


def _reply(read: int, write: int, fresh: int, ts: int, model: str = "claude-sonnet-4-5") -> dict[str, Any]:
    return {
        "role": "assistant",
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": model,
        "usage": {"input": fresh, "cacheRead": read, "cacheWrite": write, "output": 10},
        "timestamp": ts,
    }


MIN = 60_000


@pytest.mark.parametrize(
    ("between", "second", "cause"),
    [
        ([], _reply(0, 5_200, 100, 6 * MIN), "ttl_expired_5m"),
        ([], _reply(2_000, 3_200, 100, 2 * MIN), "likely_server_side"),
        (
            [{"role": "system", "content": "", "sections": {"guidance": "x"}}],
            _reply(0, 5_200, 100, MIN),
            "system_prompt_changed",
        ),
        (
            [{"role": "system", "content": "", "toolsAdded": [{"name": "grep"}]}],
            _reply(0, 5_200, 100, MIN),
            "tools_changed",
        ),
        ([{"role": "compactionSummary", "summary": "s"}], _reply(0, 900, 100, MIN), "messages_rewritten"),
        ([], _reply(0, 5_200, 100, "late"), "unknown"),  # type: ignore[arg-type]
    ],
)
def test_transcript_summary_by_hand(between: list[Any], second: dict[str, Any], cause: str) -> None:
    # The first reply wrote 5,000 tokens; the second should read them all (5,000 held).
    messages = [{"role": "user"}, _reply(0, 5_000, 100, 0), *between, {"role": "user"}, second]
    summary = transcript_summary(messages).to_json()
    assert summary["misses"] == 1 and summary["causes"] == {cause: 1}
    read = second["usage"]["cacheRead"]
    assert summary["recachedTokens"] == 5_000 - read
    total = 5_100 + read + second["usage"]["cacheWrite"] + 100
    assert summary["hitRatio"] == round(read / total, 4)


def test_a_full_read_is_no_miss_and_a_model_switch_is_named() -> None:
    warm = [_reply(0, 5_000, 100, 0), _reply(5_000, 200, 100, MIN)]
    assert transcript_summary(warm).to_json()["misses"] == 0
    switched = [
        _reply(0, 5_000, 100, 0),
        _reply(0, 4_000, 10, MIN, "claude-opus-5-5"),
        _reply(0, 5_200, 100, 2 * MIN),
    ]
    summary = transcript_summary(switched).to_json()
    assert summary["causes"] == {"model_changed": 1} and summary["missList"][0]["message"] == 2
    assert set(get_args(Cause)) >= set(summary["causes"])


def test_claude_code_s_own_miss_reason_is_shown_beside_ours(tmp_path: Any) -> None:
    """A Claude Code reply that records ``message.diagnostics.cache_miss_reason`` keeps it,
    and the miss it explains carries it beside the cause computed here."""
    from pathlib import Path

    from desktop.session.foreign import open_foreign
    from tests.foreign.support import CLAUDE

    lines = (CLAUDE / "basic.jsonl").read_bytes().splitlines()
    out = []
    replies = 0
    for line in lines:
        entry = orjson.loads(line)
        message = entry.get("message") if isinstance(entry, dict) else None
        if entry.get("type") == "assistant" and isinstance(message, dict) and message.get("id") == "msg_01C":
            message["usage"].update(cache_read_input_tokens=0, cache_creation_input_tokens=10_700)
            message["diagnostics"] = {"cache_miss_reason": "tools_changed"}
            replies += 1
        out.append(orjson.dumps(entry))
    assert replies, "the fixture has a reply msg_01C"
    path = Path(tmp_path) / "c.jsonl"
    path.write_bytes(b"\n".join(out) + b"\n")
    session = open_foreign(path)
    messages = [row.message for row in session.timeline(None) if row.kind == "assistant"]
    summary = transcript_summary(messages).to_json()
    assert summary["misses"] == 1, summary
    assert summary["missList"][0]["place"]["reported"] == "tools_changed"


def test_the_usage_tab_counts_misses_from_reported_usage(qtbot: Any) -> None:
    """The Usage tab's totals say how many replies read less than the cache held, why, and
    how many tokens were processed again (design P10). By hand: the second reply read all
    5,000 held; the third came seven minutes later and read 0 of the 5,200 held (expired);
    the fourth switched model (no earlier reply on it: not a miss); the fifth, back on the
    first model two minutes later, read 1,000 of the 5,300 the third left: a model switch."""
    from desktop.ui.usage_view import UsageView

    def row(i: int, model: str, ts: int, fresh: int, read: int, write: int) -> dict[str, Any]:
        usage = {"input": fresh, "cacheRead": read, "cacheWrite": write, "output": 5}
        message = {"role": "assistant", "model": model, "usage": usage}
        return {"type": "assistant", "id": f"a{i}", "ts": ts, "message": message}

    rows = [
        row(1, "opus", 0, 100, 0, 5_000),
        row(2, "opus", MIN, 100, 5_000, 200),
        row(3, "opus", 8 * MIN, 100, 0, 5_300),
        row(4, "sonnet", 9 * MIN, 100, 0, 4_000),
    ]
    view = UsageView()
    qtbot.addWidget(view)
    view.model.set_rows(rows)
    view.model.add_rows([row(5, "opus", 10 * MIN, 100, 1_000, 4_300)])
    view._refresh()
    text = view.summary.text()
    assert "2 cache misses (model_changed 1, ttl_expired_5m 1), 9,500 tokens re-cached" in text, text
