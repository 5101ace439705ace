"""What the inspector shows, computed without Qt so the window and the command line share it.

The window's worker thread and the headless commands call the same functions here: which
routes are offered (``routes``), the next request with its exact bytes, the headers the
dispatch sends and the cache break against the previous request (``preview``,
``payload_text``), why the session holds the tool grants it holds (``activation``), and what
each hidden system row changed (``section_diff``) (design G2, G3, G4).
"""
