"""Restoring from a long context reads its system messages only (design G9, D6).

The log holds a context's system messages decoded and reads every other message from its
row when asked; the scans for ``tool_activation`` sections and declared schemas look at
system messages alone, so they must not decode the rows of the conversation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NoReturn

from desktop.host.tools.catalog import ToolCatalog
from desktop.session.activation import SECTION_NAME, ActivationSigner, restore_activation
from desktop.session.context_log import ContextLog, system_messages_at
from desktop.session.declarations import DeclarationPolicy, Declarations


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
    policy = DeclarationPolicy("on-demand", "test", False, 0, 0, 0)
    Declarations(policy, ToolCatalog().snapshot()).adopt_history(messages)
    result = restore_activation(
        messages,
        identity="0" * 64,
        deferred_names=(),
        signer=ActivationSigner.ephemeral(),
        could_return=lambda _args: (),
    )
    assert result.source == "rejected" and "removed (null)" in result.reason
