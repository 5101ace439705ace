"""The Usage tab names the same cache misses as `status`, through the real window (design P13).

A turn writes the session's prefix into the emulator's cache; the emulator's clock then jumps
two days (its cache expires) while the session's own clock moves seconds, so the second
turn reads nothing though the transcript's times say warm: one miss, `likely_server_side`.
The Usage tab's panel must show the summary `status` computes from the same transcript (hit
ratio, miss count, re-cached tokens) and the miss with its cause. A screenshot of the panel is
saved when PI_SCREENSHOTS names a folder.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from PySide6.QtWidgets import QLabel

from desktop.pi.cache_misses import transcript_summary
from desktop.ui.cache_miss_panel import summary_text
from desktop.ui.main_window import TAB_PAYLOAD, TAB_USAGE
from tests.ui.conftest import Harness


def test_the_usage_tab_shows_status_s_miss_causes(harness: Harness) -> None:
    h, window = harness, harness.window
    window.tabs.setCurrentIndex(TAB_USAGE)  # the panel sums the misses while its tab is shown
    h.type_and_send("Say something short.")
    assert h.wait_turn(1).error is None
    emulator = h.worker.emulator
    assert emulator is not None
    later = 2 * 24 * 3_600_000  # past every provider's retention, on the emulator's clock only
    emulator.clock = lambda: time.time_ns() // 1_000_000 + later
    h.type_and_send("Say something else.")
    assert h.wait_turn(2).error is None
    panel = window.usage_view.cache_misses
    h.qtbot.waitUntil(lambda: "1 miss" in panel.summary.text(), timeout=10_000)
    runtime = h.worker.runtime
    assert runtime is not None
    expected = transcript_summary(runtime.view().messages).to_json()  # what `status` reports
    assert expected["misses"] == 1 and expected["causes"] == {"likely_server_side": 1}
    assert panel.summary.text() == summary_text(expected)
    assert panel.table.rowCount() == 1
    item = panel.table.item(0, 1)
    assert item is not None and item.text() == "likely_server_side"
    recached = panel.table.item(0, 3)
    assert recached is not None and recached.text() == f"{expected['recachedTokens']:,}"
    # One count of the misses on the tab: the totals line leaves them to the panel.
    assert "miss" not in window.usage_view.summary.text()
    folder = os.environ.get("PI_SCREENSHOTS")
    if folder:
        window.resize(1280, 800)
        window.tabs.setCurrentIndex(TAB_USAGE)
        h.qtbot.wait(200)
        window.grab().save(str(Path(folder) / "usage-cache-misses-1280x800.png"))
        window.tabs.setCurrentIndex(TAB_PAYLOAD)  # the countdown (design P9)

        def ticking() -> bool:
            labels = window.findChildren(QLabel)
            return any(x.objectName().endswith("CacheClock") and "left" in x.text() for x in labels)

        h.qtbot.waitUntil(ticking, timeout=10_000)
        window.grab().save(str(Path(folder) / "payload-cache-countdown-1280x800.png"))
