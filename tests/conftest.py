"""Shared test setup: offscreen Qt and a private data dir so no test touches the real home."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import keyring.backends.fail
import pytest

from tests.keyrings import MemoryKeyring, using

if TYPE_CHECKING:
    from desktop.emulator import Emulator

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Tests never touch the user's real keyring (the installation secret and API keys live there);
# a test that needs one installs the in-process backend (the ``memory_keyring`` fixture). Child
# processes inherit this through the environment.
os.environ.setdefault("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")


@pytest.fixture(autouse=True)
def _private_data_dir(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    path = tmp_path_factory.mktemp("pi-desktop-data")
    monkeypatch.setenv("PI_DESKTOP_DATA_DIR", str(path))
    yield path


@pytest.fixture
def emulator() -> Iterator[Emulator]:
    """The offline provider emulator on loopback, for one test."""
    from desktop.emulator import Emulator

    with Emulator() as emu:
        yield emu


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    """A keyring that keeps its entries in this process."""
    backend = MemoryKeyring()
    with using(backend):
        yield backend


@pytest.fixture
def no_keyring() -> Iterator[None]:
    """The placeholder backend that refuses everything."""
    with using(keyring.backends.fail.Keyring()):
        yield
