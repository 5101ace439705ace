"""Strict-schema conversion and its error messages (pi-ai ``constrained-sampling.ts``)."""

from __future__ import annotations

from typing import Any

import pytest

from desktop.pi.projection import ProjectionError
from desktop.pi.projection._strict import (
    grammar_input_properties,
    make_strict_json_schema,
    resolve_json_schema_strict,
)


def _tool(parameters: dict[str, Any], strict: str) -> dict[str, Any]:
    return {
        "name": "t",
        "description": "d",
        "parameters": parameters,
        "constrainedSampling": {"type": "json_schema", "strict": strict},
    }


def test_optional_properties_become_nullable_and_input_is_untouched() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": ["integer", "null"]}, "c": {"type": "number"}},
        "required": ["a"],
    }
    strict = make_strict_json_schema(schema)
    assert strict["required"] == ["a", "b", "c"]
    assert strict["additionalProperties"] is False
    assert strict["properties"]["b"] == {"type": ["integer", "null"]}
    assert strict["properties"]["c"] == {"anyOf": [{"type": "number"}, {"type": "null"}]}
    assert "additionalProperties" not in schema and schema["required"] == ["a"]


def test_prefer_falls_back_and_require_fails_with_pi_ai_message() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "number", "minimum": 1}}}

    def rejects_minimum(key: str, _value: Any) -> bool:
        return key == "minimum"

    assert resolve_json_schema_strict(_tool(schema, "prefer"), True, rejects_minimum) is None
    assert resolve_json_schema_strict(_tool(schema, "prefer"), True) is True
    with pytest.raises(ProjectionError, match=r'Tool "t" requires .*, but minimum: 1 is unsupported\.'):
        resolve_json_schema_strict(_tool(schema, "require"), True, rejects_minimum)
    with pytest.raises(ProjectionError, match="strict tools are unsupported"):
        resolve_json_schema_strict(_tool(schema, "require"), False)


def test_grammar_tools_need_one_required_string() -> None:
    tool = {
        "name": "patch",
        "description": "d",
        "parameters": {"type": "object", "properties": {"input": {"type": "string"}}, "required": ["input"]},
        "constrainedSampling": {"type": "grammar", "variants": {"openai_lark": "start: /.+/"}},
    }
    assert grammar_input_properties([tool], True) == {"patch": "input"}
    assert grammar_input_properties([tool], False) == {}
    broken = {**tool, "parameters": {"type": "object", "properties": {}, "required": []}}
    with pytest.raises(ProjectionError, match="exactly one required string property"):
        grammar_input_properties([broken], True)
