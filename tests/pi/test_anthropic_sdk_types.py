"""Our Anthropic request bodies against the official ``anthropic`` Python SDK's request types.

The conformance test proves we match pi-ai; this one proves the shape is one Anthropic's own
SDK describes. Every projected body is walked against ``MessageCreateParamsStreaming`` (the
beta params TypedDict) through its ``__annotations__``: every key must be declared, every
required key present, literals must match, unions must have a matching member, all the way
down to content blocks, tools and cache-control markers.

Exclusion rule: a field pi-ai sends that the installed SDK does not declare is listed in
``NOT_IN_SDK`` with the TypedDict that lacks it. Only that field is removed before the walk;
the rest of the body is still checked. The test asserts the SDK really lacks each listed field,
so a stale entry fails ``test_exclusions_are_still_needed`` as the SDK changes.
"""

from __future__ import annotations

from typing import Any

import pytest
from anthropic.types.beta.message_create_params import MessageCreateParamsStreaming

from tests.pi.pi_ai_cases import load_cases, project_case
from tests.pi.sdk_check import Mismatch, check, hints

CASES = load_cases("anthropic.json")

#: (container key or "" for the top level, field, the SDK TypedDict that does not declare it).
NOT_IN_SDK: tuple[tuple[str, str, str], ...] = (
    # pi-ai sends temperature (non-thinking, non-managed-effort models); this SDK's beta params
    # no longer declare sampling parameters at all.
    ("", "temperature", "anthropic.types.beta.message_create_params.MessageCreateParamsBase"),
)


def _resolve(dotted: str) -> Any:
    module, _, name = dotted.rpartition(".")
    return getattr(__import__(module, fromlist=[name]), name)


def _without_undeclared_fields(body: dict[str, Any]) -> dict[str, Any]:
    """The body minus exactly the listed fields; everything else is still checked."""
    body = dict(body)
    for container, key, _ in NOT_IN_SDK:
        if not container:
            body.pop(key, None)
        elif isinstance(body.get(container), dict) and key in body[container]:
            body[container] = {k: v for k, v in body[container].items() if k != key}
    return body


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_projected_body_matches_sdk_request_types(case: dict[str, Any]) -> None:
    check(_without_undeclared_fields(project_case(case).body), MessageCreateParamsStreaming)


def test_exclusions_are_still_needed() -> None:
    for _, key, dotted in NOT_IN_SDK:
        assert key not in hints(_resolve(dotted)), (
            f"the SDK now declares {key} on {dotted}; drop the exclusion"
        )


def test_cases_cover_the_interesting_shapes() -> None:
    """The walk above visits native tool changes, effort messages, images and thinking blocks."""
    seen: set[str] = set()
    for case in CASES:
        for message in project_case(case).body["messages"]:
            content = message["content"]
            seen.add(f"role:{message['role']}")
            if "output_config" in message:
                seen.add("system-output_config")
            if isinstance(content, list):
                seen.update(block["type"] for block in content)
    assert seen >= {
        "role:system",
        "system-output_config",
        "tool_addition",
        "tool_removal",
        "tool_use",
        "tool_result",
        "image",
        "thinking",
        "redacted_thinking",
    }, seen


@pytest.mark.parametrize(
    ("mutate", "reason"),
    [
        (lambda b: b.update(unknown_field=1), "unknown"),
        (lambda b: b.pop("max_tokens"), "required key 'max_tokens'"),
        (lambda b: b["messages"].append({"role": "robot", "content": "x"}), "no union member"),
        (lambda b: b["tools"][0].update(input_schema="not a schema"), "tools"),
        (lambda b: b["messages"][0].update(content=[{"type": "text", "txt": "typo"}]), "no union member"),
        (lambda b: b.update(stream=False), "stream"),
        (lambda b: b["system"][0].update(cache_control={"type": "persistent"}), "system"),
    ],
)
def test_validator_rejects_malformed_bodies(mutate: Any, reason: str) -> None:
    case = next(c for c in CASES if c["name"] == "haiku45-no-reasoning-temperature")
    body = _without_undeclared_fields(project_case(case).body)
    check(body, MessageCreateParamsStreaming)  # valid before the mutation
    mutate(body)
    with pytest.raises(Mismatch, match=reason):
        check(body, MessageCreateParamsStreaming)
