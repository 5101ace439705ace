"""Session files get their own file type by content, and no other JSON Lines file is claimed (design G8).

The real freedesktop tools decide: ``update-mime-database`` compiles the package the installer
wrote under a redirected ``XDG_DATA_HOME``, and ``xdg-mime query filetype`` (through GIO, as on a
GNOME desktop) names each file's type. The session file is written by the real journal writer.
"""

from __future__ import annotations

import os
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from packaging_support import REPO, read_desktop_entry, require_tool, write_console_script

from desktop.host.desktop_entry import (
    MIME_FILE_NAME,
    SESSION_APP_MARKER,
    SESSION_HEADER_START,
    SESSION_MIME_TYPE,
    install_desktop_entry,
    render_mime_package,
    uninstall_desktop_entry,
)
from desktop.host.journal.writer import JournalWriter
from desktop.identity import GUI_COMMAND

COMMITTED = REPO / "packaging" / "linux" / MIME_FILE_NAME
NS = {"m": "http://www.freedesktop.org/standards/shared-mime-info"}


def _session(path: Path, cwd: Path) -> Path:
    JournalWriter.create(path, cwd=cwd, app_version="0.1.0").close()
    return path


def test_committed_mime_package_is_what_the_installer_writes() -> None:
    assert COMMITTED.read_text(encoding="utf-8") == render_mime_package()


def test_the_package_has_no_glob_and_matches_the_journal_header(tmp_path: Path) -> None:
    root = ET.fromstring(render_mime_package())
    kind = root.find("m:mime-type", NS)
    assert kind is not None and kind.get("type") == SESSION_MIME_TYPE
    assert kind.find("m:glob", NS) is None, "a *.jsonl glob would claim every JSON Lines file"
    outer = kind.find("m:magic/m:match", NS)
    assert outer is not None and outer.get("value") == SESSION_HEADER_START and outer.get("offset") == "0"
    inner = outer.find("m:match", NS)
    assert inner is not None and inner.get("value") == SESSION_APP_MARKER
    start, end = (int(n) for n in (inner.get("offset") or "").split(":"))
    # A session written with a long working directory still matches: the marker comes before cwd.
    first = _session(tmp_path / "s.jsonl", tmp_path / ("deep" * 60)).read_bytes()
    assert first.startswith(SESSION_HEADER_START.encode())
    assert start <= first.index(SESSION_APP_MARKER.encode()) <= end


def _gui(tmp_path: Path) -> Path:
    (tmp_path / "bin").mkdir()
    return write_console_script(tmp_path / "bin" / GUI_COMMAND, "desktop.app:gui_main")


def _query(env: dict[str, str], path: Path) -> str:
    tool = require_tool("xdg-mime", "xdg-utils")
    done = subprocess.run(
        [tool, "query", "filetype", str(path)], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_xdg_mime_names_our_type_for_sessions_only_after_install(tmp_path: Path) -> None:
    require_tool("update-mime-database", "shared-mime-info")
    require_tool("gio", "libglib2.0-bin")
    data_home = tmp_path / "share"
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "XDG_DATA_HOME": str(data_home),
        "XDG_DATA_DIRS": "/usr/local/share:/usr/share",
        "XDG_CURRENT_DESKTOP": "GNOME",  # xdg-mime asks GIO, which reads shared-mime-info
    }
    files = tmp_path / "files"
    files.mkdir()
    session = _session(files / "my session.jsonl", tmp_path)
    renamed = files / "session-without-extension"
    renamed.write_bytes(session.read_bytes())
    plain = files / "events.jsonl"
    plain.write_text('{"type":"event","v":1}\n{"type":"event","v":2}\n', encoding="utf-8")
    lookalike = files / "other-app.jsonl"
    lookalike.write_text('{"type":"session","v":1,"id":"x","app":"someone-else"}\n', encoding="utf-8")
    pi_session = files / "pi.jsonl"
    pi_session.write_text('{"type":"session","version":3,"id":"x","cwd":"/"}\n', encoding="utf-8")

    assert _query(env, session) != SESSION_MIME_TYPE

    gui = _gui(tmp_path)
    result = install_desktop_entry(data_home, gui)
    assert result.notes == ()
    assert SESSION_MIME_TYPE in read_desktop_entry(result.desktop_file)["MimeType"].split(";")
    assert _query(env, session) == SESSION_MIME_TYPE
    assert _query(env, renamed) == SESSION_MIME_TYPE
    for other in (plain, lookalike, pi_session):
        assert _query(env, other) != SESSION_MIME_TYPE, other.name
    cache = (data_home / "applications" / "mimeinfo.cache").read_text(encoding="utf-8")
    assert f"{SESSION_MIME_TYPE}={result.desktop_file.name};" in cache

    uninstall_desktop_entry(data_home)
    assert _query(env, session) != SESSION_MIME_TYPE


def test_missing_database_tools_are_a_note_not_a_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    gui = _gui(tmp_path)
    result = install_desktop_entry(tmp_path / "share", gui)
    assert result.mime_file.read_text(encoding="utf-8") == render_mime_package()
    assert [note.split()[0] for note in result.notes] == ["update-mime-database", "update-desktop-database"]
    assert all("not installed" in note for note in result.notes)
