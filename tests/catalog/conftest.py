"""Shared catalog fixtures: real bundled snapshots, and helpers to write altered copies of them."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import orjson
import pytest

from desktop.pi.catalog import Catalog, build_catalog, default_catalog
from desktop.pi.catalog.pi_snapshot import bundled_bytes


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return default_catalog()


@pytest.fixture(scope="session")
def published() -> Catalog:
    """Pi's catalog exactly as pi-ai 1.0.3 publishes it: no patches."""
    return build_catalog(patches=())


@pytest.fixture
def pi_doc() -> dict[str, Any]:
    """A private, mutable copy of the bundled Pi catalog document."""
    doc: dict[str, Any] = orjson.loads(bundled_bytes())
    return copy.deepcopy(doc)


@pytest.fixture
def find_model() -> Callable[[dict[str, Any], str, str], dict[str, Any]]:
    def find(doc: dict[str, Any], provider: str, model_id: str) -> dict[str, Any]:
        for model in doc["models"]:
            if model["provider"] == provider and model["id"] == model_id:
                return model  # type: ignore[no-any-return]
        raise AssertionError(f"{provider}/{model_id} is not in the Pi snapshot")

    return find
