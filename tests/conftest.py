"""Shared test setup: offscreen Qt and a private data dir so no test touches the real home."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Tests never touch the user's real keyring (the installation secret and API keys live there);
# a test that needs one installs the in-process backend (tests/wire/test_accounts.py). Child
# processes inherit this through the environment.
os.environ.setdefault("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")


@pytest.fixture(autouse=True)
def _private_data_dir(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    path = tmp_path_factory.mktemp("pi-desktop-data")
    monkeypatch.setenv("PI_DESKTOP_DATA_DIR", str(path))
    yield path
