"""The hash-pinned lock the bundles workflow installs from is complete, exact and index-free.

``pip install --require-hashes -r requirements/bundle.lock`` refuses anything not pinned to one
version with its hashes, so a bundle is built from the same bytes on every runner. The lock
names no index (pip's own configuration decides where packages come from) and must keep up
with pyproject.toml: every runtime dependency and PyInstaller, each at a version pyproject
allows.
"""

from __future__ import annotations

import re
import tomllib

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging_support import REPO

LOCK = REPO / "requirements" / "bundle.lock"
PIN = re.compile(r"^([A-Za-z0-9._-]+)==([^\s;\\]+)")


def pins() -> dict[str, tuple[str, list[str]]]:
    """name -> (version, hashes) of every requirement in the lock."""
    found: dict[str, tuple[str, list[str]]] = {}
    current = ""
    for line in LOCK.read_text(encoding="utf-8").splitlines():
        match = PIN.match(line)
        if match:
            current = canonicalize_name(match.group(1))
            found[current] = (match.group(2), [])
        elif line.strip().startswith("--hash=sha256:"):
            found[current][1].append(line.strip().removeprefix("--hash=sha256:").rstrip(" \\"))
    return found


def test_every_requirement_is_one_version_with_hashes() -> None:
    lines = [
        line
        for line in LOCK.read_text(encoding="utf-8").splitlines()
        if line and not line.startswith((" ", "#"))
    ]
    assert lines and all(PIN.match(line) for line in lines), [line for line in lines if not PIN.match(line)]
    for name, (_version, hashes) in pins().items():
        assert hashes and all(re.fullmatch(r"[0-9a-f]{64}", h) for h in hashes), name


def test_the_lock_names_no_index_and_no_host() -> None:
    text = LOCK.read_text(encoding="utf-8")
    for option in ("--index-url", "--extra-index-url", "--find-links", "--trusted-host", "-i ", "-f "):
        assert option not in text
    assert "://" not in text


def test_the_lock_covers_pyproject_at_allowed_versions() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    locked = pins()
    wanted = [Requirement(r) for r in [*project["dependencies"], *project["optional-dependencies"]["bundle"]]]
    for requirement in wanted:
        name = canonicalize_name(requirement.name)
        assert name in locked, f"{requirement} is not in {LOCK.name}: regenerate it (its header says how)"
        version = locked[name][0]
        assert requirement.specifier.contains(version, prereleases=True), (
            f"{name}=={version} vs {requirement}"
        )
