"""Strict (constrained-sampling) tool schemas (pi-ai ``constrained-sampling.ts``).

A tool may ask for JSON-schema constrained sampling. Where the route supports strict tools
and the schema fits the strict subset, the schema is rewritten (every property required,
optional ones made nullable, ``additionalProperties: false``); otherwise the tool is sent
as usual, or the request fails if the tool *requires* strict sampling.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

from desktop.pi.projection import ProjectionError

UnsupportedKeyword = Callable[[str, Any], bool]

_UNSUPPORTED_KEYS = (
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


class UnsupportedStrictSchema(ValueError):
    """The schema uses something strict sampling cannot express."""


def _is_object(value: Any) -> bool:
    return isinstance(value, dict)


def _is_structured(schema: Any) -> bool:
    if not _is_object(schema):
        return False
    kind = schema.get("type")
    types = [kind] if isinstance(kind, str) else kind if isinstance(kind, list) else []
    return "object" in types or "array" in types or "properties" in schema or "items" in schema


def _allows_null(schema: Any) -> bool:
    if not _is_object(schema):
        return False
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    if "const" in schema and schema["const"] is None:
        return True
    if isinstance(schema.get("enum"), list) and None in schema["enum"]:
        return True
    any_of = schema.get("anyOf")
    return isinstance(any_of, list) and any(_allows_null(variant) for variant in any_of)


def _defined(schema: Mapping[str, Any], key: str) -> bool:
    return key in schema


def _make_strict(schema: Any, unsupported: UnsupportedKeyword | None) -> None:
    if not _is_object(schema):
        raise UnsupportedStrictSchema("boolean schemas are unsupported")
    for key in _UNSUPPORTED_KEYS:
        if _defined(schema, key):
            raise UnsupportedStrictSchema(f"{key} schemas are unsupported")
    if unsupported is not None:
        for key, value in schema.items():
            if unsupported(key, value):
                raise UnsupportedStrictSchema(f"{key} is unsupported")
    if _defined(schema, "anyOf"):
        variants = schema["anyOf"]
        if not isinstance(variants, list) or not variants:
            raise UnsupportedStrictSchema("anyOf must contain at least one schema")
        for variant in variants:
            if _is_structured(variant):
                raise UnsupportedStrictSchema("object and array unions are unsupported")
            _make_strict(variant, unsupported)
    if _defined(schema, "items"):
        if isinstance(schema["items"], list):
            raise UnsupportedStrictSchema("tuple schemas are unsupported")
        _make_strict(schema["items"], unsupported)
    is_object = schema.get("type") == "object"
    if _defined(schema, "properties") and not is_object:
        raise UnsupportedStrictSchema("properties require type object")
    if not is_object:
        return
    if _defined(schema, "additionalProperties") and schema["additionalProperties"] is not False:
        raise UnsupportedStrictSchema("schema-valued or true additionalProperties is unsupported")
    if _defined(schema, "properties") and not _is_object(schema["properties"]):
        raise UnsupportedStrictSchema("object properties must be a schema map")
    required_value = schema.get("required")
    if _defined(schema, "required") and (
        not isinstance(required_value, list) or any(not isinstance(k, str) for k in required_value)
    ):
        raise UnsupportedStrictSchema("object required must be a string array")
    properties: dict[str, Any] = schema.get("properties") or {}
    required = set(required_value) if isinstance(required_value, list) else set()
    if any(key not in properties for key in required):
        raise UnsupportedStrictSchema("required contains an unknown property")
    for key, prop in list(properties.items()):
        _make_strict(prop, unsupported)
        if key not in required and not _allows_null(prop):
            properties[key] = {"anyOf": [prop, {"type": "null"}]}
    schema["required"] = list(properties)
    schema["additionalProperties"] = False


def make_strict_json_schema(schema: Any, unsupported: UnsupportedKeyword | None = None) -> dict[str, Any]:
    """A strict copy of ``schema``; the input is never modified."""
    cloned = copy.deepcopy(schema)
    if not _is_object(cloned):
        raise UnsupportedStrictSchema("root schema must have type object")
    _make_strict(cloned, unsupported)
    if cloned.get("type") != "object":
        raise UnsupportedStrictSchema("root schema must have type object")
    result: dict[str, Any] = cloned
    return result


def resolve_strict_sampling(
    tool: Mapping[str, Any], supports_strict: bool, unsupported: UnsupportedKeyword | None = None
) -> bool | None:
    """True when the tool goes out strict; None when it goes out as a plain tool."""
    config = tool.get("constrainedSampling")
    if not config or config.get("type") != "json_schema":
        return None
    if supports_strict:
        try:
            make_strict_json_schema(tool["parameters"], unsupported)
            return True
        except UnsupportedStrictSchema as error:
            if config.get("strict") != "require":
                return None
            raise ProjectionError(
                f'Tool "{tool["name"]}" requires JSON-schema constrained sampling, but {error}.'
            ) from error
    if config.get("strict") == "require":
        raise ProjectionError(
            f'Tool "{tool["name"]}" requires JSON-schema constrained sampling, but strict tools are unsupported '
            "on this model; pick a model with strict tool support or relax constrainedSampling.strict."
        )
    return None


def tool_parameters(tool: Mapping[str, Any], strict: bool | None) -> Any:
    return make_strict_json_schema(tool["parameters"]) if strict else tool["parameters"]
