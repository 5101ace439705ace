"""A deterministic provider emulator on loopback (design D4): see ``server`` for the paths,
``script`` for the reply conventions, ``cache`` for prompt-cache rules, ``faults`` for
fault injection."""

from desktop.emulator.faults import FAULT_HEADER, Fault
from desktop.emulator.server import BASE_PATHS, Emulator, RecordedRequest

__all__ = ["BASE_PATHS", "FAULT_HEADER", "Emulator", "Fault", "RecordedRequest"]
