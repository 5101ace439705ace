"""The reader's fast path accepts exactly the lines the full path accepts (design X29, T9).

A user, assistant or tool result row whose line starts with its type is checked as msgspec
decodes it; any line it does not accept at once goes through the full path (orjson, envelope,
values, shape), which names the problem. The same file read with the fast path and without it
(rows kept decoded turn it off) must give the same rows, problems and set-aside lines.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from desktop.host.journal import read_session
from desktop.host.journal.lines import keeping_decoded
from desktop.host.journal.reader import SessionLog

ROUTE = {"provider": "p", "model": "m", "api": "anthropic-messages", "baseUrl": "http://x"}


def _user(row_id: str, **fields: Any) -> dict[str, Any]:
    row = {"type": "user", "v": 1, "id": row_id, "ts": 1, "message": {"role": "user", "content": "hi"}}
    row.update(fields)
    return row


def _assistant(row_id: str, **fields: Any) -> dict[str, Any]:
    message = {
        "role": "assistant",
        "content": [{"type": "text", "text": "ok"}],
        "stopReason": "stop",
        "usage": {"input": 1, "output": 2, "cacheRead": 3, "cacheWrite": 0, "cost": {"total": 0.5}},
    }
    row = {"type": "assistant", "v": 1, "id": row_id, "ts": 2, "message": message, "route": ROUTE}
    row.update(fields)
    return row


LINES: list[bytes] = [
    b'{"type":"session","v":1,"id":"S","ts":0,"app":"pi-desktop","appVersion":"t","cwd":"/w"}',
    orjson.dumps(_user("u1")),
    orjson.dumps(_assistant("a1")),
    orjson.dumps(_user("u1")),  # a duplicate id: the first one is used
    orjson.dumps({k: v for k, v in _user("no-id").items() if k != "id"}),
    orjson.dumps(_user("")),  # an empty id
    orjson.dumps(_user("v0", v=0)),
    orjson.dumps(_user("vtrue", v=True)),
    orjson.dumps(_user("newer", v=2)),  # a newer row: kept, read as unknown
    orjson.dumps(_user("ts-null", ts=None)),
    orjson.dumps({k: v for k, v in _user("no-ts").items() if k != "ts"}),
    orjson.dumps(_user("bad-message", message={"role": "user", "content": 3})),
    orjson.dumps(_assistant("no-route", route=None)),
    orjson.dumps(_assistant("extra", note={"kept": True})),
    orjson.dumps(_user("big", message={"role": "user", "content": "x", "timestamp": 2**63})),
    orjson.dumps(_assistant("deep")).replace(b'"ok"', b'"ok","x":' + b"[" * 300 + b"]" * 300),
    orjson.dumps(_user("typed-twice")).replace(b'"v":1', b'"type":"system","v":1'),
    b'{"type":"user","v":1,"id":"lone","ts":1,"message":{"role":"user","content":"\\udc00"}}',
    b'{"type":"user","v":1,"id":"nan","ts":NaN,"message":{"role":"user","content":"x"}}',
    b'{"type":"toolResult","v":1,"id":"t1","ts":3,"message":{"role":"toolResult","toolCallId":"c",'
    b'"toolName":"read","content":[{"type":"text","text":"x"}],"isError":false}}',
    b'{"type": "user", "v": 1, "id": "spaced", "message": {"role": "user", "content": "x"}}',
    # In a field this version does not know, which msgspec skips unread: a string that is not
    # UTF-8, a number no double holds, nesting past msgspec's limit (the fuzz found each).
    orjson.dumps(_user("bad-utf8")).replace(b'"v":1', b'"x":"\xff","v":1'),
    orjson.dumps(_user("huge")).replace(b'"v":1', b'"x":1e999,"v":1'),
    orjson.dumps(_user("nested")).replace(b'"v":1', b'"x":' + b"[" * 5000 + b"]" * 5000 + b',"v":1'),
    b'{"type":"user","v":1,"id":"trailing","message":{"role":"user","content":"x"}} x',
]


def _read(path: Path, *, fast: bool) -> tuple[SessionLog, dict[int, dict[str, Any]]]:
    seen: dict[int, dict[str, Any]] = {}

    def observe(number: int, row: dict[str, Any]) -> None:
        seen[number] = row

    if fast:
        return read_session(path, observe), seen
    with keeping_decoded():
        return read_session(path, observe), seen


def test_the_fast_path_accepts_and_refuses_what_the_full_path_does(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(LINES) + b"\n")

    fast, fast_seen = _read(path, fast=True)
    full, full_seen = _read(path, fast=False)

    assert fast.ids == full.ids
    assert [fast.rows.raw(n) for n in range(len(fast.rows))] == [
        full.rows.raw(n) for n in range(len(full.rows))
    ]
    assert fast.rows.type_codes() == full.rows.type_codes()
    assert fast.rows.all_flags() == full.rows.all_flags()
    assert fast.diagnostics == full.diagnostics
    assert fast.set_aside == full.set_aside
    assert fast.end == full.end
    # The well-formed message rows took the fast path: their user and tool result rows are not
    # observed (their type is all the index takes), their assistant rows come as the envelope
    # and the message. The rest took the full path and are observed whole.
    assert {full_seen[n]["id"] for n in full_seen.keys() - fast_seen.keys()} == {"u1", "no-ts", "t1"}
    assert [row["id"] for row in fast_seen.values() if row["type"] == "assistant" and "route" not in row] == [
        "a1",
        "extra",
    ]
    envelope = ("type", "id", "ts")
    for number, quick in fast_seen.items():
        whole = full_seen[number]
        assert fast.rows.row_id(number) == quick["id"]
        assert {k: quick[k] for k in envelope if k in quick} == {k: whole[k] for k in envelope if k in whole}
        for field in ("stopReason", "usage", "model"):
            assert quick["message"].get(field) == whole["message"].get(field)
    # The rows refused are refused for their own reason, and the good ones are all there.
    assert set(fast.ids) == {"u1", "a1", "newer", "no-ts", "extra", "t1", "spaced", "typed-twice"}
    assert fast.rows.type_of(fast.ids["typed-twice"]) == "system"  # orjson's reading: the last key
    assert len(fast.set_aside) == len(LINES) - 1 - len(fast.ids)
