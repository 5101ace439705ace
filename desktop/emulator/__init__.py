"""A deterministic provider emulator on loopback (design D4): see ``server`` for the paths,
``script`` for the reply conventions, ``cache`` for prompt-cache rules, ``faults`` for
fault injection."""

from desktop.emulator.faults import Fault
from desktop.emulator.server import BASE_PATHS, Emulator

__all__ = ["BASE_PATHS", "Emulator", "Fault"]
