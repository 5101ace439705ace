"""Strict JSON-schema tool parameters for Gemini 3+ validated function calling.

A tool that asks for JSON-schema constrained sampling is sent with a strict variant of its
schema (every property required, optional ones made nullable, no extra properties) when the
model enforces it, which also switches function calling to ``VALIDATED`` (pi-ai
``constrained-sampling.ts``). Schemas strict mode cannot express fall back to the plain schema,
unless the tool *requires* constrained sampling, which is an error the caller must fix.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from desktop.pi.projection import ProjectionError

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
    """The schema uses something strict mode cannot express."""


def _types(schema: Mapping[str, Any]) -> list[Any]:
    kind = schema.get("type")
    if isinstance(kind, str):
        return [kind]
    return list(kind) if isinstance(kind, list) else []


def _structured(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    types = _types(schema)
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
    variants = schema.get("anyOf")
    return isinstance(variants, list) and any(_allows_null(v) for v in variants)


def _clone(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _clone(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clone(v) for v in value]
    return value


def _make_strict(schema: Any) -> None:
    if not isinstance(schema, dict):
        raise UnsupportedStrictSchema("boolean schemas are unsupported")
    for key in _UNSUPPORTED_KEYS:
        if key in schema:
            raise UnsupportedStrictSchema(f"{key} schemas are unsupported")
    if "anyOf" in schema:
        variants = schema["anyOf"]
        if not isinstance(variants, list) or not variants:
            raise UnsupportedStrictSchema("anyOf must contain at least one schema")
        for variant in variants:
            if _structured(variant):
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
    properties = schema.get("properties")
    if "properties" in schema and not isinstance(properties, dict):
        raise UnsupportedStrictSchema("object properties must be a schema map")
    required = schema.get("required")
    if "required" in schema and (
        not isinstance(required, list) or any(not isinstance(k, str) for k in required)
    ):
        raise UnsupportedStrictSchema("object required must be a string array")
    properties = properties or {}
    required_set = set(required) if isinstance(required, list) else set()
    if any(key not in properties for key in required_set):
        raise UnsupportedStrictSchema("required contains an unknown property")
    for key, prop in list(properties.items()):
        _make_strict(prop)
        if key not in required_set and not _allows_null(prop):
            properties[key] = {"anyOf": [prop, {"type": "null"}]}
    schema["required"] = list(properties)
    schema["additionalProperties"] = False


def strict_json_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    cloned = _clone(schema)
    if not isinstance(cloned, dict):
        raise UnsupportedStrictSchema("root schema must have type object")
    _make_strict(cloned)
    if cloned.get("type") != "object":
        raise UnsupportedStrictSchema("root schema must have type object")
    return cloned


def resolve_strict(tool: Mapping[str, Any], supports_strict: bool) -> bool:
    """Whether ``tool`` is sent in strict mode (pi-ai ``resolveJsonSchemaStrictSampling``)."""
    config = tool.get("constrainedSampling")
    if not isinstance(config, dict) or config.get("type") != "json_schema":
        return False
    if supports_strict:
        try:
            strict_json_schema(tool["parameters"])
            return True
        except UnsupportedStrictSchema as error:
            if config.get("strict") != "require":
                return False
            raise ProjectionError(
                f'Tool "{tool["name"]}" requires JSON-schema constrained sampling, but {error}.'
            ) from error
    if config.get("strict") == "require":
        raise ProjectionError(
            f'Tool "{tool["name"]}" requires JSON-schema constrained sampling, but strict tools are unsupported.'
        )
    return False
