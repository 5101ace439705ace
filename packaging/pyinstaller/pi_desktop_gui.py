"""PyInstaller's entry script: the window on a double-click, a headless command when one is named."""

from desktop.app import bundle_main

raise SystemExit(bundle_main())
