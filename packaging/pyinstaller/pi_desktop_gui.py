"""PyInstaller's entry script: the frozen app is the double-click GUI, never a console tool."""

from desktop.app import gui_main

raise SystemExit(gui_main())
