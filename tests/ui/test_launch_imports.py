"""What the window's launch loads before its first paint (design X27, X28), in a fresh process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# ``open_window``'s order: PySide's hook made cheap first, then the window's modules.
_LAUNCH = """
import json, linecache, sys
from desktop.ui.pyside_features import skip_source_scan
skipped = skip_source_scan()
import desktop.ui.launch
features = sys.modules["shibokensupport.feature"].pyside_feature_dict
print(json.dumps({
    "skipped": skipped,
    "keyring": "keyring" in sys.modules,
    "sources_read": sorted(name for name in linecache.cache if name.endswith(".py")),
    "app_sources_read": sorted(name for name in linecache.cache if "/desktop/" in name),
    "main_window": features.get("desktop.ui.main_window"),
    "paths": features.get("desktop.host.paths"),
}))
"""


def test_the_window_modules_load_without_the_keyring_or_any_module_source() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run(
        [sys.executable, "-c", _LAUNCH], capture_output=True, text=True, env=env, check=True, timeout=120
    )
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert found["skipped"] is True
    # The keyring (and the HTTP and e-mail modules it loads) waits for the worker, after the paint.
    assert found["keyring"] is False
    # PySide's hook read no module's source file, so linecache holds none of the app's (and at
    # most the two or three the standard library itself reads, not the four hundred imported).
    assert found["app_sources_read"] == []
    assert len(found["sources_read"]) < 5  # type: ignore[arg-type]
    # Its answer is the scan's: a Qt module is marked as using PySide, another is ignored.
    assert found["main_window"] == 0
    assert found["paths"] == -1
