"""Section diffing, legacy continuation (S3), baseline (S5) and the reserved skill prefix (S2)."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from desktop.host.journal import model_order
from desktop.pi.transcript import current_system_message
from desktop.session.compaction import (
    CompactionSettings,
    NothingToCompact,
    compaction_row_fields,
    plan_compaction,
)
from desktop.session.history import context_view
from desktop.session.sections import (
    SKILLS_HEADER,
    SKILLS_HEADER_TEXT,
    SkillEntry,
    desired_sections,
)
from desktop.session.state import effective_state
from desktop.session.system_state import DesiredState, system_fields_for

_ids = itertools.count()


def row(kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "v": 1, "id": f"r{next(_ids)}", "ts": 1, **fields}


def user(text: str) -> dict[str, Any]:
    return row("user", message={"role": "user", "content": text, "timestamp": 1})


def legacy_system(sections: dict[str, str | None]) -> dict[str, Any]:
    message = {"role": "system", "content": "", "sections": sections, "timestamp": 1}
    return row("system", modelSystem={"v": 1, "message": message})


def system_row_fields(
    rows_in_model_order: Sequence[Mapping[str, Any]],
    desired: DesiredState,
    *,
    timestamp: int,
    anchor_before: str | None = None,
) -> dict[str, Any] | None:
    """The runtime's decision, from rows instead of its log: the replayed state and whether any
    row carries model-system metadata."""
    has_model_system = any(
        isinstance(r.get("modelSystem" if r["type"] == "system" else "checkpoint"), dict)
        for r in rows_in_model_order
        if r["type"] in ("system", "compaction")
    )
    state = effective_state(list(context_view(rows_in_model_order).messages))
    return system_fields_for(
        state, has_model_system, desired, timestamp=timestamp, anchor_before=anchor_before
    )


def continue_once(rows: list[dict[str, Any]], desired: DesiredState) -> list[dict[str, Any]]:
    fields = system_row_fields(rows, desired, timestamp=2)
    return rows if fields is None else [*rows, row("system", **fields)]


SKILLS = [
    SkillEntry("lint", "Run the linters", "/s/lint/SKILL.md"),
    SkillEntry("deploy", "Ship it", "/s/d/SKILL.md"),
]


def desired(skills: list[SkillEntry] = SKILLS) -> DesiredState:
    return DesiredState(desired_sections(runtime="You are Pi.", skills=skills))


def test_legacy_aggregate_skills_section_is_split_once() -> None:
    rows = [
        legacy_system({"runtime": "You are Pi.", "skills": "<skills>lint, deploy</skills>"}),
        user("hello"),
    ]
    once = continue_once(rows, desired())
    assert len(once) == len(rows) + 1
    update = once[-1]["modelSystem"]["message"]
    assert update["sections"][SKILLS_HEADER] == SKILLS_HEADER_TEXT
    assert set(update["sections"]) == {"skills", "skill:deploy", "skill:lint"}
    assert "legacy skills" in once[-1]["label"]
    assert once[: len(rows)] == rows  # nothing rewritten or prepended
    twice = continue_once(once, desired())
    assert twice == once  # the second continuation appends nothing


def test_history_without_metadata_gets_one_baseline_row() -> None:
    rows = [
        user("hello"),
        row("assistant", message={"role": "assistant", "content": [], "stopReason": "stop"}),
    ]
    once = continue_once(rows, desired())
    assert len(once) == 3 and once[-1]["label"].startswith("baseline")
    state = effective_state(list(context_view(once).messages))
    assert state.sections == desired().sections
    assert continue_once(once, desired()) == once


def test_removing_a_skill_appends_only_its_tombstone() -> None:
    rows = continue_once([], desired())
    rows = continue_once(rows, desired(SKILLS[:1]))
    assert rows[-1]["modelSystem"]["message"]["sections"] == {"skill:deploy": None}


def test_editing_one_skill_appends_only_that_entry() -> None:
    rows = continue_once([], desired())
    edited = [SKILLS[0], SkillEntry("deploy", "Ship it carefully", "/s/d/SKILL.md")]
    rows = continue_once(rows, desired(edited))
    assert list(rows[-1]["modelSystem"]["message"]["sections"]) == ["skill:deploy"]


def test_unknown_model_system_version_contributes_nothing() -> None:
    future = row(
        "system", modelSystem={"v": 99, "message": {"role": "system", "content": "x", "timestamp": 1}}
    )
    assert list(context_view([future]).messages) == []


# --- property: replaying the journal yields the state the runtime held -----------------

skill_ids = st.sampled_from(["a", "b", "c", "d"])
events = st.lists(
    st.one_of(
        st.tuples(st.just("add"), skill_ids, st.text(min_size=1, max_size=8)),
        st.tuples(st.just("remove"), skill_ids, st.just("")),
        st.tuples(st.just("guidance"), st.just(""), st.text(max_size=8)),
        st.tuples(st.just("user"), st.just(""), st.text(max_size=400)),
        st.tuples(st.just("continue"), st.just(""), st.just("")),
        st.tuples(st.just("compact"), st.just(""), st.just("")),
    ),
    max_size=30,
)


def assistant(text: str) -> dict[str, Any]:
    return row(
        "assistant",
        message={"role": "assistant", "content": [{"type": "text", "text": text}], "stopReason": "stop"},
    )


@settings(max_examples=200, deadline=None)
@given(events)
def test_replay_equals_runtime_state(sequence: list[tuple[str, str, str]]) -> None:
    """Random skill edits, guidance changes, turns (user row persisted first, its update
    anchored before it), compactions and continuations."""
    skills: dict[str, str] = {}
    guidance = ""
    rows: list[dict[str, Any]] = []
    for kind, skill, text in sequence:
        anchor = None
        if kind == "add":
            skills[skill] = text
        elif kind == "remove":
            skills.pop(skill, None)
        elif kind == "guidance":
            guidance = text
        elif kind == "user":
            rows.append(user(text))
            anchor = rows[-1]["id"]
        elif kind == "compact":
            try:
                plan = plan_compaction(
                    context_view(model_order(rows)), CompactionSettings(keep_recent_tokens=20)
                )
            except NothingToCompact:
                continue
            rows.append(row("compaction", **compaction_row_fields(plan, "S", activation=None, route={})))
            continue
        wanted = DesiredState(
            desired_sections(
                runtime="R",
                skills=[SkillEntry(k, v, f"/{k}") for k, v in skills.items()],
                guidance=guidance or None,
            )
        )
        prior = [dict(r) for r in rows]
        fields = system_row_fields(model_order(rows), wanted, timestamp=2, anchor_before=anchor)
        if fields is not None:
            rows.append(row("system", **fields))
        if kind == "user":
            rows.append(assistant("ok"))
        assert rows[: len(prior)] == prior  # appended only: earlier rows untouched
        ordered = model_order(rows)
        replayed = current_system_message(list(context_view(ordered).messages))
        assert replayed is not None
        # Exactly the wanted sections: nothing lost, duplicated or resurrected after a tombstone.
        assert replayed.get("sections") == wanted.sections
        # A system row moves, at most, in front of the user row it is anchored to.
        position = {r["id"]: i for i, r in enumerate(ordered)}
        for j, system in enumerate(rows):
            if system["type"] != "system":
                continue
            for earlier in rows[:j]:
                if earlier["id"] != system.get("before"):
                    assert position[earlier["id"]] < position[system["id"]]
