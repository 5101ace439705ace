"""Constrained sampling for OpenAI tools (pi-ai ``api/constrained-sampling.ts``).

A tool may ask for strict JSON-schema sampling or for an OpenAI grammar (Lark/regex)
custom tool. Whether that is honoured depends on the model's compat flags, and the
decision changes the request bytes: strict schemas are rewritten (every property
required, optional ones made nullable, ``additionalProperties: false``), and grammar
tools become ``custom`` tools whose calls and results use ``custom_tool_call`` items.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from desktop.pi.projection import ProjectionError

_UNSUPPORTED_STRICT_KEYS = (
    "$ref",
    "$defs",
    "definitions",
    "allOf",
    "oneOf",
    "patternProperties",
    "dependentSchemas",
    "dependencies",
    "unevaluatedProperties",
    "propertyNames",
    "contains",
    "prefixItems",
    "not",
    "if",
    "then",
    "else",
)


class UnsupportedStrictSchema(Exception):
    """The schema uses a construct strict mode cannot express."""


def _deep_copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _deep_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_deep_copy(v) for v in value]
    return value


def _is_structured(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    kind = schema.get("type")
    types = [kind] if isinstance(kind, str) else kind if isinstance(kind, list) else []
    return "object" in types or "array" in types or "properties" in schema or "items" in schema


def _allows_null(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    if ("const" in schema and schema["const"] is None) or (
        isinstance(schema.get("enum"), list) and None in schema["enum"]
    ):
        return True
    any_of = schema.get("anyOf")
    return isinstance(any_of, list) and any(_allows_null(v) for v in any_of)


def _make_strict(schema: Any) -> None:
    if not isinstance(schema, dict):
        raise UnsupportedStrictSchema("boolean schemas are unsupported")
    for key in _UNSUPPORTED_STRICT_KEYS:
        if key in schema:
            raise UnsupportedStrictSchema(f"{key} schemas are unsupported")
    if "anyOf" in schema:
        any_of = schema["anyOf"]
        if not isinstance(any_of, list) or not any_of:
            raise UnsupportedStrictSchema("anyOf must contain at least one schema")
        for variant in any_of:
            if _is_structured(variant):
                raise UnsupportedStrictSchema("object and array unions are unsupported")
            _make_strict(variant)
    if "items" in schema:
        if isinstance(schema["items"], list):
            raise UnsupportedStrictSchema("tuple schemas are unsupported")
        _make_strict(schema["items"])
    is_object = schema.get("type") == "object"
    if "properties" in schema and not is_object:
        raise UnsupportedStrictSchema("properties require type object")
    if not is_object:
        return
    if "additionalProperties" in schema and schema["additionalProperties"] is not False:
        raise UnsupportedStrictSchema("schema-valued or true additionalProperties is unsupported")
    if "properties" in schema and not isinstance(schema["properties"], dict):
        raise UnsupportedStrictSchema("object properties must be a schema map")
    required_value = schema.get("required")
    if "required" in schema and (
        not isinstance(required_value, list) or any(not isinstance(k, str) for k in required_value)
    ):
        raise UnsupportedStrictSchema("object required must be a string array")
    properties: dict[str, Any] = schema.get("properties") or {}
    required = set(required_value) if isinstance(required_value, list) else set()
    if any(key not in properties for key in required):
        raise UnsupportedStrictSchema("required contains an unknown property")
    for key, prop in properties.items():
        _make_strict(prop)
        if key not in required and not _allows_null(prop):
            properties[key] = {"anyOf": [prop, {"type": "null"}]}
    schema["required"] = list(properties)
    schema["additionalProperties"] = False


def make_strict_json_schema(schema: Any) -> dict[str, Any]:
    """A strict copy of a tool's parameter schema; the original is left untouched."""
    cloned = _deep_copy(schema)
    if not isinstance(cloned, dict):
        raise UnsupportedStrictSchema("root schema must have type object")
    _make_strict(cloned)
    if cloned.get("type") != "object":
        raise UnsupportedStrictSchema("root schema must have type object")
    return cloned


def json_schema_tool_parameters(tool: Mapping[str, Any], strict: bool | None) -> Any:
    return make_strict_json_schema(tool["parameters"]) if strict is True else tool["parameters"]


def resolve_json_schema_strict(tool: Mapping[str, Any], supports_strict_mode: bool) -> bool | None:
    """True when the tool is sent strict; None leaves the API default in charge."""
    config = tool.get("constrainedSampling")
    if not config or config.get("type") != "json_schema":
        return None
    if supports_strict_mode:
        try:
            make_strict_json_schema(tool["parameters"])
            return True
        except UnsupportedStrictSchema as error:
            if config.get("strict") != "require":
                return None
            raise ProjectionError(
                f'Tool "{tool["name"]}" requires JSON-schema constrained sampling, but {error}.'
            ) from error
    if config.get("strict") == "require":
        raise ProjectionError(
            f'Tool "{tool["name"]}" requires JSON-schema constrained sampling, but strict tools are unsupported.'
        )
    return None


@dataclass(frozen=True)
class Grammar:
    syntax: str
    definition: str
    input_property: str


def _infer_input_property(tool: Mapping[str, Any]) -> str:
    schema = tool["parameters"]
    if schema.get("type") != "object":
        raise ValueError("grammar constrained sampling requires an object parameter schema")
    required = schema.get("required")
    if not isinstance(required, list) or len(required) != 1 or not isinstance(required[0], str):
        raise ValueError("grammar constrained sampling requires exactly one required string property")
    name = required[0]
    prop = (schema.get("properties") or {}).get(name)
    if not prop:
        raise ValueError(f"grammar constrained sampling requires a properties entry for {name}")
    if prop.get("type") != "string":
        raise ValueError(f"grammar constrained sampling property {name} must have type string")
    return name


def resolve_grammar(tool: Mapping[str, Any], supports_grammar_tools: bool) -> Grammar | None:
    config = tool.get("constrainedSampling")
    if not config or config.get("type") != "grammar" or not supports_grammar_tools:
        return None
    variants = config.get("variants") or {}
    lark = variants.get("openai_lark")
    regex = variants.get("openai_regex")
    has_lark = isinstance(lark, str) and bool(lark.strip())
    has_regex = isinstance(regex, str) and bool(regex.strip())
    if not has_lark and not has_regex:
        raise ProjectionError(
            f'Tool "{tool["name"]}" cannot use grammar constrained sampling: '
            "no supported grammar variant was provided."
        )
    try:
        input_property = _infer_input_property(tool)
    except ValueError as error:
        raise ProjectionError(
            f'Tool "{tool["name"]}" cannot use grammar constrained sampling: {error}.'
        ) from error
    definition = str(lark if has_lark else regex)
    return Grammar("lark" if has_lark else "regex", definition, input_property)


def grammar_input_properties(
    tools: Iterable[Mapping[str, Any]], supports_grammar_tools: bool
) -> dict[str, str]:
    """Tool name -> the argument that carries a grammar tool's free-form input."""
    if not supports_grammar_tools:
        return {}
    properties: dict[str, str] = {}
    for tool in tools:
        grammar = resolve_grammar(tool, True)
        if grammar:
            properties[tool["name"]] = grammar.input_property
    return properties


def grammar_tool_input(tool_name: str, arguments: Mapping[str, Any], input_property: str) -> str:
    value = arguments.get(input_property)
    if not isinstance(value, str):
        raise ProjectionError(
            f'Grammar tool call "{tool_name}" requires argument "{input_property}" to be a string.'
        )
    return value
