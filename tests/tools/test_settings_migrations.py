"""The settings file has a schema version and named migrations, each applied once and recorded."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import orjson
import pytest

from desktop.host.settings import (
    MIGRATIONS,
    SETTINGS_VERSION,
    Migration,
    Settings,
    SettingsError,
    load_settings,
    migrate,
    upgrade_settings_file,
)

#: A settings file as Pi Desktop wrote them before the schema had a version.
VERSION_0 = {
    "permissions": {"mode": "accept-edits"},
    "mcpServers": {"files": {"command": "python", "args": ["server.py"], "env": {"K": "V"}}},
    "hooks": {"PreToolUse": [{"matcher": "bash", "hooks": [{"type": "command", "command": "./check.sh"}]}]},
    "extensions": ["~/ext.py"],
    "tools": {"declarations": "on-demand"},
    "someOtherTool": {"kept": True},
}


def _write(path: Path, raw: dict[str, Any]) -> Path:
    path.write_bytes(orjson.dumps(raw))
    return path


def test_the_migrations_chain_from_zero_to_the_current_version() -> None:
    assert [m.source for m in MIGRATIONS] == list(range(SETTINGS_VERSION))
    assert len({m.name for m in MIGRATIONS}) == len(MIGRATIONS)


def test_reading_an_old_file_migrates_in_memory_and_never_writes(tmp_path: Path) -> None:
    path = _write(tmp_path / "settings.json", VERSION_0)
    before = path.read_bytes()
    settings = load_settings(path)
    assert settings.version == SETTINGS_VERSION
    assert settings.permissions.mode == "accept-edits" and settings.tools.declarations == "on-demand"
    assert settings.mcpServers["files"].env == {"K": "V"} and settings.mcpServers["files"].args == [
        "server.py"
    ]
    assert settings.hooks.PreToolUse[0].hooks[0].command == "./check.sh"
    assert settings.extra == {"someOtherTool": {"kept": True}}
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.json"]


def test_upgrade_writes_once_records_the_names_and_keeps_a_backup(tmp_path: Path) -> None:
    path = _write(tmp_path / "settings.json", VERSION_0)
    before = path.read_bytes()
    applied = upgrade_settings_file(path)
    assert applied == tuple(m.name for m in MIGRATIONS)
    raw = orjson.loads(path.read_bytes())
    assert raw["version"] == SETTINGS_VERSION and next(iter(raw)) == "version"
    assert raw["appliedMigrations"] == list(applied)
    assert {k: v for k, v in raw.items() if k not in ("version", "appliedMigrations")} == VERSION_0
    assert (tmp_path / "settings.json.v0.bak").read_bytes() == before
    upgraded = path.read_bytes()
    assert upgrade_settings_file(path) == ()
    assert path.read_bytes() == upgraded
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.json", "settings.json.v0.bak"]


def test_a_newer_file_is_read_as_it_is_and_never_written(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    newer = {**VERSION_0, "version": SETTINGS_VERSION + 5, "futureFeature": {"x": 1}}
    path = _write(tmp_path / "settings.json", newer)
    before = path.read_bytes()
    with caplog.at_level(logging.WARNING, logger="desktop.host.settings"):
        settings = load_settings(path)
    assert settings.version == SETTINGS_VERSION + 5
    assert settings.permissions.mode == "accept-edits"
    assert "newer than this build" in caplog.text
    assert upgrade_settings_file(path) == ()
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.json"]


def test_a_missing_file_reads_as_defaults_and_is_not_created(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    assert upgrade_settings_file(path) == () and load_settings(path) == Settings()
    assert list(tmp_path.iterdir()) == []
    path.write_text("{not json")
    with pytest.raises(SettingsError, match=r"settings\.json: not readable as JSON"):
        load_settings(path)


@pytest.mark.parametrize("value", ["2", -1, 1.5, True, None])
def test_a_bad_version_names_the_file_and_the_field(tmp_path: Path, value: object) -> None:
    path = _write(tmp_path / "settings.json", {"version": value})
    with pytest.raises(SettingsError, match=r"settings\.json: version: must be a whole number"):
        load_settings(path)
    with pytest.raises(SettingsError, match="version"):
        upgrade_settings_file(path)


def test_migrations_run_in_order_each_once_from_where_the_file_stands() -> None:
    calls: list[str] = []

    def step(name: str, key: str) -> Migration:
        source = len(chain)

        def apply(raw: dict[str, Any]) -> dict[str, Any]:
            calls.append(name)
            return {**raw, key: source}

        return Migration(source, name, apply)

    chain: list[Migration] = []
    for name, key in (("first", "a"), ("second", "b"), ("third", "c")):
        chain.append(step(name, key))

    done = migrate({"version": 1, "appliedMigrations": ["first"], "x": 0}, chain, current=3)
    assert calls == ["second", "third"] and done.applied == ("second", "third")
    assert done.raw == {
        "version": 3,
        "x": 0,
        "b": 1,
        "c": 2,
        "appliedMigrations": ["first", "second", "third"],
    }

    calls.clear()
    again = migrate(done.raw, chain, current=3)
    assert calls == [] and again.applied == () and again.raw == done.raw


def test_a_renaming_migration_changes_what_the_settings_say() -> None:
    """The mechanism carries real shape changes, not just the version stamp."""

    def rename_mode(raw: dict[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in raw.items() if k != "mode"}
        out["permissions"] = {"mode": raw["mode"]}
        return out

    done = migrate({"mode": "read-only"}, [Migration(0, "move_mode_under_permissions", rename_mode)], 1)
    assert done.raw == {
        "version": 1,
        "permissions": {"mode": "read-only"},
        "appliedMigrations": ["move_mode_under_permissions"],
    }


def test_the_window_upgrades_the_file_once_at_start(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    from desktop.host.first_run import OFFLINE_ENV

    data = tmp_path / "data"
    data.mkdir()
    _write(data / "settings.json", VERSION_0)
    repo = Path(__file__).resolve().parents[2]
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "PI_DESKTOP_SMOKE_EXIT": "1",
        "PI_DESKTOP_DATA_DIR": str(data),
        OFFLINE_ENV: "1",
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(repo), os.environ.get("PYTHONPATH")])),
    }
    run = subprocess.run(
        [sys.executable, "-c", "from desktop.app import gui_main; raise SystemExit(gui_main())"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    raw = orjson.loads((data / "settings.json").read_bytes())
    assert raw["version"] == SETTINGS_VERSION and raw["appliedMigrations"] == [m.name for m in MIGRATIONS]
    assert (data / "settings.json.v0.bak").exists()
