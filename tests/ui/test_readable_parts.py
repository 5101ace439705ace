"""Banners, the log viewer, the help page and the glossary (design G7)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QImage, QTextDocument

from desktop.ui.banner import MAX_BANNERS, BannerArea, printable
from desktop.ui.glossary import GLOSSARY, term, tooltip
from desktop.ui.help_page import PICTURES, HelpPage, picture
from desktop.ui.show_logs import LogViewer, log_tail


def test_printable_escapes_invalid_bytes_and_control_characters() -> None:
    assert printable(b"bad \xff\xfe byte") == "bad \\xff\\xfe byte"
    assert printable("line 3: \udcc3\x1b[0m done\n\tnext") == "line 3: \\xc3\\x1b[0m done\n\tnext"
    assert printable("ünïcode ✓") == "ünïcode ✓"


def test_banner_keeps_the_whole_message_selectable_and_closes(qtbot) -> None:
    area = BannerArea()
    qtbot.addWidget(area)
    area.show()
    long = "Could not open /tmp/x.jsonl: line 7: " + "word " * 80 + "\udcff"
    banner = area.show_message("error", long)
    assert area.isVisible()
    assert banner.text.endswith("\\xff") and "word " * 80 in banner.text
    assert banner.label.textInteractionFlags() & Qt.TextInteractionFlag.TextSelectableByMouse
    assert banner.label.wordWrap()
    qtbot.mouseClick(banner.close_button, Qt.MouseButton.LeftButton)
    assert area.banners == [] and not area.isVisible()


def test_banners_stack_newest_first_and_cap(qtbot) -> None:
    area = BannerArea()
    qtbot.addWidget(area)
    for i in range(MAX_BANNERS + 2):
        area.show_message("warning", f"message {i}")
    assert [b.text for b in area.banners][:2] == [f"message {MAX_BANNERS + 1}", f"message {MAX_BANNERS}"]
    assert len(area.banners) == MAX_BANNERS
    area.show_message("warning", "message 3")  # a repeat moves to the top instead of doubling
    assert [b.text for b in area.banners].count("message 3") == 1


def test_log_viewer_shows_the_newest_log_tail_safely(qtbot, tmp_path: Path) -> None:
    (tmp_path / "old.log").write_bytes(b"old\n")
    newest = tmp_path / "pi-desktop.log"
    newest.write_bytes(b"first line\nbad \xff byte\n")
    os.utime(tmp_path / "old.log", (1, 1))
    path, text = log_tail(tmp_path)
    assert path == newest and "bad \\xff byte" in text
    viewer = LogViewer(tmp_path)
    qtbot.addWidget(viewer)
    assert "first line" in viewer.text.toPlainText()
    assert log_tail(tmp_path / "missing")[0] is None


def test_glossary_tooltips_and_terms() -> None:
    assert "Epoch" in tooltip("epoch") and "revokes" in tooltip("epoch")
    assert 'title="' in term("Epoch", "epoch")
    with pytest.raises(KeyError):
        tooltip("no such term")
    for key in (
        "hidden system row",
        "anchored",
        "section",
        "tombstone",
        "epoch",
        "identity",
        "declaration policy",
        "fixed",
        "on-demand",
        "folded",
        "attributed",
        "native system sections",
        "cache break",
        "cached tokens",
        "uncached tokens",
    ):
        assert len(GLOSSARY[key].text) > 60


def test_help_page_has_pictures_glossary_and_shortcuts(qtbot) -> None:
    page = HelpPage([("Find", "Ctrl+F"), ("Compact", "Ctrl+Shift+K")])
    qtbot.addWidget(page)
    text = page.browser.toPlainText()
    assert "What am I looking at?" in text and "Ctrl+Shift+K" in text
    for entry in GLOSSARY.values():
        assert entry.title in text
    for name in PICTURES:
        image = page.browser.document().resource(
            QTextDocument.ResourceType.ImageResource, QUrl(f"picture:{name}")
        )
        assert isinstance(image, QImage) and not image.isNull()
        assert image.devicePixelRatio() == 2.0
    # Something is drawn: the bars (device pixels, twice the logical size) are not one flat colour.
    drawn = picture("cache-break", dark=False)
    colours = {drawn.pixel(x, 72) for x in range(0, drawn.width(), 7)}
    assert len(colours) > 2
