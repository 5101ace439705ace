"""Injected misbehaviour, deterministic and scoped to the next N matching requests.

Kinds:

* ``rate_limit`` — HTTP 429 with ``Retry-After: <retry_after>`` seconds and the family's
  error body.
* ``server_error`` — HTTP ``<status>`` (500 by default) with the family's error body.
* ``cut`` — the stream stops after ``after_events`` events and the connection is dropped
  mid-body (the chunked body never completes).
* ``truncate`` — the stream ends cleanly after ``after_events`` events, so the provider's
  terminal event is missing.
* ``malformed`` — event number ``at_event`` carries invalid JSON.
* ``slow_first_byte`` — the response (status line included) is delayed ``delay`` seconds.
* ``slow_stream`` — ``delay`` seconds pass before each streamed event from number
  ``at_event`` on (for cancel tests).

Programmatic use: ``emu.inject(Fault("rate_limit", retry_after=1), times=1)``. Manual use:
the request header ``x-emulator-fault: rate_limit;retry_after=1`` (``;key=value`` pairs).
"""

from __future__ import annotations

from dataclasses import dataclass

KINDS = frozenset(
    {"rate_limit", "server_error", "cut", "truncate", "malformed", "slow_first_byte", "slow_stream"}
)
FAULT_HEADER = "x-emulator-fault"


@dataclass(frozen=True)
class Fault:
    kind: str
    retry_after: float = 1.0
    status: int = 500
    after_events: int = 3
    at_event: int = 3
    delay: float = 0.5
    #: Only requests whose path starts with ``/<family>`` match (None: every request).
    family: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(
                f"Unknown emulator fault {self.kind!r}; expected one of {', '.join(sorted(KINDS))}"
            )


def parse_fault_header(value: str) -> Fault:
    """``kind;key=value;...`` as sent in ``x-emulator-fault``."""
    kind, *pairs = [part.strip() for part in value.split(";") if part.strip()]
    fields: dict[str, float | int] = {}
    for pair in pairs:
        key, _, raw = pair.partition("=")
        key = key.strip()
        if key in ("status", "after_events", "at_event"):
            fields[key] = int(raw)
        elif key in ("retry_after", "delay"):
            fields[key] = float(raw)
        else:
            raise ValueError(f"Unknown fault parameter {key!r} in {FAULT_HEADER}: {value!r}")
    return Fault(kind, **fields)  # type: ignore[arg-type]
