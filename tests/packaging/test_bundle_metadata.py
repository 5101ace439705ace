"""The Windows and macOS bundle metadata, checked as data (those bundles build on their own CI runners).

The macOS ``Info.plist`` entries must name the app id and declare the session document type
without claiming every ``.jsonl``; the Windows version resource, generated from the package
version, must be what PyInstaller's own version-resource code reads (its binary encoding is
Windows-only; the Windows job of the bundles workflow checks the built executable's version).
"""

from __future__ import annotations

import importlib.util
import plistlib
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from packaging_support import REPO

from desktop import __version__
from desktop.host.desktop_entry import SESSION_MIME_TYPE
from desktop.identity import APP_ID, DISPLAY_NAME

SPEC_DIR = REPO / "packaging" / "pyinstaller"


def _load(name: str = "bundle_metadata") -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, SPEC_DIR / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


META = _load()


def test_the_spec_takes_its_metadata_from_this_module() -> None:
    spec = (SPEC_DIR / "pi-desktop.spec").read_text(encoding="utf-8")
    assert "info_plist=bundle_metadata.info_plist(__version__)" in spec
    assert "bundle_metadata.write_windows_version_file(__version__" in spec
    assert "version=version_file" in spec


@pytest.mark.parametrize(
    ("version", "numbers"),
    [("0.1.0", (0, 1, 0, 0)), ("1.2", (1, 2, 0, 0)), ("2.10.3.7", (2, 10, 3, 7)), ("1.4.0rc1", (1, 4, 0, 0))],
)
def test_version_numbers(version: str, numbers: tuple[int, ...]) -> None:
    assert META.version_numbers(version) == numbers


@pytest.mark.parametrize("version", ["dev", "1.70000.0"])
def test_versions_windows_cannot_store_are_refused(version: str) -> None:
    with pytest.raises(ValueError, match=version.replace(".", r"\.")):
        META.version_numbers(version)


def test_info_plist_names_the_app_and_round_trips_as_a_plist() -> None:
    plist: dict[str, Any] = plistlib.loads(plistlib.dumps(META.info_plist(__version__)))
    assert plist["CFBundleIdentifier"] == APP_ID
    assert plist["CFBundleName"] == plist["CFBundleDisplayName"] == DISPLAY_NAME
    assert plist["CFBundleShortVersionString"] == plist["CFBundleVersion"] == "0.1.0" == __version__
    assert plist["NSHighResolutionCapable"] is True


def test_sessions_are_a_document_type_and_plain_jsonl_only_an_alternate() -> None:
    plist = META.info_plist(__version__)
    documents = {tuple(d["LSItemContentTypes"]): d for d in plist["CFBundleDocumentTypes"]}
    assert documents[(META.SESSION_UTI,)]["LSHandlerRank"] == "Owner"
    # Pi Desktop can open JSON Lines files, but never becomes their default application.
    assert documents[(META.JSONL_UTI,)]["LSHandlerRank"] == "Alternate"

    (exported,) = plist["UTExportedTypeDeclarations"]
    assert exported["UTTypeIdentifier"] == META.SESSION_UTI and META.SESSION_UTI.startswith(APP_ID)
    assert exported["UTTypeTagSpecification"] == {"public.mime-type": [SESSION_MIME_TYPE]}
    assert META.JSONL_UTI in exported["UTTypeConformsTo"]

    (imported,) = plist["UTImportedTypeDeclarations"]
    assert imported["UTTypeIdentifier"] == META.JSONL_UTI
    assert imported["UTTypeTagSpecification"]["public.filename-extension"] == ["jsonl"]
    declared = {t["UTTypeIdentifier"] for t in [*plist["UTExportedTypeDeclarations"], imported]}
    assert {u for d in plist["CFBundleDocumentTypes"] for u in d["LSItemContentTypes"]} <= declared


@pytest.fixture
def versioninfo(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """PyInstaller's own version-resource module. It imports ``pefile`` and ``win32api`` (Windows-only)
    for reading and writing executables, which the text parsing and encoding never use."""
    import PyInstaller.compat

    monkeypatch.setitem(sys.modules, "pefile", sys.modules.get("pefile") or types.ModuleType("pefile"))
    monkeypatch.setattr(
        PyInstaller.compat, "win32api", getattr(PyInstaller.compat, "win32api", None), raising=False
    )
    sys.modules.pop("PyInstaller.utils.win32.versioninfo", None)
    from PyInstaller.utils.win32 import versioninfo as module

    return module


def test_windows_version_resource_is_what_pyinstaller_reads(
    tmp_path: Path, versioninfo: types.ModuleType
) -> None:
    path = META.write_windows_version_file("2.5.1", tmp_path / "build")
    decoded = versioninfo.load_version_info_from_text_file(str(path))
    assert isinstance(decoded.ffi, versioninfo.FixedFileInfo)
    assert decoded.ffi.fileVersionMS == (2 << 16) | 5 and decoded.ffi.fileVersionLS == 1 << 16
    assert decoded.ffi.productVersionMS == (2 << 16) | 5
    (table,) = next(kid for kid in decoded.kids if kid.name == "StringFileInfo").kids
    strings = {entry.name: entry.val for entry in table.kids}
    assert strings["ProductName"] == DISPLAY_NAME
    assert strings["FileVersion"] == strings["ProductVersion"] == "2.5.1"
    assert strings["OriginalFilename"] == "pi-desktop.exe"


def test_a_broken_version_text_is_refused(tmp_path: Path, versioninfo: types.ModuleType) -> None:
    """The check above can fail: PyInstaller refuses text that is not a version resource."""
    path = tmp_path / "version_info.txt"
    path.write_text(META.windows_version_info("1.0.0").replace("VSVersionInfo(", "VSVersionInfo(("), "utf-8")
    with pytest.raises(ValueError, match="VSVersionInfo"):
        versioninfo.load_version_info_from_text_file(str(path))


def test_the_workflow_bundle_check_reads_a_real_info_plist(tmp_path: Path) -> None:
    checker = _load("check_bundle")

    contents = tmp_path / "dist" / f"{DISPLAY_NAME}.app" / "Contents"
    (contents / "MacOS").mkdir(parents=True)
    (contents / "MacOS" / "pi-desktop").write_bytes(b"")
    plist = {**META.info_plist(__version__), "CFBundleExecutable": "pi-desktop"}
    (contents / "Info.plist").write_bytes(plistlib.dumps(plist))
    assert checker.check(tmp_path / "dist", "darwin") == []

    plist["CFBundleDocumentTypes"][1]["LSHandlerRank"] = "Owner"
    (contents / "Info.plist").write_bytes(plistlib.dumps(plist))
    assert [p.split(":")[0] for p in checker.check(tmp_path / "dist", "darwin")] == [
        "Info.plist CFBundleDocumentTypes"
    ]
    folder = tmp_path / "dist" / "pi-desktop"
    assert checker.check(tmp_path / "dist", "win32") == [
        f"{folder / 'pi-desktop.exe'} is missing",
        f"{folder / 'pi-desktop-cli.exe'} is missing",  # the headless commands need a console
    ]
    folder.mkdir()
    (folder / "pi-desktop.exe").write_bytes(b"")
    assert checker.check(tmp_path / "dist", "win32") == [f"{folder / 'pi-desktop-cli.exe'} is missing"]
