"""A rate limit's wait is counted down above the panes, and Cancel stops the turn (design W4).

The window runs its real worker thread against the in-process emulator, which answers the
first request with a 429 and ``Retry-After: 30``.
"""

from __future__ import annotations

from PySide6.QtCore import Qt

from desktop.emulator import Fault
from tests.ui.conftest import TURN_TIMEOUT, Harness


def test_the_wait_counts_down_and_cancel_stops_the_turn(harness: Harness) -> None:
    h, window = harness, harness.window
    assert h.worker.emulator is not None
    h.worker.emulator.inject(Fault("rate_limit", retry_after=30), times=1)
    countdown = window.retry_countdown
    assert not countdown.isVisible()

    editor = window.composer.editor
    h.qtbot.keyClicks(editor, "hello")
    h.qtbot.keyClick(editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    h.qtbot.waitUntil(countdown.isVisible, timeout=TURN_TIMEOUT)
    assert countdown.text.startswith("Retrying in ")
    assert "(retry 1 of 2): " in countdown.text and "API error (429" in countdown.text

    countdown.cancel_button.click()
    result = h.wait_turn(1)  # long before the 30 s wait would have ended
    assert result.stopped == "aborted"
    assert not countdown.isVisible()
    assert len(h.worker.emulator.requests) == 1  # nothing was sent again
