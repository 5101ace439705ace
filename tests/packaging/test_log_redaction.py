"""The log file rotates under the log dir and never holds an API key."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from logging.handlers import RotatingFileHandler
from pathlib import Path

import pytest

from desktop.host.logging_setup import (
    LOG_FILE_NAME,
    RedactSecretsFilter,
    configure_logging,
    logs_location,
    redact,
)
from desktop.host.paths import log_dir
from desktop.host.redaction import REDACTED

ANTHROPIC = "sk-ant-api03-" + "A1b2C3d4E5f6G7h8I9j0" * 4
OPENAI = "sk-proj-" + "Zz09_-Yy8Xx7" * 5
DEEPSEEK = "sk-" + "0123456789abcdef" * 2
GOOGLE = "AIzaSyD" + "x" * 32
OPAQUE = "opaque-token-without-a-known-shape-42"


@pytest.fixture
def root_logger() -> Iterator[logging.Logger]:
    root = logging.getLogger()
    before, level = list(root.handlers), root.level
    yield root
    for handler in root.handlers:
        if handler not in before:
            root.removeHandler(handler)
            handler.close()
    root.setLevel(level)


@pytest.mark.parametrize("secret", [ANTHROPIC, OPENAI, DEEPSEEK, GOOGLE])
def test_known_key_shapes_are_redacted(secret: str) -> None:
    out = redact(f"calling with key {secret} now")
    assert secret not in out and secret[8:20] not in out
    assert out == f"calling with key {REDACTED} now"


@pytest.mark.parametrize(
    "text",
    [
        f"Authorization: Bearer {OPAQUE}",
        f"{{'authorization': 'Bearer {OPAQUE}', 'accept': 'text/event-stream'}}",
        f'{{"x-api-key": "{OPAQUE}", "anthropic-version": "2023-06-01"}}',
        f"x-goog-api-key={OPAQUE}",
        f"https://example.test/v1?key=1&api_key={OPAQUE}&alt=sse",
        f"headers=[('X-Api-Key', '{OPAQUE}')]",
    ],
)
def test_credential_header_values_are_redacted(text: str) -> None:
    out = redact(text)
    assert OPAQUE not in out
    assert REDACTED in out


@pytest.mark.parametrize(
    "text",
    [
        f"Authorization: Bearer {OPAQUE}",
        f"{{'authorization': 'Bearer {OPAQUE}', 'x-api-key': '{DEEPSEEK}'}}",
        f"OPENAI_API_KEY={OPENAI} GEMINI key {GOOGLE}",
    ],
)
def test_redaction_is_idempotent(text: str) -> None:
    """The formatter re-scans text the filter already cleaned; it must not mangle it."""
    once = redact(text)
    assert redact(once) == once
    assert "]]" not in once


def test_ordinary_text_is_left_alone() -> None:
    text = "model=claude-sonnet-4-5 tokens=1234 skip-list ask-user task-7 AIza"
    assert redact(text) == text
    assert redact("Authorization failed: 401") != ""  # the word alone is not a header value


def test_bearer_scheme_is_kept_for_readability() -> None:
    assert redact(f"Authorization: Bearer {OPAQUE}") == f"Authorization: Bearer {REDACTED}"


def test_filter_rewrites_formatted_arguments() -> None:
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "key=%s header=%r", (OPENAI, ANTHROPIC), None)
    assert RedactSecretsFilter().filter(record) is True
    assert OPENAI not in record.getMessage() and ANTHROPIC not in record.getMessage()
    assert record.getMessage().count(REDACTED) == 2


def test_log_file_under_the_log_dir_has_no_keys(root_logger: logging.Logger) -> None:
    path = configure_logging()
    assert path == log_dir() / LOG_FILE_NAME
    assert configure_logging() == path
    assert sum(isinstance(h, RotatingFileHandler) for h in root_logger.handlers) == 1

    log = logging.getLogger("desktop.test")
    log.info("request headers %s", {"authorization": f"Bearer {OPAQUE}", "x-api-key": DEEPSEEK})
    log.warning("google key %s in url", GOOGLE)
    try:
        raise ValueError(f"provider rejected key {ANTHROPIC}")
    except ValueError:
        log.exception("call failed")
    for handler in root_logger.handlers:
        handler.flush()

    text = path.read_text(encoding="utf-8")
    for secret in (OPAQUE, DEEPSEEK, GOOGLE, ANTHROPIC):
        assert secret not in text
    assert "request headers" in text and "Traceback" in text and "ValueError" in text
    assert text.count(REDACTED) == 4  # two headers, the Google key, the exception message


def test_the_file_handler_rotates(root_logger: logging.Logger, tmp_path: Path) -> None:
    configure_logging(tmp_path)
    handler = next(h for h in root_logger.handlers if isinstance(h, RotatingFileHandler))
    assert handler.maxBytes > 0 and handler.backupCount >= 1
    handler.maxBytes = 2000  # a real rollover, without writing megabytes
    for i in range(100):
        logging.getLogger("desktop.test").info("line %d %s", i, "x" * 40)
    handler.flush()
    assert (tmp_path / f"{LOG_FILE_NAME}.1").is_file()


def test_show_logs_location_exists_under_the_data_dir(_private_data_dir: Path) -> None:
    folder = logs_location()
    assert folder.is_dir() and folder == _private_data_dir / "logs"
