"""Under ``CI=true`` a missing packaging tool fails the run instead of skipping it (design G8).

Skips are for a developer's machine; on CI a skipped validator would let a broken desktop
entry, MIME package or workflow through unnoticed.
"""

from __future__ import annotations

import pytest
from packaging_support import require_tool

ABSENT = "pi-desktop-no-such-validator"


def test_a_missing_tool_fails_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true"):
        require_tool(ABSENT, "no-such-package")


def test_a_missing_tool_skips_on_a_developer_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no-such-package"):
        require_tool(ABSENT, "no-such-package")


def test_a_present_tool_is_found_either_way(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    assert require_tool("sh", "dash").endswith("/sh")
