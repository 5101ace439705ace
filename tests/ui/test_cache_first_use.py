"""First use of a route through the real window (design P8).

After a turn on one route, `/model anthropic/claude-opus-5-5` used to show "2,535 of 2,665
input tokens cached (95%)" on the Payload tab: the request behind the last reply,
re-projected, taken as already sent. The provider had never seen the session and read
nothing, and the check said the prediction held. Now the tab predicts a cold cache, shows the
re-projection only as a comparison, and after the send the check compares with the cold figure.
"""

from __future__ import annotations

from typing import Any

from desktop.ui.main_window import TAB_PAYLOAD
from tests.ui.conftest import TURN_TIMEOUT, Harness

OPUS = "emulator/anthropic/claude-opus-5-5"


def test_a_new_route_is_predicted_cold_and_the_check_agrees(harness: Harness) -> None:
    h, window = harness, harness.window
    h.type_and_send("Say something short.")
    assert h.wait_turn(1).error is None
    h.type_and_send("/model anthropic/claude-opus-5-5")
    h.qtbot.waitUntil(lambda: window.status.route_key == OPUS, timeout=TURN_TIMEOUT)
    window.tabs.setCurrentIndex(TAB_PAYLOAD)

    def opus_preview() -> dict[str, Any] | None:
        for preview in reversed(h.previews):
            if "claude-opus-5-5" in str(preview.get("route")) and isinstance(preview.get("cache"), dict):
                return preview
        return None

    h.qtbot.waitUntil(lambda: opus_preview() is not None, timeout=TURN_TIMEOUT)
    preview = opus_preview()
    assert preview is not None
    cache = preview["cache"]
    assert cache["cached"] == 0 and cache["basis"] == "cold", cache
    assert cache["comparison"]["cached"] > 0  # the old, wrong prediction, now a comparison
    headline = window.payload_view.main.cache.text()
    # The input tokens are the session's one context figure (design G14).
    assert f"Predicted: 0 of {cache['context']:,} input tokens cached (0%)" in headline
    assert "For comparison" in headline

    shown = len(h.previews)
    h.type_and_send("And now on this route.")
    assert h.wait_turn(2).error is None
    h.qtbot.waitUntil(
        lambda: any(isinstance(p.get("check"), dict) for p in h.previews[shown:]), timeout=TURN_TIMEOUT
    )
    check = next(p["check"] for p in reversed(h.previews) if isinstance(p.get("check"), dict))
    assert check["ok"] and check["reported"] == 0, check
    assert "a cold cache" in check["text"] and "held" in check["text"]
