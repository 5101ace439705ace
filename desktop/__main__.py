"""Allow ``python -m desktop``."""

from desktop.app import main

raise SystemExit(main())
