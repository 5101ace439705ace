"""A FIFO that tells whether anything opened it, without ever hanging the test.

A hostile text names the FIFO's path. If Qt opens it, the writer (another process, so the
interpreter lock the window holds cannot stop it) is waiting: it touches a flag file and
writes a byte, so the read ends and the test goes on to fail on the flag instead of freezing.
The writer keeps serving opens until the test ends, since Qt may open a path more than once.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

_WRITER = """
import sys, time
fifo, flag = sys.argv[1], sys.argv[2]
while True:
    try:
        with open(fifo, "w") as handle:
            open(flag, "w").close()
            handle.write("x")
    except OSError:
        pass
    time.sleep(0.02)
"""


class FifoProbe:
    def __init__(self, folder: Path, name: str = "probe.png") -> None:
        self.path = folder / name
        os.mkfifo(self.path)
        self._flag = folder / f"{name}.opened"
        self._writer = subprocess.Popen([sys.executable, "-c", _WRITER, str(self.path), str(self._flag)])

    @property
    def opened(self) -> bool:
        """True once anything has opened the FIFO to read it."""
        return self._flag.exists()

    def close(self) -> None:
        self._writer.kill()
        self._writer.wait()
