"""Tool constrained sampling (pi-ai ``api/constrained-sampling.ts``): strict schemas and grammars.

A tool may ask for JSON-schema constrained sampling or for an OpenAI grammar (Lark/regex).
Whether that is honoured depends on the route, and the decision changes the request bytes: a
strict-capable route gets a rewritten schema (every property required, optional ones made
nullable, ``additionalProperties: false``) and the API's strict flag; a "prefer" tool whose
schema cannot be made strict quietly falls back to the plain schema; a "require" tool fails
loudly. Grammar tools become the API's custom tools, whose calls carry one raw string input.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from desktop.pi.projection import ProjectionError
from desktop.pi.projection._js import js_stringify

#: Returns True when a route's strict mode rejects this schema keyword with this value.
UnsupportedKeyword = Callable[[str, Any], bool]

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


class UnsupportedStrictSchema(ValueError):
    """The schema uses a construct strict mode cannot express."""


def _clone(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _clone(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clone(v) for v in value]
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
    variants = schema.get("anyOf")
    return isinstance(variants, list) and any(_allows_null(v) for v in variants)


def _make_strict(schema: Any, unsupported: UnsupportedKeyword | None) -> None:
    if not isinstance(schema, dict):
        raise UnsupportedStrictSchema("boolean schemas are unsupported")
    for key in _UNSUPPORTED_STRICT_KEYS:
        if key in schema:
            raise UnsupportedStrictSchema(f"{key} schemas are unsupported")
    if unsupported is not None:
        for key, value in schema.items():
            if unsupported(key, value):
                raise UnsupportedStrictSchema(f"{key}: {js_stringify(value)} is unsupported")
    if "anyOf" in schema:
        variants = schema["anyOf"]
        if not isinstance(variants, list) or not variants:
            raise UnsupportedStrictSchema("anyOf must contain at least one schema")
        for variant in variants:
            if _is_structured(variant):
                raise UnsupportedStrictSchema("object and array unions are unsupported")
            _make_strict(variant, unsupported)
    if "items" in schema:
        if isinstance(schema["items"], list):
            raise UnsupportedStrictSchema("tuple schemas are unsupported")
        _make_strict(schema["items"], unsupported)
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
        _make_strict(prop, unsupported)
        if key not in required and not _allows_null(prop):
            properties[key] = {"anyOf": [prop, {"type": "null"}]}
    schema["required"] = list(properties)
    schema["additionalProperties"] = False


def make_strict_json_schema(schema: Any, unsupported: UnsupportedKeyword | None = None) -> dict[str, Any]:
    """A strict copy of a tool's parameter schema; the original is left untouched."""
    cloned = _clone(schema)
    if not isinstance(cloned, dict):
        raise UnsupportedStrictSchema("root schema must have type object")
    _make_strict(cloned, unsupported)
    if cloned.get("type") != "object":
        raise UnsupportedStrictSchema("root schema must have type object")
    return cloned


def json_schema_tool_parameters(tool: Mapping[str, Any], strict: bool | None) -> Any:
    """``getJsonSchemaToolParameters``: the strict schema when strict, else the tool's own."""
    return make_strict_json_schema(tool["parameters"]) if strict is True else tool["parameters"]


def resolve_json_schema_strict(
    tool: Mapping[str, Any], supports_strict: bool, unsupported: UnsupportedKeyword | None = None
) -> bool | None:
    """``resolveJsonSchemaStrictSampling``: True when the tool is sent strict; None leaves the
    API default in charge."""
    config = tool.get("constrainedSampling")
    if not isinstance(config, dict) or config.get("type") != "json_schema":
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
            f'Tool "{tool["name"]}" requires JSON-schema constrained sampling, but strict tools are '
            "unsupported. Pick a model with strict tool support or relax constrainedSampling.strict."
        )
    return None


@dataclass(frozen=True)
class GrammarSampling:
    #: "lark" or "regex".
    format: str
    definition: str
    #: The one required string argument that carries the tool's raw input.
    input_property: str


def _grammar_input_property(tool: Mapping[str, Any]) -> str:
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


def resolve_grammar(tool: Mapping[str, Any], supports_grammar: bool) -> GrammarSampling | None:
    """``resolveGrammarConstrainedSampling``: the grammar a tool is sent with, if the route takes one."""
    config = tool.get("constrainedSampling")
    if not config or config.get("type") != "grammar" or not supports_grammar:
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
        input_property = _grammar_input_property(tool)
    except ValueError as error:
        raise ProjectionError(
            f'Tool "{tool["name"]}" cannot use grammar constrained sampling: {error}.'
        ) from error
    definition = str(lark if has_lark else regex)
    return GrammarSampling("lark" if has_lark else "regex", definition, input_property)


def grammar_input_properties(tools: Iterable[Mapping[str, Any]], supports_grammar: bool) -> dict[str, str]:
    """Tool name -> the argument that carries a grammar tool's raw input."""
    if not supports_grammar:
        return {}
    # A tuple (the transcript's declared tools, kept per tool state) is named by itself,
    # another iterable by its tools.
    held = tools if isinstance(tools, tuple) else tuple(tools)
    slot: int | tuple[int, ...] = id(held) if held is tools else tuple(map(id, held))
    hit = _GRAMMARS.get(slot)
    if hit is None:
        properties: dict[str, str] = {}
        for tool in held:
            grammar = resolve_grammar(tool, True)
            if grammar is not None:
                properties[tool["name"]] = grammar.input_property
        if len(_GRAMMARS) >= _GRAMMARS_LIMIT:
            _GRAMMARS.clear()
        hit = (held, properties)
        _GRAMMARS[slot] = hit
    return dict(hit[1])


#: Each declared tool list's grammar inputs, by the tools' identities, holding the tools so
#: their identities name nothing else meanwhile (design X11, X13): a projection reads every tool the
#: transcript ever declared, the same objects request after request.
_GRAMMARS: dict[int | tuple[int, ...], tuple[tuple[Mapping[str, Any], ...], dict[str, str]]] = {}
_GRAMMARS_LIMIT = 256


def grammar_tool_input(tool_name: str, arguments: Mapping[str, Any], input_property: str) -> str:
    """``getGrammarToolInput``: a grammar tool call's raw input, replayed as the custom input."""
    value = arguments.get(input_property)
    if not isinstance(value, str):
        raise ProjectionError(
            f'Grammar tool call "{tool_name}" requires argument "{input_property}" to be a string.'
        )
    return value
