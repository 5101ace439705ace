"""Restoring from a long context reads its system messages only (design G9).

The log holds a context's system messages decoded and reads every other message from its
row when asked; the scans for ``tool_activation`` sections and declared schemas look at
system messages alone, so they must not decode the rows of the conversation.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import orjson
import pytest

from desktop.host.journal import JournalWriter
from desktop.host.journal.lines import JournalRows
from desktop.host.tools.catalog import ToolCatalog
from desktop.session.activation import SECTION_NAME, ActivationSigner, restore_activation
from desktop.session.context_log import ContextLog, system_messages_at
from desktop.session.declarations import DeclarationPolicy, Declarations
from tests.session.support import OPUS, reply, tool_result


class _Unread(Sequence[dict[str, Any]]):
    """Rows that fail the test when any is read."""

    def __init__(self, count: int) -> None:
        self._count = count

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, index: Any) -> NoReturn:
        raise AssertionError(f"row {index} was read")


def _rows(turns: int) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for turn in range(turns):
        if turn % 10 == 0:
            sections: dict[str, Any] = {"guidance": f"rev {turn}"}
            if turn == 20:
                sections[SECTION_NAME] = None  # the newest section is a tombstone: nothing restored
            message = {"role": "system", "content": "", "sections": sections, "timestamp": turn}
            rows.append(
                {"type": "system", "v": 1, "id": f"s{turn}", "modelSystem": {"v": 1, "message": message}}
            )
        for kind in ("user", "assistant"):
            message = {
                "role": kind,
                "content": [{"type": "text", "text": f"{kind} {turn}"}],
                "timestamp": turn,
            }
            rows.append({"type": kind, "v": 1, "id": f"{kind[0]}{turn}", "message": message})
    return rows


def test_restoring_reads_only_the_system_messages_of_the_context() -> None:
    log = ContextLog()
    log.sync(_rows(30))
    messages = log.view.messages
    expected = [(i, m) for i, m in enumerate(list(messages)) if m["role"] == "system"]
    assert len(expected) == 3 and len(messages) == 63
    messages.rows = _Unread(len(messages.rows))
    assert system_messages_at(messages) == expected
    policy = DeclarationPolicy("on-demand", "test", False, 0, 0)
    Declarations(policy, ToolCatalog().snapshot()).adopt_history(messages)
    result = restore_activation(
        messages,
        identity="0" * 64,
        deferred_names=(),
        signer=ActivationSigner.ephemeral(),
        could_return=lambda _args: (),
    )
    assert result.source == "rejected" and "removed (null)" in result.reason


def _journal(path: Path, *, escaped_search: bool) -> JournalRows:
    """A real session file read back: a user question, an answer that calls ToolSearch (or a
    plain tool), and its result; with ``escaped_search`` the name is spelled with a JSON
    ``\\u`` escape, as a hand-edited file may."""
    JournalWriter.create(path, cwd=str(path.parent), app_version="test").close()
    tool = "ToolSearch" if escaped_search else "read"
    call = {"type": "toolCall", "id": "c1", "name": tool, "arguments": {"query": "select:word_count"}}
    assistant = reply([call], 2, input=1, output=1)
    result = tool_result("c1", tool, "activated", 3, activated=["word_count"])
    rows = [
        {"type": "user", "v": 1, "id": "u1", "message": {"role": "user", "content": "find", "timestamp": 1}},
        {"type": "assistant", "v": 1, "id": "a1", "route": OPUS, "message": assistant},
        {"type": "toolResult", "v": 1, "id": "t1", "message": result},
    ]
    data = b"".join(orjson.dumps(row, option=orjson.OPT_APPEND_NEWLINE) for row in rows)
    with open(path, "ab") as handle:
        handle.write(data.replace(b'"ToolSearch"', b'"\\u0054oolSearch"'))
    journal = JournalWriter.open(path, read_only=True)
    journal.close()
    assert isinstance(journal.rows, JournalRows) and not journal.diagnostics
    return journal.rows


def _evidence(messages: Sequence[Any]) -> tuple[str, str]:
    result = restore_activation(
        messages,
        identity="0" * 64,
        deferred_names=("word_count",),
        signer=ActivationSigner.ephemeral(),
        could_return=lambda _args: ("word_count",),
    )
    return result.source, result.reason


def test_a_conversation_without_toolsearch_is_not_decoded_for_evidence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No line of the journal names ToolSearch: restoration finds nothing to restore without
    decoding the conversation's rows (design G9)."""
    log = ContextLog()
    log.sync(_journal(tmp_path / "s.jsonl", escaped_search=False))

    def unread(self: JournalRows, index: int) -> NoReturn:
        raise AssertionError(f"row {index} was decoded")

    monkeypatch.setattr(JournalRows, "_row", unread)
    assert _evidence(log.view.messages) == (
        "none",
        "no activation section and no ToolSearch results in history",
    )


def test_a_toolsearch_name_spelled_with_an_escape_is_still_found(tmp_path: Path) -> None:
    """The line-level check only skips what cannot be there: a ``\\u`` escape can spell the
    name, so such a session is read in full and restores as the decoded messages do."""
    log = ContextLog()
    log.sync(_journal(tmp_path / "s.jsonl", escaped_search=True))
    messages = log.view.messages
    assert b"ToolSearch" not in (tmp_path / "s.jsonl").read_bytes()
    source, reason = _evidence(messages)
    assert (source, reason) == _evidence(list(messages))
    assert source == "legacy" and reason.endswith("activate word_count")
