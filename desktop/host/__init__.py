"""Host layer: the transcript journal and its writer, locks, permissions and tool execution.

Everything here that touches the disk or runs a process is owned by one worker thread
in the app; nothing here imports Qt widgets.
"""
