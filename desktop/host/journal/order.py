"""Model order beside journal order (design T4).

The user row of a turn is written before the system updates of that turn are known; those system
rows carry ``before: <user row id>`` and the model must see them in front of that user row. Journal
order stays the file order; model order is derived from it by a pure, deterministic rule:

* a ``system`` row with ``before: X`` goes immediately before row X;
* several rows anchored to the same X keep their journal order;
* an anchor that names no row, names itself, or names another anchored row is ignored (the row stays
  at its journal position), so there are no chains or cycles and every row appears exactly once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

R = TypeVar("R", bound=Mapping[str, Any])


def anchor_of(row: Mapping[str, Any]) -> str | None:
    if row.get("type") != "system":
        return None
    before = row.get("before")
    return before if isinstance(before, str) and before else None


def effective_anchors(rows: Sequence[Mapping[str, Any]]) -> dict[int, str]:
    """Map the index of each row whose anchor is honoured to the id it is placed before."""
    present = {row.get("id") for row in rows}
    wanted = {index: anchor_of(row) for index, row in enumerate(rows)}
    anchored_ids = {rows[index].get("id") for index, target in wanted.items() if target is not None}
    return {
        index: target
        for index, target in wanted.items()
        if target is not None
        and target in present
        and target != rows[index].get("id")
        and target not in anchored_ids
    }


def model_order(rows: Sequence[R]) -> list[R]:
    """The rows in the order the model sees them."""
    anchors = effective_anchors(rows)
    if not anchors:
        return list(rows)
    waiting: dict[str, list[R]] = {}
    for index, target in anchors.items():  # dicts keep insertion (journal) order
        waiting.setdefault(target, []).append(rows[index])
    ordered: list[R] = []
    for index, row in enumerate(rows):
        if index in anchors:
            continue
        row_id = row.get("id")
        if isinstance(row_id, str):
            ordered.extend(waiting.pop(row_id, ()))  # pop: a repeated id cannot repeat rows
        ordered.append(row)
    return ordered
