"""The app's log file: rotating, under the platform's log dir, and never holding an API key.

A double-clicked app has no terminal, so the log file is the only place a failure leaves a
trace; users attach it to bug reports, which is why keys are scrubbed before anything is
written (design D3: keys never in files or logs). Redaction runs twice: a filter rewrites each
record's message (so any handler it is attached to is safe), and the formatter scrubs the
final text again, which also covers tracebacks and exception messages.
"""

from __future__ import annotations

import io
import logging
import os
from logging.handlers import RotatingFileHandler
from pathlib import Path
from typing import Final

from desktop.host.paths import log_dir
from desktop.host.private_files import make_private_dirs, open_private_append
from desktop.host.redaction import redact_text

LOG_FILE_NAME: Final = "pi-desktop.log"
MAX_BYTES: Final = 2 * 1024 * 1024
BACKUP_COUNT: Final = 5
_HANDLER_NAME: Final = "pi-desktop-file"


def redact(text: str) -> str:
    """``text`` with anything that looks like an API key or credential header value replaced."""
    return redact_text(text)


class RedactSecretsFilter(logging.Filter):
    """Rewrites each record's message with keys removed; never drops a record."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a bad %-format: keep the raw parts, scrubbed, rather than lose the line
            message = f"{record.msg!s} {record.args!r}"
        record.msg = redact(message)
        record.args = None
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        return True


class RedactingFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


class PrivateRotatingFileHandler(RotatingFileHandler):
    """Each log file it starts (the first and every one after a rollover) is created 0600,
    not with the umask's mode: logs quote sessions and commands (design X22)."""

    def _open(self) -> io.TextIOWrapper:
        fd = open_private_append(self.baseFilename)
        return open(fd, "a", encoding=self.encoding, errors=self.errors)


def log_file(directory: Path | None = None) -> Path:
    return (directory or log_dir()) / LOG_FILE_NAME


def configure_logging(directory: str | os.PathLike[str] | None = None, level: int = logging.INFO) -> Path:
    """Attach the rotating, redacting file handler to the root logger once; returns the log file."""
    folder = Path(directory) if directory is not None else log_dir()
    make_private_dirs(folder)  # design X22
    path = log_file(folder)
    root = logging.getLogger()
    for handler in list(root.handlers):
        if handler.get_name() == _HANDLER_NAME:
            if Path(getattr(handler, "baseFilename", "")) == path.absolute():
                return path
            root.removeHandler(handler)
            handler.close()
    handler = PrivateRotatingFileHandler(path, maxBytes=MAX_BYTES, backupCount=BACKUP_COUNT, encoding="utf-8")
    handler.set_name(_HANDLER_NAME)
    handler.addFilter(RedactSecretsFilter())
    handler.setFormatter(RedactingFormatter("%(asctime)s %(levelname)s %(name)s [%(process)d]: %(message)s"))
    root.addHandler(handler)
    if root.level == logging.NOTSET or root.level > level:
        root.setLevel(level)
    return path


def logs_location(data_dir_override: str | os.PathLike[str] | None = None) -> Path:
    """The folder a "Show logs" action opens; created so the file manager never shows an error."""
    folder = log_dir(data_dir_override)
    make_private_dirs(folder)  # design X22
    return folder
