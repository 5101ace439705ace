from __future__ import annotations

from collections.abc import Iterator

import pytest

from desktop.emulator import Emulator


@pytest.fixture
def emu() -> Iterator[Emulator]:
    with Emulator() as emulator:
        yield emulator
