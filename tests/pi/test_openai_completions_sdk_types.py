"""Our Chat Completions bodies against the official ``openai`` Python SDK's request types.

Two independent checks for every openai-completions fixture case:

* a structural validator walks the body against the SDK's TypedDicts
  (``CompletionCreateParamsStreaming`` and everything it references): no unknown keys,
  required keys present, literals (roles, part types, enums) in range, scalar types right;
* bodies that use only SDK fields are also sent through ``openai.OpenAI().chat.completions
  .create(**body)`` into an ``httpx.MockTransport``; ``create`` rejects unknown keyword
  arguments, and the body the SDK serializes must equal ours.

Exclusion rule: pi-ai targets many OpenAI-compatible dialects and adds vendor fields the
SDK does not model (``VENDOR_*`` below: DeepSeek/z.ai ``thinking``, OpenRouter ``reasoning``
and ``provider``, vLLM ``priority``/chat-template kwargs, replayed ``reasoning_content``/
``reasoning_details``, Kimi's ``{"role": "system", "tools": [...]}`` declaration, Anthropic
``cache_control`` markers, the tool-result ``name``). A body carrying any of them skips the
SDK round trip; its remainder, with exactly those fields removed, is still validated strictly,
so a misspelled or misplaced standard field fails either way.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import httpx
import openai
import pytest
from openai.types.chat import completion_create_params

from tests.pi.pi_ai_cases import load_cases, project_case
from tests.pi.sdk_check import Mismatch, check

CASES = load_cases("openai_completions.json")
REQUEST_TYPE = completion_create_params.CompletionCreateParamsStreaming

#: Top-level request fields that belong to OpenAI-compatible dialects, not to the SDK.
VENDOR_REQUEST_FIELDS = frozenset(
    {
        "thinking",
        "reasoning",
        "enable_thinking",
        "chat_template_kwargs",
        "chat_template_args",
        "tool_stream",
        "provider",
        "providerOptions",
        "priority",
        "thinking_budget",
        "thinking_token_budget",
        "thinking_budget_tokens",
        "top_k",
        "min_p",
    }
)
#: Replayed reasoning on assistant messages (DeepSeek, Moonshot, OpenRouter, llama.cpp).
VENDOR_MESSAGE_FIELDS = frozenset({"reasoning_content", "reasoning", "reasoning_text", "reasoning_details"})


# --- the exclusion rule --------------------------------------------------------------------


def strip_vendor_fields(body: dict[str, Any]) -> tuple[dict[str, Any], set[str]]:
    """The body without the documented vendor fields, and which of them were present."""
    found: set[str] = set()
    stripped = copy.deepcopy(body)
    for key in list(stripped):
        if key in VENDOR_REQUEST_FIELDS:
            found.add(key)
            del stripped[key]
    messages = []
    for message in stripped["messages"]:
        if message["role"] == "system" and "tools" in message:
            found.add("system.tools")
            continue
        for key in VENDOR_MESSAGE_FIELDS & message.keys():
            found.add(f"message.{key}")
            del message[key]
        if message["role"] == "tool" and "name" in message:
            found.add("tool.name")
            del message["name"]
        if isinstance(message.get("content"), list):
            for part in message["content"]:
                if part.pop("cache_control", None) is not None:
                    found.add("cache_control")
        messages.append(message)
    stripped["messages"] = messages
    for tool in stripped.get("tools") or ():
        if tool.pop("cache_control", None) is not None:
            found.add("cache_control")
    return stripped, found


def send_through_sdk(body: dict[str, Any]) -> dict[str, Any]:
    """What the official SDK puts on the wire for ``create(**body)``."""
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=b"data: [DONE]\n\n")

    with httpx.Client(transport=httpx.MockTransport(handler)) as http:
        client = openai.OpenAI(
            api_key="sk-test", base_url="http://sdk.invalid/v1", http_client=http, max_retries=0
        )
        stream = client.chat.completions.create(**body)
        stream.close()
    (request,) = seen
    assert request.url.path == "/v1/chat/completions"
    sent: dict[str, Any] = json.loads(request.content)
    return sent


IDS = [c["name"] for c in CASES]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_body_fits_sdk_request_types(case: dict[str, Any]) -> None:
    stripped, vendor = strip_vendor_fields(project_case(case).body)
    check(stripped, REQUEST_TYPE, f"body (vendor fields excluded: {sorted(vendor)})")


SDK_ONLY = [c for c in CASES if not strip_vendor_fields(c["body"])[1]]


@pytest.mark.parametrize("case", SDK_ONLY, ids=[c["name"] for c in SDK_ONLY])
def test_sdk_only_body_round_trips_through_openai_client(case: dict[str, Any]) -> None:
    body = project_case(case).body
    assert send_through_sdk(body) == body


def test_rule_leaves_enough_sdk_only_bodies() -> None:
    """The exclusion rule must not quietly swallow the standard dialect."""
    assert len(SDK_ONLY) >= 6, [c["name"] for c in SDK_ONLY]


def test_validator_rejects_what_the_sdk_does_not_know() -> None:
    body = project_case(next(c for c in SDK_ONLY if c["body"].get("tools"))).body
    check(body, REQUEST_TYPE)
    misspelled = {**body, "max_complettion_tokens": 5}
    with pytest.raises(Mismatch, match="max_complettion_tokens"):
        check(misspelled, REQUEST_TYPE)
    tool = copy.deepcopy(body["tools"][0])
    tool["function"]["strictness"] = True
    for bad in (
        {**body, "messages": [{"role": "model", "content": "x"}]},
        {**body, "tools": [tool]},
        {**body, "messages": [{"role": "user", "content": [{"type": "image", "url": "x"}]}]},
    ):
        with pytest.raises(Mismatch):
            check(bad, REQUEST_TYPE)
    with pytest.raises(TypeError):
        send_through_sdk(misspelled)
