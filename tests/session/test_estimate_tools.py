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


def test_tools_are_charged_once_and_so_trigger_no_automatic_compaction(
    tmp_path: Path, emulator: Emulator
) -> None:
    with _open(emulator, tmp_path, "plain.jsonl", extra=False) as plain:
        base = plain.runtime.context_tokens()
        declared = {t["name"] for t in plain.runtime.tools.declarations()}
        window = int(plain.runtime.route.model["contextWindow"])
    with _open(emulator, tmp_path, "more.jsonl", extra=True) as more:
        assert more.gate.policy.mode == "fixed"  # the whole catalog is declared up front
        added = [t for t in more.runtime.tools.declarations() if t["name"] not in declared]
        assert len(added) == 12
        extra = tools_tokens(added)
        # The baseline row declares them (toolsAdded) and the request lists them: once each.
        assert more.runtime.context_tokens() - base == extra
    # Between "the extra tools once" and "twice", with room for the user's message.
    threshold = base + extra + 200 + extra // 2
    assert extra // 2 > 400
    with _open(emulator, tmp_path, "s.jsonl", extra=True, reserve=window - threshold) as session:
        events: list[str] = []
        result = session.runtime.run_turn("hi", on_event=lambda e: events.append(str(e.get("type"))))
        assert result.stopped == "stop"
        assert "compaction_request" not in events
        notes = [r.get("text", "") for r in session.writer.rows if r["type"] == "note"]
        assert not any("Automatic compaction" in text for text in notes), notes
        assert not any(r["type"] == "compaction" for r in session.writer.rows)
