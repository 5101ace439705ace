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


def honoured_anchors(ids: Sequence[object], anchors: Mapping[int, str]) -> dict[int, str]:
    """Map the number of each row whose anchor is honoured to the id it is placed before, from
    the rows' ids and their anchors (row number -> target)."""
    if not anchors:
        return {}
    present = set(ids)
    anchored_ids = {ids[index] for index in anchors}
    return {
        index: target
        for index, target in anchors.items()
        if target in present and target != ids[index] and target not in anchored_ids
    }


def order_indices(ids: Sequence[object], anchors: Mapping[int, str]) -> list[int] | None:
    """Model order as row numbers, from the rows' ids and anchors; None when nothing moves.
    What ``model_order`` does, for a consumer that keeps row numbers instead of rows."""
    honoured = honoured_anchors(ids, anchors)
    if not honoured:
        return None
    waiting: dict[str, list[int]] = {}
    for index, target in sorted(honoured.items()):  # journal order within one target
        waiting.setdefault(target, []).append(index)
    ordered: list[int] = []
    for index, row_id in enumerate(ids):
        if index in honoured:
            continue
        if isinstance(row_id, str):
            ordered.extend(waiting.pop(row_id, ()))  # pop: a repeated id cannot repeat rows
        ordered.append(index)
    return ordered


def model_order(rows: Sequence[R]) -> list[R]:
    """The rows in the order the model sees them."""
    wanted = {index: target for index, row in enumerate(rows) if (target := anchor_of(row)) is not None}
    order = order_indices([row.get("id") for row in rows], wanted)
    return list(rows) if order is None else [rows[index] for index in order]
