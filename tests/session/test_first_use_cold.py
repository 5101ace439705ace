"""A route with no request yet in this session predicts a cold cache (design P8).

After a turn on one route, the Payload tab for another route used to take the request
behind the last reply, re-projected onto it, as already sent: it promised 95% cached where
the provider, which had never seen the session, read nothing. The prediction is now cold;
the re-projection is shown only as a comparison, and the check after the send compares the
reported usage with that cold prediction.
"""

from __future__ import annotations

from pathlib import Path

from desktop.emulator import Emulator
from desktop.pi.routes import emulator_route
from desktop.session.inspector.preview import check_text, route_preview
from desktop.session.inspector.routes import RouteChoice
from tests.session.support import config, open_

OTHER = "anthropic/claude-opus-5-5"


def test_a_new_route_predicts_cold_and_shows_the_reprojection_as_a_comparison(tmp_path: Path) -> None:
    route = "anthropic/claude-sonnet-4-5"
    with Emulator() as emu, open_(tmp_path / "s.jsonl", config(emu, tmp_path / "ws", route)) as session:
        assert session.runtime.run_turn("hello there").stopped == "stop"
        other = emulator_route(OTHER, emu.url, emulated=True)
        choice = RouteChoice(OTHER, OTHER, other, True)
        preview = route_preview(
            session.runtime, choice, current=False, fallback="folded", session_id="s", sent=None
        )
        cache = preview["cache"]
        assert cache["cached"] == 0 and cache["basis"] == "cold", cache
        assert cache["units"]["kind"] == "estimated"  # no reply on this route reported units
        assert "No earlier request on this route" in cache["why"]
        compared = cache["comparison"]
        assert compared["cached"] > compared["total"] // 2, compared  # the old, wrong figure
        assert "For comparison" in compared["text"] and "holds none" in compared["text"]
        assert preview["previous"] is not None  # the byte diff keeps the re-projection

        model = {"api": "anthropic-messages", "provider": "anthropic", "id": "claude-opus-5-5"}
        body = preview["body"]
    # Sent cold, the provider reads nothing and writes the prefix: the check holds and says why.
    usage = {"input": cache["fresh"], "cacheRead": 0, "cacheWrite": cache["written"]}
    verdict = check_text(model, body, [], usage)
    assert verdict["ok"] and "a cold cache" in verdict["text"], verdict


def test_the_route_just_used_is_warm_then_expired_past_its_retention(tmp_path: Path) -> None:
    """Design P9: the same route's next request reads the cache for five minutes after the
    last reply, and six minutes later it predicts expired, the warm figure as a comparison."""
    route_name = "anthropic/claude-sonnet-4-5"
    with Emulator() as emu:
        cfg = config(emu, tmp_path / "ws", route_name)
        with open_(tmp_path / "s.jsonl", cfg) as session:
            assert session.runtime.run_turn("hello there").stopped == "stop"
            last = session.runtime.view().messages[-1]["timestamp"]
            choice = RouteChoice(route_name, route_name, cfg.route, True)

            def at(minutes: float) -> dict[str, object]:
                preview = route_preview(
                    session.runtime,
                    choice,
                    current=True,
                    fallback="folded",
                    session_id="s",
                    sent=None,
                    now_ms=last + int(minutes * 60_000),
                )
                cache = preview["cache"]
                assert isinstance(cache, dict)
                return cache

            warm, expired = at(4), at(6)
    assert warm["basis"] == "warm" and warm["cached"] > 0 and "comparison" not in warm
    # The prefix in the provider's units (the emulator's reply reported it), the rest estimated.
    units = warm["units"]
    assert units["kind"] == "calibrated" and units["reported"] > 0
    assert units["total"] == units["reported"] + units["estimated"] == warm["total"]
    assert warm["clock"]["label"] == "cache warm · 1:00 left" and warm["clock"]["lastUseMs"] == last
    assert warm["nextSend"]["afterExpiry"] > warm["nextSend"]["now"]
    assert expired["basis"] == "expired" and expired["cached"] == 0
    assert expired["clock"]["label"] == "cache expired"
    assert expired["comparison"]["cached"] == warm["cached"]
    assert "had the cache not expired" in expired["comparison"]["text"]
    assert expired["nextSend"]["now"] == expired["nextSend"]["afterExpiry"] == warm["nextSend"]["afterExpiry"]
