"""pi sessions against pi itself (design X1).

The files under tests/fixtures/pi_sessions/ were written by pi-coding-agent's own
SessionManager (1.0.3 for v3, the last releases that wrote v2 and v1 for the older ones), and
expected.json holds what pi builds from them: ``buildSessionProjection`` messages and source
entries, ``convertToLlm`` output, model and thinking level for every leaf, and the body pi-ai
1.0.3 sends next on four routes (scripts/oracle-agent/README.md regenerates them).
"""

from __future__ import annotations

from typing import Any

import pytest

from desktop.session.foreign import PiSession, next_request, request_options
from tests.foreign.support import PI, as_json, pi_expected, pi_session

EXPECTED = pi_expected()
ORACLE_KEY = "sk-oracle-test-key"
LEAVES = [(name, leaf) for name, data in EXPECTED.items() for leaf in data["leaves"]]
REQUESTS = [(name, index) for name, data in EXPECTED.items() for index in range(len(data["requests"]))]


def session(name: str) -> PiSession:
    return pi_session(PI / name)


@pytest.mark.parametrize(("name", "leaf"), LEAVES, ids=[f"{n}:{leaf}" for n, leaf in LEAVES])
def test_context_matches_pi(name: str, leaf: str) -> None:
    want: dict[str, Any] = EXPECTED[name]["leaves"][leaf]
    context = session(name).context(None if leaf == "default" else leaf)
    assert as_json(context.agent_messages) == want["agentMessages"]
    assert as_json(context.messages) == want["llmMessages"]
    assert context.thinking_level == want["thinkingLevel"]
    model = want["model"]
    assert context.model == ((model["provider"], model["modelId"]) if model else None)
    if "llmEntryIds" in want:  # v1 ids are drawn at random by pi on every load
        assert context.sources == want["llmEntryIds"]


@pytest.mark.parametrize(("name", "index"), REQUESTS, ids=[f"{n}:{i}" for n, i in REQUESTS])
def test_next_body_matches_pi_ai(name: str, index: int) -> None:
    case = EXPECTED[name]["requests"][index]
    opened = session(name)
    options = request_options(opened, opened.context())._replace(api_key=ORACLE_KEY)
    request = next_request(opened, case["model"], options=options)
    assert request.url == case["url"]
    assert request.body == case["body"]
    assert request.body_bytes == case["bodyText"].encode("utf-8")


@pytest.mark.parametrize("index", range(4))
def test_a_route_key_resolves_to_the_same_bytes(index: int) -> None:
    """The window names routes, not pi-ai Model objects: Desktop's catalog gives the same body."""
    case = EXPECTED["v3_compaction.jsonl"]["requests"][index]
    opened = session("v3_compaction.jsonl")
    options = request_options(opened, opened.context())._replace(api_key=ORACLE_KEY)
    assert next_request(opened, case["route"], options=options).body_bytes == case["bodyText"].encode()


def test_request_options_follow_pi_agent_core() -> None:
    opened = session("v3_branches.jsonl")
    options = request_options(opened, opened.context())
    assert options.session_id == EXPECTED["v3_branches.jsonl"]["header"]["id"]
    assert options.reasoning == "high"  # the thinking level on the current branch
    other = [leaf for leaf in EXPECTED["v3_branches.jsonl"]["leaves"] if leaf != "default"]
    levels = {request_options(opened, opened.context(leaf)).reasoning for leaf in other}
    assert "medium" in levels  # the branch that changed it


def test_v1_entries_get_stable_line_ids_and_the_compaction_its_kept_entry() -> None:
    opened = session("v1_linear.jsonl")
    assert opened.version == 1
    ids = [e["id"] for e in opened.entries]
    assert ids == [f"L{line}" for line in opened.lines]
    assert [e["parentId"] for e in opened.entries] == [None, *ids[:-1]]
    compaction = next(e for e in opened.entries if e["type"] == "compaction")
    assert "firstKeptEntryIndex" not in compaction
    kept = opened.entries[opened.index[compaction["firstKeptEntryId"]]]
    assert kept["message"]["content"] == "Summarize please"
    assert session("v1_linear.jsonl").entries == opened.entries  # the same ids on every read


def test_v2_hook_messages_read_as_custom_without_touching_the_raw_entry() -> None:
    opened = session("v2_tree.jsonl")
    customs = [e for e in opened.entries if e["type"] == "message" and e["message"]["role"] == "custom"]
    assert len(customs) == 1
    raw = (PI / "v2_tree.jsonl").read_text(encoding="utf-8")
    assert '"role":"hookMessage"' in raw and '"role":"custom"' not in raw
