"""A request body walked against an official SDK's request TypedDicts, key by key.

Every key must be declared at its place, every required key present, literals must match
exactly, unions must have a matching member, all the way down. pydantic would silently ignore
unknown TypedDict keys, so the walk is explicit. The SDKs declare their types with
``typing_extensions``; both spellings of each form are accepted.
"""

from __future__ import annotations

import collections.abc
import types
import typing
from typing import Any, Union, get_args, get_origin

import typing_extensions
from typing_extensions import get_type_hints, is_typeddict

_REQUIRED = {typing.Required, typing_extensions.Required}
_NOT_REQUIRED = {typing.NotRequired, typing_extensions.NotRequired}
_WRAPPERS = _REQUIRED | _NOT_REQUIRED | {typing.Annotated, typing_extensions.Annotated}
_LITERALS = {typing.Literal, typing_extensions.Literal}


class Mismatch(Exception):
    """Where in the body and why the SDK's types reject it."""


def strip(tp: Any) -> Any:
    """``tp`` without ``Required``, ``NotRequired`` and ``Annotated``."""
    while get_origin(tp) in _WRAPPERS:
        tp = get_args(tp)[0]
    return tp


def hints(td: Any) -> dict[str, Any]:
    return get_type_hints(td, include_extras=True)


def _required_keys(td: Any, declared: dict[str, Any], hinted: bool) -> set[str]:
    """``__required_keys__`` misses ``Required[...]`` written as a string (PEP 563); with
    ``hinted`` the hints are read too."""
    if not hinted:
        return set(td.__required_keys__)
    marked = {key for key, hint in declared.items() if get_origin(hint) in _REQUIRED}
    optional = {key for key, hint in declared.items() if get_origin(hint) in _NOT_REQUIRED}
    return marked | (set(td.__required_keys__) - optional)


def check(value: Any, tp: Any, path: str = "body", *, hinted: bool = True) -> None:
    """Raise ``Mismatch`` unless ``value`` is an instance of the SDK type ``tp``. ``hinted=False``
    takes the required keys from ``__required_keys__`` alone: the Responses SDK marks keys
    ``Required`` that the API (and pi-ai) leave out."""
    tp = strip(tp)
    if tp is Any or tp is object:
        return
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        errors = []
        for member in get_args(tp):
            try:
                check(value, member, path, hinted=hinted)
                return
            except Mismatch as error:
                errors.append(str(error))
        raise Mismatch(f"{path}: no union member accepts {value!r:.80}: " + " | ".join(errors[:6]))
    if origin in _LITERALS:
        if not any(value == option and type(value) is type(option) for option in get_args(tp)):
            raise Mismatch(f"{path}: {value!r} not in {get_args(tp)}")
        return
    if tp is type(None):
        if value is not None:
            raise Mismatch(f"{path}: expected null")
        return
    if is_typeddict(tp):
        if not isinstance(value, dict):
            raise Mismatch(f"{path}: expected object {tp.__name__}")
        declared = hints(tp)
        for key in value:
            if key not in declared:
                raise Mismatch(f"{path}: key {key!r} unknown to {tp.__module__}.{tp.__name__}")
        for key in _required_keys(tp, declared, hinted):
            if key not in value:
                raise Mismatch(f"{path}: required key {key!r} of {tp.__name__} missing")
        for key, item in value.items():
            check(item, declared[key], f"{path}.{key}", hinted=hinted)
        return
    if origin in (list, collections.abc.Iterable, collections.abc.Sequence) or (
        isinstance(origin, type) and issubclass(origin, collections.abc.Sequence) and origin is not str
    ):
        if not isinstance(value, list):
            raise Mismatch(f"{path}: expected array")
        (item_type,) = get_args(tp) or (Any,)
        for index, item in enumerate(value):
            check(item, item_type, f"{path}[{index}]", hinted=hinted)
        return
    if origin in (dict, collections.abc.Mapping):
        if not isinstance(value, dict):
            raise Mismatch(f"{path}: expected object")
        value_type = get_args(tp)[1] if get_args(tp) else Any
        for key, item in value.items():
            check(item, value_type, f"{path}.{key}", hinted=hinted)
        return
    if tp is bool:
        if not isinstance(value, bool):
            raise Mismatch(f"{path}: expected bool, got {value!r:.40}")
        return
    if tp in (int, float):
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or (tp is int and isinstance(value, float))
        ):
            raise Mismatch(f"{path}: expected {tp.__name__}, got {value!r:.40}")
        return
    if tp is str:
        if not isinstance(value, str):
            raise Mismatch(f"{path}: expected string, got {value!r:.40}")
        return
    if getattr(tp, "__name__", "") == "SequenceNotStr":
        if not isinstance(value, list):
            raise Mismatch(f"{path}: expected array")
        return
    raise Mismatch(f"{path}: the checker does not know SDK type {tp!r}; extend check()")
