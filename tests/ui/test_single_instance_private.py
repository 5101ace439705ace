"""The single-instance socket lives in a private folder (design X21).

The attacker here is another local user: the socket's name is computable (a hash of the user
name and the data folder), so they listen on it first, in every place a launch could look,
and wait for a launch to hand over its paths. The squatter is a real process with real Unix
sockets; the victim is the real launcher code.
"""

from __future__ import annotations

import getpass
import hashlib
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from desktop.ui.single_instance import (
    InstanceServer,
    claim_or_hand_over,
    hand_over_early,
    server_name,
)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="Unix sockets and modes")

SQUATTER = """
import socket, sys
from pathlib import Path
listeners = []
for path in sys.argv[2:]:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.listen(8)
    s.settimeout(0.2)
    listeners.append(s)
print("ready", flush=True)
log = Path(sys.argv[1])
while True:
    for s in listeners:
        try:
            conn, _ = s.accept()
        except (TimeoutError, OSError):
            continue
        conn.settimeout(5)
        data = conn.recv(65536)
        with log.open("ab") as out:
            out.write(data)
        conn.sendall(b"ok\\n")
        conn.close()
"""


def _leaf(data_dir: Path) -> str:
    """What anyone can compute from a user name and a data folder."""
    folder = os.path.normcase(str(data_dir.absolute()))
    return "pi-desktop-" + hashlib.sha256(f"{getpass.getuser()}\0{folder}".encode()).hexdigest()[:24]


@pytest.fixture
def temp_root(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh temporary folder with a short path (a Unix socket path has about 100 bytes)."""
    root = Path(tempfile.mkdtemp(prefix="pd-", dir="/tmp"))
    monkeypatch.setenv("TMPDIR", str(root))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def _start_squatter(paths: list[Path], log: Path) -> subprocess.Popen[str]:
    running = subprocess.Popen(
        [sys.executable, "-c", SQUATTER, str(log), *map(str, paths)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert running.stdout is not None and running.stdout.readline().strip() == "ready"
    return running


def test_a_squatted_socket_folder_is_refused_and_receives_nothing(
    qtbot: QtBot, temp_root: Path, tmp_path: Path
) -> None:
    """Before: the socket was ``$TMPDIR/pi-desktop-<hash>``; the squatter's socket there
    answered ``ok``, took the path and the launch would have exited 0 with no window."""
    data_dir = tmp_path / "data"
    leaf = _leaf(data_dir)
    squatted = temp_root / f"pi-desktop-{os.getuid()}"
    squatted.mkdir()
    squatted.chmod(0o777)  # made first by someone else, open to all
    log = tmp_path / "stolen"
    log.touch()
    running = _start_squatter([temp_root / leaf, squatted / leaf], log)
    try:
        assert hand_over_early(data_dir, [str(tmp_path / "secret-project.jsonl")]) is False
        assert server_name(data_dir) is None
        server = claim_or_hand_over(server_name(data_dir), [str(tmp_path / "secret-project.jsonl")])
        assert server is not None and not server.server.isListening()
    finally:
        running.kill()
        running.wait(timeout=30)
    assert log.read_bytes() == b""
    assert stat.S_IMODE(squatted.stat().st_mode) == 0o777  # refused, not repaired


def test_a_runtime_folder_open_to_others_is_not_used(
    qtbot: QtBot, temp_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "runtime"
    shared.mkdir()
    shared.chmod(0o755)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(shared))
    name = server_name(tmp_path / "data")
    assert name is not None
    folder = Path(name).parent
    assert folder == temp_root / f"pi-desktop-{os.getuid()}"
    info = os.lstat(folder)
    assert stat.S_IMODE(info.st_mode) == 0o700 and info.st_uid == os.getuid()


def test_a_private_runtime_folder_carries_the_handover(
    qtbot: QtBot, temp_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = temp_root / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    name = server_name(tmp_path / "data")
    assert name is not None and Path(name).parent == runtime
    server = InstanceServer(name)
    assert server.listen()
    received: list[object] = []
    server.open_requested.connect(received.append)
    try:
        # The running window answers from its event loop; the second launch is a process.
        script = (
            "import sys; from PySide6.QtCore import QCoreApplication; app = QCoreApplication([]);"
            "from desktop.ui.single_instance import hand_over;"
            "sys.exit(0 if hand_over(sys.argv[1], ['/x/a.jsonl']) else 3)"
        )
        launch = subprocess.Popen([sys.executable, "-c", script, name], env={**os.environ})
        qtbot.waitUntil(lambda: launch.poll() is not None, timeout=60_000)
        assert launch.returncode == 0
        assert received == [["/x/a.jsonl"]]
    finally:
        server.close()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown needs root")
def test_a_folder_another_user_made_first_is_refused_even_when_it_is_0700(
    qtbot: QtBot, temp_root: Path, tmp_path: Path
) -> None:
    """Mode alone is not enough: a 0700 folder of someone else's is theirs to read."""
    squatted = temp_root / f"pi-desktop-{os.getuid()}"
    squatted.mkdir(mode=0o700)
    os.chown(squatted, 65534, 65534)
    assert server_name(tmp_path / "data") is None
    assert os.lstat(squatted).st_uid == 65534  # refused, left as it is
