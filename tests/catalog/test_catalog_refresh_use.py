"""The app uses the catalog refresh it has (design M1, P3): `pi-desktop catalog refresh` against a
loopback server that serves a Pi catalog in which a flag changed, after which the route's
capability status changes and says where the flag came from and how old it is; the window's
start-up refresh runs only when the cache is older than a day."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from desktop.host import catalog_cache
from desktop.host.catalog_cache import cache_path, cache_state, refresh_in_background
from desktop.pi.catalog.transport import SYSTEM_MESSAGES
from tests.catalog.conftest import static_server

REPO = Path(__file__).resolve().parents[2]
MODEL = ("--model", "emulator/anthropic/claude-opus-5-5")


#: The paths the catalog server was asked for.
HITS: list[str] = []


@pytest.fixture
def server(
    pi_doc: dict[str, Any], find_model: Callable[[dict[str, Any], str, str], dict[str, Any]]
) -> Iterator[str]:
    opus = find_model(pi_doc, "anthropic", "claude-opus-5-5")
    assert opus["compat"][SYSTEM_MESSAGES] is True
    opus["compat"][SYSTEM_MESSAGES] = False  # the flag that changed upstream
    pi_doc["generatedAt"] = "2999-01-01T00:00:00Z"
    pi_doc["source"]["version"] = "9.9.9"
    HITS.clear()
    with static_server({"/pi_catalog.json": orjson.dumps(pi_doc)}, HITS) as url:
        yield url


def _cli(home: Path, server: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "PI_DESKTOP_DATA_DIR": str(home / "data"),
        catalog_cache.PI_CATALOG_URL_ENV: f"{server}/pi_catalog.json",
        catalog_cache.MODELS_DEV_URL_ENV: f"{server}/no-models-dev.json",
    }
    return subprocess.run(
        [sys.executable, "-m", "desktop", *args],
        cwd=home,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )


def _flag(info: dict[str, Any]) -> dict[str, Any]:
    flag: dict[str, Any] = next(f for f in info["capability"]["flags"] if f["flag"] == SYSTEM_MESSAGES)
    return flag


def test_refresh_changes_the_capability_status(server: str, tmp_path: Path) -> None:
    assert _cli(tmp_path, server, "prompt", "s.jsonl", *MODEL, "hello").returncode == 0
    before = json.loads(_cli(tmp_path, server, "status", "s.jsonl", *MODEL, "--json").stdout)
    assert before["capability"]["delivery"] == "native system sections"
    assert _flag(before)["value"] is True and "bundled pi_catalog.json" in _flag(before)["from"]
    assert before["catalogs"]["pi"]["origin"] == "bundled snapshot"
    assert HITS == [], "a headless command went to the network on its own"

    refresh = _cli(tmp_path, server, "catalog", "refresh", "--kind", "pi")
    assert refresh.returncode == 0, refresh.stderr
    assert "pi: refreshed from" in refresh.stdout and "9.9.9" in refresh.stdout

    after = json.loads(_cli(tmp_path, server, "status", "s.jsonl", *MODEL, "--json").stdout)
    assert after["capability"]["delivery"] == "folded"
    flag = _flag(after)
    cached = str(cache_path("pi", tmp_path / "data" / "cache"))
    assert flag["value"] is False and "pi-ai 9.9.9" in flag["from"] and cached in flag["from"]
    assert after["catalogs"]["pi"]["origin"] == "refreshed copy"
    assert after["catalogs"]["pi"]["fetchedAt"] and after["catalogs"]["pi"]["age"] == "0 min"


def test_a_failed_refresh_keeps_what_was_there(server: str, tmp_path: Path) -> None:
    out = _cli(tmp_path, server, "catalog", "refresh")
    assert out.returncode == 1
    assert "pi: refreshed from" in out.stdout
    assert "models.dev: could not download" in out.stderr and "stays in use" in out.stderr
    assert not cache_path("models.dev", tmp_path / "data" / "cache").exists()


def test_the_start_up_refresh_runs_only_for_stale_catalogs(
    server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(catalog_cache.PI_CATALOG_URL_ENV, f"{server}/pi_catalog.json")
    monkeypatch.setenv(catalog_cache.MODELS_DEV_URL_ENV, f"{server}/no-models-dev.json")
    thread = refresh_in_background(tmp_path, max_age=24 * 3600)  # nothing cached yet: stale
    assert thread is not None
    thread.join(60)
    path = cache_path("pi", tmp_path)
    assert path.exists() and not cache_state("models.dev", tmp_path).fetched_at  # offline kind kept bundled

    HITS.clear()
    # A fresh Pi copy, and a models.dev copy fetched recently too: nothing to do.
    fresh = cache_path("models.dev", tmp_path)
    fresh.write_bytes(b"{}")
    assert refresh_in_background(tmp_path, max_age=24 * 3600) is None
    old = time.time() - 25 * 3600
    os.utime(path, (old, old))  # 25 hours old: stale
    os.utime(fresh, (old + 2 * 3600, old + 2 * 3600))  # 23 hours old: not stale
    again = refresh_in_background(tmp_path, max_age=24 * 3600)
    assert again is not None
    again.join(60)
    assert HITS == ["/pi_catalog.json"]
    assert time.time() - path.stat().st_mtime < 3600
