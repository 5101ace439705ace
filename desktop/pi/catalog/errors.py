"""Errors for bad catalog data, worded so a user can find and fix the offending value."""

from __future__ import annotations

from typing import Any

import orjson


class CatalogFileError(ValueError):
    """A catalog file is unreadable or a field in it has the wrong shape.

    It names the file, the field (a JSON path such as ``models[12].compat.supportsToolSearch``)
    and what was wrong, because "invalid catalog" alone leaves the user nothing to act on.
    """

    def __init__(self, file: str, field: str, problem: str) -> None:
        self.file = file
        self.field = field
        self.problem = problem
        where = f"field {field}" if field else "the top level"
        super().__init__(
            f"invalid catalog file {file}: {where}: {problem}. "
            "Delete the file or refresh the catalog to replace it; the bundled snapshot is used meanwhile."
        )


class RouteError(ValueError):
    """A route cannot be resolved to a model dict (for example: no API or endpoint is known)."""


def decode_catalog_json(raw: bytes, origin: str) -> Any:
    """Catalog bytes (plain or gzipped JSON) as a document; CatalogFileError names what is wrong."""
    if raw[:2] == b"\x1f\x8b":
        # Lazy: the status budget.
        import gzip

        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise CatalogFileError(origin, "", f"not a readable gzip file ({exc})") from exc
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise CatalogFileError(origin, "", f"not valid JSON ({exc})") from exc
