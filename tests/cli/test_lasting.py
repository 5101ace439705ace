"""A read-only command's parsed session leaves the cyclic collector's reach (the status budget, docs/architecture.md).

``status`` on a long session used to pay for collections that walked every parsed row again
and again (and once more at exit); the rows live until the command ends, so they are made with
the collector paused and then moved to the permanent generation.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.cli._files import read_session_log
from tests.cli.helpers import make_session


@pytest.fixture
def thawed() -> Iterator[None]:
    gc.unfreeze()
    yield
    gc.unfreeze()


def test_the_parsed_session_is_frozen_and_the_collector_left_on(tmp_path: Path, thawed: None) -> None:
    log = read_session_log(make_session(tmp_path))
    assert log.rows
    assert gc.isenabled()
    frozen = gc.get_freeze_count()
    assert frozen >= len(log.rows)  # every row dict (and what it holds) is in the permanent generation
    oldest = {id(obj) for obj in gc.get_objects(generation=2)}
    assert not any(id(row) in oldest for row in log.rows)


def test_a_paused_collector_stays_paused(tmp_path: Path, thawed: None) -> None:
    gc.disable()
    try:
        read_session_log(make_session(tmp_path))
        assert not gc.isenabled()
    finally:
        gc.enable()
