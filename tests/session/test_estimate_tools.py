"""The context estimate charges the request-level tool list once (design C4), through the runtime's
own ``context_tokens`` and its automatic-compaction trigger."""

from __future__ import annotations

from pathlib import Path

from desktop.emulator import Emulator
from desktop.host.settings import Settings
from desktop.session.assembly import OpenSession
from desktop.session.compaction import CompactionSettings
from desktop.session.estimate import tools_tokens
from tests.session.support import config, open_

EXTRA = """
def register(api):
    for i in range(12):
        api.register_tool(f"extra_{i:02d}", "An extra tool that makes the catalog larger " * 8,
                          {"type": "object", "properties": {"text": {"type": "string"}}}, lambda a: "ok")
"""


def _open(emu: Emulator, root: Path, name: str, *, extra: bool, reserve: int | None = None) -> OpenSession:
    extensions = []
    if extra:
        (root / "extra.py").write_text(EXTRA, encoding="utf-8")
        extensions.append(str(root / "extra.py"))
    compaction = (
        CompactionSettings()
        if reserve is None
        else CompactionSettings(reserve_tokens=reserve, keep_recent_tokens=100)
    )
    cfg = config(
        emu,
        root / "ws",
        "deepseek/deepseek-flash",
        settings=Settings(extensions=extensions),
        compaction=compaction,
    )
    return open_(root / name, cfg)


def test_tools_are_charged_once_before_the_first_usage(tmp_path: Path) -> None:
    with Emulator() as emu:
        with _open(emu, tmp_path, "plain.jsonl", extra=False) as plain:
            base = plain.runtime.context_tokens()
            declared = {t["name"] for t in plain.runtime.tools.declarations()}
        with _open(emu, tmp_path, "more.jsonl", extra=True) as more:
            assert more.gate.policy.mode == "fixed"  # the whole catalog is declared up front
            extra = [t for t in more.runtime.tools.declarations() if t["name"] not in declared]
            assert len(extra) == 12
            # The baseline row declares them (toolsAdded) and the request lists them: once each.
            assert more.runtime.context_tokens() - base == tools_tokens(extra)


def test_automatic_compaction_is_not_triggered_by_counting_tools_twice(tmp_path: Path) -> None:
    probe_root = tmp_path / "probe"
    probe_root.mkdir()
    with Emulator() as emu:
        with _open(emu, probe_root, "plain.jsonl", extra=False) as plain:
            base = plain.runtime.context_tokens()
            declared = {t["name"] for t in plain.runtime.tools.declarations()}
            window = int(plain.runtime.route.model["contextWindow"])
        with _open(emu, probe_root, "more.jsonl", extra=True) as more:
            extra = tools_tokens([t for t in more.runtime.tools.declarations() if t["name"] not in declared])
        # Between "the extra tools once" and "twice", with room for the user's message.
        threshold = base + extra + 200 + extra // 2
        assert extra // 2 > 400
        with _open(emu, tmp_path, "s.jsonl", extra=True, reserve=window - threshold) as session:
            assert session.gate.policy.mode == "fixed"
            events: list[str] = []
            result = session.runtime.run_turn("hi", on_event=lambda e: events.append(str(e.get("type"))))
            assert result.stopped == "stop"
            assert "compaction_request" not in events
            notes = [r.get("text", "") for r in session.writer.rows if r["type"] == "note"]
            assert not any("Automatic compaction" in text for text in notes), notes
            assert not any(r["type"] == "compaction" for r in session.writer.rows)
